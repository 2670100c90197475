"""Dependencies point one way (STYLE habit 9), in the layers ARCHITECTURE.md's table gives (read
from there, so the notes and this test cannot drift): data types -> toolchain and execution ->
families -> oracle -> corpus -> replay/export/bisect/shrink -> campaign -> CLI. A lower layer
importing a higher one, an import cycle anywhere in the package, or a module reaching into another
module's `_private` names fails here. Imports inside functions count: a lazy import is still a
dependency."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "shapefuzz"


def _layers_from_notes(text: str) -> dict[str, int]:
    """The `## Layers` table: `| 0 | `errors`, `model`, ... | invariant |` -> {"errors": 0, ...}. It places
    top-level modules and packages only: a package's modules share its layer."""
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[str, int] = {}
    for row in re.finditer(r"^\|\s*(\d+)\s*\|([^|]*)\|", section, re.M):
        for name in re.findall(r"`([\w.]+)`", row.group(2)):
            assert name not in layers, f"ARCHITECTURE.md places {name} twice"
            assert "." not in name, f"ARCHITECTURE.md places {name}, a module inside a package: place the package"
            layers[name] = int(row.group(1))
    return layers


# Layer of each top-level module or package (a package's modules share its layer).
LAYERS = _layers_from_notes((ROOT / "ARCHITECTURE.md").read_text())
# A module not placed yet (new work): it may use everything up to the corpus, and nothing placed
# below the campaign may use it. Place it in ARCHITECTURE.md's table when it lands.
DEFAULT_LAYER = 8


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(("shapefuzz",) + parts)] = path
    return found


MODULES = _modules()


def _layer(module: str) -> int:
    parts = module.split(".")[1:]
    if not parts:
        return -1  # the package root holds only __version__
    return LAYERS.get(parts[0], DEFAULT_LAYER)


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imports(module: str, path: Path) -> list[tuple[str, str]]:
    """(imported module, imported name or "") for every import of our own modules, resolved:
    `from shapefuzz.cli import check` imports the module shapefuzz.cli.check."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.split(".")[0] == "shapefuzz"]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = _package_of(module, path).split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.split(".")[0] != "shapefuzz":
                continue
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((sub, "") if sub in MODULES else (base, alias.name))
    return found


def _graph() -> dict[str, set[str]]:
    return {m: {i for i, _ in _imports(m, p) if i in MODULES and i != m and i != "shapefuzz"}
            for m, p in MODULES.items()}


def test_no_module_imports_a_higher_layer():
    violations = []
    for module, imported in _graph().items():
        for other in imported:
            if _layer(other) > _layer(module):
                violations.append(f"{module} (layer {_layer(module)}) imports {other} (layer {_layer(other)})")
    assert not violations, "\n".join(sorted(violations))


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_cycle_between_packages():
    """Rooms (top-level modules and packages) import each other one way too: corpus -> oracle -> execute
    -> triage -> corpus was such a loop, though no module imported itself back."""
    rooms: dict[str, set[str]] = {}
    for module, imported in _graph().items():
        if module == "shapefuzz":
            continue
        rooms.setdefault(module.split(".")[1], set()).update(
            i.split(".")[1] for i in imported if i.split(".")[1] != module.split(".")[1])
    cycles = _cycles(rooms)
    assert not cycles, "package-level loops:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_another_modules_private_names():
    """`_name` is private to its module; a package's `_private` helper modules are for that package."""
    violations = []
    for module, path in MODULES.items():
        for imported, name in _imports(module, path):
            private = any(p.startswith("_") and not p.startswith("__") for p in imported.split("."))
            if private and not module.startswith(imported.rpartition(".")[0] + "."):
                violations.append(f"{module} imports the private module {imported}")
            if name.startswith("_") and not name.startswith("__"):
                violations.append(f"{module} imports {name} from {imported}")
    assert not violations, "\n".join(sorted(violations))


def test_every_module_is_placed_or_knowingly_defaulted():
    tops = {m.split(".")[1] for m in MODULES if m != "shapefuzz"}
    unplaced = sorted(t for t in tops if t not in LAYERS)
    # New modules land through the default layer; keep this list short by placing them.
    assert len(unplaced) <= 3, f"place these modules in LAYERS: {unplaced}"


def test_the_notes_place_the_ground_floor_and_the_top():
    assert LAYERS["model"] == 0 and LAYERS["size"] == 0 and LAYERS["cli"] == max(LAYERS.values())
    assert LAYERS["corpus"] < LAYERS["shrink"] < LAYERS["campaign"]
    assert _layers_from_notes("# x\n## Layers\n| layer | modules |\n|---|---|\n| 2 | `a`, `b` | x |\n## Next\n| 3 | `d` |") \
        == {"a": 2, "b": 2}
    with pytest.raises(AssertionError, match="inside a package"):
        _layers_from_notes("# x\n## Layers\n| 2 | `a`, `b.c` | x |\n")


def test_the_shrink_engine_knows_no_domain():
    """`shrink/engine.py` (acceptance: interesting and smaller) is domain-free: no module of ours."""
    assert _graph()["shapefuzz.shrink.engine"] == set()
