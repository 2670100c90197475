"""Sizes of an MLIR text and the one "smaller" order of shapefuzz.

Pure text; no IREE. `size_of` is the order every part uses: the shrinker (a candidate replaces
the current text only when its `sort_key` is strictly smaller), the corpus (a reproducer replaces
an entry's only when smaller) and the campaign (a bucket keeps its smallest reproducer): total
tensor elements, then ops, then dynamic dims, then text length; `sort_key` adds the text itself
so ties are broken the same way on every run. `smaller` adds the one bound every replacement
keeps: never more bytes (the order puts elements first, and a step to fewer elements may re-render
a case longer: a named conv as its generic, a dynamic dim as a static one; five campaign shrinks
had made the file larger that way)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHAPED = re.compile(r"\b(?:tensor|memref|vector)<([^<>]*)>")
_TORCH = re.compile(r"!torch\.vtensor<\[([^\]]*)\]")
_OP_LINE = re.compile(r"^\s*(?:%[^=\"]*=\s*)?\"?(?:[a-z_][\w]*\.[\w.]+|return)\b")


def shaped_dims(body: str) -> list[str]:
    """The dim tokens of a shaped type's body, e.g. '4x?x8xf32' -> ['4', '?', '8']."""
    parts = body.split("x")
    dims = []
    for part in parts[:-1]:
        token = part.strip()
        if token == "?" or token.isdigit():
            dims.append(token)
        else:
            break
    return dims


def _size(d: str) -> int:
    return int(d) if len(d) <= 18 else 10**18  # int() of 5,000 digits raises; any such dim is huge


def _shapes(text: str) -> list[list[int | None]]:
    shapes = []
    for match in _SHAPED.finditer(text):
        shapes.append([None if d == "?" else _size(d) for d in shaped_dims(match.group(1))])
    for match in _TORCH.finditer(text):
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        shapes.append([None if d in ("?", "-1") else _size(d) for d in dims if d.lstrip("-").isdigit() or d == "?"])
    return shapes


def code_lines(text: str) -> list[str]:
    """Lines that are neither blank nor comments."""
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("//")]


@dataclass(frozen=True)
class Metrics:
    lines: int
    ops: int
    elements: int  # sum over every shaped type written in the text, '?' counted as 1
    max_rank: int
    dynamic_dims: int  # '?' dims over the distinct shaped types
    chars: int

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


def measure(text: str) -> Metrics:
    code = "\n".join(code_lines(text))
    shapes = _shapes(code)
    elements = 0
    for shape in shapes:
        count = 1
        for d in shape:
            count *= 1 if d is None else d
        elements += count
    distinct = {m.group(1) for m in _SHAPED.finditer(code)}
    dynamic = sum(shaped_dims(body).count("?") for body in distinct)
    dynamic += sum(b.count("?") + b.count("-1") for b in {m.group(1) for m in _TORCH.finditer(code)})
    ops = sum(1 for line in code.splitlines() if _OP_LINE.match(line))
    return Metrics(
        lines=len(code.splitlines()),
        ops=ops,
        elements=elements,
        max_rank=max((len(s) for s in shapes), default=0),
        dynamic_dims=dynamic,
        chars=len(text),
    )


@dataclass(frozen=True, order=True)
class Size:
    """How big a reproducer is, compared field by field in this order (smaller is better)."""

    elements: int
    ops: int
    dynamic_dims: int
    chars: int


def size_of(text: str) -> Size:
    m = measure(text)
    return Size(m.elements, m.ops, m.dynamic_dims, len(text))


def byte_size(text: str) -> int:
    return len(text.encode())


def smaller(text: str, than: str) -> bool:
    """Whether `text` may replace `than` as a reproducer: strictly smaller in the order, and no
    more bytes."""
    return size_of(text) < size_of(than) and byte_size(text) <= byte_size(than)


def sort_key(text: str) -> tuple:
    """Smaller is better: the size, then the text itself."""
    return (size_of(text), text)
