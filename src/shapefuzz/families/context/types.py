"""Tensor types along a chain, and the text emitter the context ops write their MLIR with."""

from __future__ import annotations

import dataclasses



@dataclasses.dataclass(frozen=True)
class Ty:
    """A ranked tensor type: static sizes, None for `?`."""

    dims: tuple[int | None, ...]
    elt: str

    @property
    def rank(self) -> int:
        return len(self.dims)

    def text(self) -> str:
        dims = "".join(f"{'?' if d is None else d}x" for d in self.dims)
        return f"tensor<{dims}{self.elt}>"

    def with_dims(self, dims: tuple[int | None, ...] | list[int | None]) -> "Ty":
        return Ty(tuple(dims), self.elt)

    def with_elt(self, elt: str) -> "Ty":
        return Ty(self.dims, elt)


def static_size(n: int | None) -> int:
    """A dim the producer's checks made static (a broadcast's added dims)."""
    if n is None:
        raise ValueError("context: a dim that must be static is `?`")
    return n


def is_float(elt: str) -> bool:
    return elt in ("f16", "f32", "f64")


def _float_text(v: float) -> str:
    """A float as MLIR parses it: `1.0`, `-3.0e+38` (never `-3e+38`)."""
    text = repr(v)
    return text.replace("e", ".0e", 1) if "e" in text and "." not in text else text


class Emitter:
    """Lines of one function body, with fresh SSA names and shared index constants."""

    def __init__(self, prefix: str = "cx") -> None:
        self.lines: list[str] = []
        self.prefix = prefix
        self.count = 0
        self.index_consts: dict[int, str] = {}

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"%{self.prefix}{self.count}_{hint}"

    def line(self, text: str) -> None:
        self.lines.append("  " + text)

    def index(self, value: int) -> str:
        if value not in self.index_consts:
            name = f"%{self.prefix}_c{value}" if value >= 0 else f"%{self.prefix}_cm{-value}"
            self.index_consts[value] = name
            self.lines.insert(0, f"  {name} = arith.constant {value} : index")
        return self.index_consts[value]

    def const(self, value: float | int, elt: str) -> str:
        name = self.fresh("cst")
        text = _float_text(float(value)) if is_float(elt) else str(int(value))
        self.line(f"{name} = arith.constant {text} : {elt}")
        return name

    def dim(self, value: str, ty: Ty, i: int) -> str:
        """The size of dim i of `value` as an index: a constant when static."""
        size = ty.dims[i]
        if size is not None:
            return self.index(size)
        name = self.fresh("d")
        self.line(f"{name} = tensor.dim {value}, {self.index(i)} : {ty.text()}")
        return name

    def empty(self, out: Ty, sizes: list[str]) -> str:
        """`tensor.empty` of type `out`; `sizes` are the index values of every dim (only the `?` ones are used)."""
        dyn = [s for s, d in zip(sizes, out.dims) if d is None]
        name = self.fresh("e")
        self.line(f"{name} = tensor.empty({', '.join(dyn)}) : {out.text()}")
        return name

    def generic(self, ins: list[tuple[str, Ty, str]], out: Ty, out_sizes: list[str], body: list[str],
                block_args: list[str], parallel: int | None = None) -> str:
        """An all-parallel `linalg.generic` over the output's dims: `ins` are (value, type, map
        results text); the body's last value is yielded; block args named as given (ins, then out)."""
        n = out.rank if parallel is None else parallel
        loops = ", ".join(f"d{i}" for i in range(n))
        maps = [f"affine_map<({loops}) -> ({m})>" for _, _, m in ins]
        maps.append(f"affine_map<({loops}) -> ({loops})>")
        init = self.empty(out, out_sizes)
        name = self.fresh("g")
        ins_text = ", ".join(v for v, _, _ in ins)
        ins_types = ", ".join(t.text() for _, t, _ in ins)
        iters = ", ".join(['"parallel"'] * n)
        head = f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}}"
        self.line(head + (f" ins({ins_text} : {ins_types})" if ins else "") + f" outs({init} : {out.text()}) {{")
        elts = [t.elt for _, t, _ in ins] + [out.elt]
        self.line("^bb0(" + ", ".join(f"{a}: {e}" for a, e in zip(block_args, elts)) + "):")
        for b in body[:-1]:
            self.line("  " + b)
        self.line(f"  linalg.yield {body[-1]} : {out.elt}")
        self.line(f"}} -> {out.text()}")
        return name
