"""The shape vocabulary the families use, for ONNX operands: sizes that are 1, prime, just above
a power of two; `?` mixes (none, all, all but one, one, random); broadcasting (leading dims
dropped, dims set to 1); negative axes."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.common import LARGE_SIZES, SMALL_SIZES, draw_dyn_flags

MAX_ELEMENTS = 1 << 12  # small: the references and a CPU run stay quick
MAX_ELEMENTS_LARGE = 1 << 17  # large (compile-only lanes): most draws over 64 KB
FLOATS = ("f32", "f32", "f32", "f16")
LARGE_FLOOR = 1 << 15  # elements: 128 KB of f32


def size(draw: Any, large: bool = False) -> int:
    return draw(st.sampled_from(LARGE_SIZES if large else SMALL_SIZES))


def shape(draw: Any, rank: int, large: bool = False, min_size: int = 1) -> list[int]:
    dims = [max(min_size, size(draw, large)) for _ in range(rank)]
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    while dims and int(np.prod(dims)) > cap:
        i = int(np.argmax(dims))
        dims[i] = max(min_size, dims[i] // 2)
    while large and dims and int(np.prod(dims)) < LARGE_FLOOR:  # a low rank is large too: its last dim grows
        dims[-1] = 2 * dims[-1] + 1
    return dims


def dyn(draw: Any, n: int) -> list[bool]:
    return draw_dyn_flags(draw, n)


def axis(draw: Any, rank: int) -> int:
    """An axis in [-rank, rank - 1]: negative as often as not."""
    a = draw(st.integers(0, rank - 1))
    return a - rank if draw(st.booleans()) else a


def pick(draw: Any, choices: Sequence[Any]) -> Any:
    return draw(st.sampled_from(tuple(choices)))


def float_type(draw: Any, allowed: Sequence[str]) -> str:
    usable = [t for t in FLOATS if t in allowed]
    return pick(draw, usable or list(allowed))


def broadcast(draw: Any, full: Sequence[int], n: int) -> list[list[int]]:
    """`n` shapes that broadcast (numpy rules) to `full`: the first is `full` itself or, as
    often, another one is; the others drop leading dims and set dims to 1."""
    out = []
    keep = draw(st.integers(0, n - 1))
    for i in range(n):
        if i == keep:
            out.append(list(full))
            continue
        start = draw(st.integers(0, len(full)))
        dims = [1 if draw(st.integers(0, 3)) == 0 else d for d in full[start:]]
        out.append(dims)
    return out
