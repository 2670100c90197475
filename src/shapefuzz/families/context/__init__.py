"""A family's root op drawn inside a producer/consumer chain (issue #33).

- `chain`: the value a case header carries (`ContextOp`, its JSON, structural checks);
- `ops`: each context op: its shape rule, its MLIR, its NumPy definition;
- `compose`: the module (the family's own entry renamed `@root`, a new `@main` around it), the
  entry's inputs, the chain's reference and comparison;
- `strategy`: drawing a chain that fits a case's operand and result types;
- `wrap`: `with_context(family)`, the family's hooks with the chain in them (applied by
  `families.get_family`).

This package's `__init__` imports nothing: `families.base` reads `chain` while loading."""
