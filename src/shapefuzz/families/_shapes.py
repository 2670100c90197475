"""Shape helpers shared by the scatter and one_hot families: tensor types, size pools, dynamic-dim
mixes, and collapse/expand reshape steps (each step pure: all collapses or all expansions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

FLOAT_DTYPES = ("f32", "f16")
NP_DTYPES = {"f32": "float32", "f16": "float16", "i32": "int32", "i8": "int8", "i64": "int64"}

# Sizes biased toward 1, primes and just above powers of two; kept small so CPU runs are cheap.
SMALL_SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17)
LARGE_SIZES = (31, 33, 65, 127, 129)

# How the dynamic flags of all a case's dims are drawn; "all_but_one" is the mix of bug class 2.
DYN_MODES = ("none", "all", "all_but_one", "one", "random")


@dataclass(frozen=True)
class Dim:
    size: int
    dyn: bool
    ssa: str | None = None  # the SSA value holding the size at run time (dynamic dims we can name)

    @property
    def text(self) -> str:
        return "?" if self.dyn else str(self.size)


def tensor_type(dims: list[Dim] | list[tuple[int, bool]], elt: str) -> str:
    parts = [d.text if isinstance(d, Dim) else ("?" if d[1] else str(d[0])) for d in dims]
    return "tensor<" + "".join(p + "x" for p in parts) + elt + ">"


def draw_size(draw: Any, large: bool = False) -> int:
    pool = SMALL_SIZES + (LARGE_SIZES if large else ())
    return draw(st.sampled_from(pool))


def draw_dyn_flags(draw: Any, n: int) -> list[bool]:
    """Dynamic flags for n dims, reaching none / all / all-but-one / exactly-one / random mixes."""
    if n == 0:
        return []
    mode = draw(st.sampled_from(DYN_MODES))
    if mode == "none":
        return [False] * n
    if mode == "all":
        return [True] * n
    if mode in ("all_but_one", "one"):
        k = draw(st.integers(0, n - 1))
        return [(i != k) if mode == "all_but_one" else (i == k) for i in range(n)]
    return [draw(st.booleans()) for _ in range(n)]


def dyn_features(flags: list[bool]) -> list[str]:
    n, k = len(flags), sum(flags)
    out = ["dyn:none" if k == 0 else "dyn:all" if k == n else "dyn:mixed"]
    if n >= 2 and k == n - 1:
        out.append("dyn:all-but-one")
    if n >= 2 and k == 1:
        out.append("dyn:one")
    return out


@dataclass(frozen=True)
class Reshape:
    """One tensor.collapse_shape / tensor.expand_shape step, laid out by the template's macro."""

    kind: str  # "collapse" | "expand"
    res: str
    src: str
    src_ty: str
    dst_ty: str
    reassoc: str
    output_shape: tuple[str, ...] = ()


def collapse_step(res: str, src: str, dims: list[Dim], groups: list[list[int]], elt: str) -> tuple[Reshape | None, list[Dim]]:
    """Collapse each group of consecutive source dims into one dim. None when nothing changes."""
    out = []
    for g in groups:
        members = [dims[i] for i in g]
        if len(members) == 1:
            out.append(members[0])
        else:
            size = 1
            for m in members:
                size *= m.size
            out.append(Dim(size, any(m.dyn for m in members)))
    if all(len(g) == 1 for g in groups):
        return None, dims
    reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    return Reshape("collapse", res, src, tensor_type(dims, elt), tensor_type(out, elt), reassoc), out


def expand_step(res: str, src: str, dims: list[Dim], target: list[Dim | int], elt: str) -> tuple[Reshape | None, list[Dim]]:
    """Expand to `target`: an int i there stands for source dim i, a Dim for a new dim (a unit dim,
    or a split of one source dim when several Dims follow one source index; see `split_step`).
    New unit dims join the group of the nearest preceding source dim (or the following one)."""
    out = [dims[t] if isinstance(t, int) else t for t in target]
    if len(out) == len(dims):
        return None, dims
    owner: list[int] = []
    last = None
    for t in target:
        if isinstance(t, int):
            last = t
        owner.append(last if last is not None else -1)
    first_src = next((t for t in target if isinstance(t, int)), None)
    owner = [first_src if o == -1 else o for o in owner]
    groups = [[j for j, o in enumerate(owner) if o == i] for i in range(len(dims))]
    reassoc = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    shape = tuple(d.ssa if d.dyn else str(d.size) for d in out)
    assert all(s is not None for s in shape), "every dynamic dim of an expand target needs an SSA size"
    return Reshape("expand", res, src, tensor_type(dims, elt), tensor_type(out, elt), reassoc, shape), out


def split_step(res: str, src: str, dims: list[Dim], groups: list[list[Dim]], elt: str) -> Reshape:
    """Expand source dim i into the dims `groups[i]` (the inverse of a collapse)."""
    out = [d for g in groups for d in g]
    reassoc, j = [], 0
    for g in groups:
        reassoc.append(list(range(j, j + len(g))))
        j += len(g)
    text = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in reassoc) + "]"
    shape = tuple(d.ssa if d.dyn else str(d.size) for d in out)
    assert all(s is not None for s in shape), "every dynamic dim of an expand target needs an SSA size"
    return Reshape("expand", res, src, tensor_type(dims, elt), tensor_type(out, elt), text, shape)
