"""A `linalg.generic` whose operands give one loop two different extents: IR no verifier refuses,
that a later pass trips over (measured on IREE 3.13, the #43 audit's cause-61e1005f0d: a 3-D MaxPool
with ceil_mode over a `?` input, on cuda-sm80. `iree-dispatch-creation-fold-unit-extent-dims` drops
the unit window dim d7 from the input map `d4 + d7`, leaving `d4` shared by an input of 3 and an output of 2;
workgroup tiling takes the loop's range from the input, and the verifier refuses the
`tensor.parallel_insert_slice` only after `iree-codegen-config-tracking-canonicalize` folds its size
to a constant). The pass whose output first holds such an op made the bug, not the one that fails.

Pure text, read from the custom form a dump prints (`linalg.generic {indexing_maps = [...], ...}
ins(%a, %b : tensor<?x3xf32>, f32) outs(%c : tensor<?x2xf32>)`): a map result that is a bare `dK`
ties that operand dim's static size to loop K (a map printed as an alias, `#map1`, is read from the
dump's head)."""

from __future__ import annotations

import re

_GENERIC = re.compile(r"linalg\.generic \{indexing_maps = \[(?P<maps>[^\]]*)\][^\n]*?\}\s*"
                      r"ins\((?P<ins>[^\n]*?)\)\s*outs\((?P<outs>[^\n]*?)\)\s*(?:attrs|\{|->)")
_MAP = re.compile(r"affine_map<\((?P<dims>[^)]*)\)(?:\[[^\]]*\])? -> \((?P<results>[^)]*)\)>")
_MAP_ALIAS = re.compile(r"^(?P<name>#[\w.$-]+) = (?P<map>affine_map<[^\n]*>)\s*$", re.M)  # `#map1 = affine_map<...>`
_SHAPED = re.compile(r"^(?:tensor|memref)<(?P<dims>(?:[0-9?]+x)*)")
_LOOP = re.compile(r"^d(\d+)$")


def _split_top(text: str) -> list[str]:
    """`text` split at its commas outside <>, (), [] and {}."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "<([{"
        depth -= c in ">)]}"
        if c == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return [*parts, tail] if tail else parts


def _types(operands: str) -> list[str]:
    """The operand types of an `ins(...)`/`outs(...)` group (what follows its ` : `)."""
    _, _, types = operands.partition(" : ")
    return _split_top(types) if types else []


def conflicting_extent(text: str) -> str:
    """The first `linalg.generic` in `text` whose operands give one loop two static extents, as said in
    evidence ("loop d4 is 3 for operand 0 (tensor<1x1x1x1x3xf32>) and 2 for operand 1 (...)"), or ""."""
    aliases = {m.group("name"): m.group("map") for m in _MAP_ALIAS.finditer(text)}
    for match in _GENERIC.finditer(text):
        spelled = " ".join(aliases.get(item, item) for item in _split_top(match.group("maps")))
        maps = [m.group("results") for m in _MAP.finditer(spelled)]
        types = [*_types(match.group("ins")), *_types(match.group("outs"))]
        if len(maps) != len(types):
            continue  # a form this reading does not know: say nothing
        seen: dict[int, tuple[int, int, str]] = {}  # loop -> (extent, operand, its type)
        for operand, (results, kind) in enumerate(zip(maps, types)):
            shaped = _SHAPED.match(kind)
            if shaped is None:
                continue  # a scalar operand
            dims = [d for d in shaped.group("dims").split("x") if d]
            exprs = _split_top(results)
            if len(exprs) != len(dims):
                continue
            for expr, dim in zip(exprs, dims):
                loop = _LOOP.match(expr)
                if loop is None or dim == "?":
                    continue
                k, extent = int(loop.group(1)), int(dim)
                first = seen.setdefault(k, (extent, operand, kind))
                if first[0] != extent:
                    return (f"loop d{k} is {first[0]} for operand {first[1]} ({first[2]}) and {extent} for operand "
                            f"{operand} ({kind})")
    return ""


__all__ = ["conflicting_extent"]
