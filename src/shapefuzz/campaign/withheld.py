"""Forms a campaign leaves out of its draw (`shapefuzz fuzz --without GROUP,...`): to measure what a
group of forms adds (bench/bench_arms.py), or to keep a campaign on the forms one is working on.

A group names release gates (families/gates.py) by what they are about, and lanes: a withheld gate is
closed the way a release that cannot parse its form closes it (the same computation in a form that
stays drawn where the gate has one, else the case is not drawn), and a withheld lane leaves the
default lane set. Groups are the forms issue #45 added for what users report now:

  stablehlo   the StableHLO spellings of every family, and the `intloop` family (StableHLO only)
  operands    the root-operand forms: constant and folded inits, scalar and unranked operands
  quantized   quantized conv (`_q` named ops, the qdq forms), QDQ chains, the torch qdq spellings
  lanes       the CPU lanes the reports name: data tiling with ukernels on haswell, data-tiled conv,
              the conv preprocessing pipelines, the strided-insert conversions, the QDQ twin lane
"""

from __future__ import annotations

from collections.abc import Iterable

from shapefuzz.errors import UsageError
from shapefuzz.families.gates import Closed, Gated

_GATES: dict[str, tuple[str, ...]] = {  # a gate's `what` starts with one of these
    "stablehlo": ("stablehlo spelling",),
    "operands": ("operand ",),
    "quantized": ("form qdq", "torch qdq spelling", "form named _q", "context affine quantization",
                  "context torch quantization"),
    "lanes": (),
}
_FAMILIES: dict[str, tuple[str, ...]] = {"stablehlo": ("intloop",)}
REACH_LANES = tuple(f"llvm-cpu-{suffix}" for suffix in (
    "haswell-data-tiling", "znver4-conv-data-tiling", "conv-channels-last",
    "conv-channels-last-tiled", "conv-filter-channels-last", "transpose-conv", "strided-insert-generic",
    "backward-data-conv", "no-qdq-rewrite"))
GROUPS = tuple(_GATES)


def parse_without(text: str | None) -> tuple[str, ...]:
    """`--without stablehlo,operands` -> ("operands", "stablehlo"); an unknown group is one line."""
    if not text:
        return ()
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in _GATES]
    if unknown or not names:
        raise UsageError(f"--without {text[:60]!r}: choose from {', '.join(GROUPS)} (comma-separated)")
    return tuple(sorted(set(names)))


def withheld_lanes(groups: Iterable[str], lanes: Iterable[str]) -> tuple[str, ...]:
    """`lanes` without those the groups withhold."""
    drop = set(REACH_LANES) if "lanes" in set(groups) else set()
    return tuple(lane for lane in lanes if lane not in drop)


def withhold(gated: Gated, families: Iterable[str], groups: Iterable[str]) -> Gated:
    """`gated` with every gate of the groups closed too, said as withheld."""
    from shapefuzz.families import get_family

    groups = tuple(groups)
    if not groups:
        return gated
    closed = list(gated.closed)
    already = {(c.family, c.what) for c in closed}
    for name in families:
        for group in groups:
            why = f"withheld (--without {group})"
            if name in _FAMILIES.get(group, ()) and (name, "family") not in already:
                closed.append(Closed(name, "family", why, False))
                already.add((name, "family"))
            for gate in get_family(name).release_gates:
                if gate.what.lower().startswith(_GATES[group]) and (name, gate.what) not in already:
                    closed.append(Closed(name, gate.what, why, gate.instead is not None))
                    already.add((name, gate.what))
    return Gated(tuple(closed))


__all__ = ["GROUPS", "REACH_LANES", "parse_without", "withheld_lanes", "withhold"]
