"""What a module holds that the known failures of one Vulkan target or of Mesa's driver need, read
from its text, so a Vulkan-only wrong value is blamed only after they were considered.

Measured on IREE 3.13 with Mesa's llvmpipe (November 2026):
- IREE's i8/i16 emulation: the default Vulkan profile has no 8- or 16-bit storage, so IREE packs
  i8 into 32-bit words; an i8 tensor whose byte size is not a multiple of 4 loses its last word
  (`x+x` on 3 x i8 gives `0 0 0`, 4 x i8 is right, 5 x i8 loses its last element); bf16 the same
  (`x+x` on 1 x bf16 gives 0, 2 and 4 are right). The llvmpipe target on the same driver is right.
  That is IREE's bug, never the driver's.
- Mesa llvmpipe's loop limiter: one invocation stops after 65,535 loop iterations, so a sort IREE
  runs in a single invocation comes out partly unsorted past 256 elements along the sorted dim (256
  sort right, 258 do not: a NumPy replay of the bubble sort stopped at 65,535 iterations gives the
  device's output exactly), and a single-invocation top-k once n*k passes it (the top 60 of 1,025
  right, the top 66 wrong, on both Vulkan targets). A `?` dim is read from the run's inputs. That one is the driver's. A torch or ONNX top-k is no
  top-k by then: IREE lowers it to a sort of the whole dim (the top 1 of 512 wrong, as a sort of 512)."""

from __future__ import annotations

import math
import re
from typing import Sequence

MESA_LOOP_LIMIT = 65_535
# A single-invocation sort of n elements runs about n*(n-1) inner iterations: past the limit from
# n = 257 (measured: 256 right, 258 partly unsorted, as a replay stopped at the limit predicts).
LOOP_LIMIT_SORT_LENGTH = 257

_BITS = {"i8": 8, "si8": 8, "ui8": 8, "i16": 16, "si16": 16, "ui16": 16, "bf16": 16}
_TENSOR = re.compile(r"\btensor<((?:[0-9?]+x)*)([a-z]+\d+)>")
_TORCH = re.compile(r"!torch\.vtensor<\[([^\]]*)\],\s*([a-z]+\d+)>")
_SORTING = re.compile(r"iree_linalg_ext\.(?:sort|topk)|torch\.aten\.(?:sort|topk|argsort)|onnx\.TopK|stablehlo\.sort",
                      re.IGNORECASE)
# the types of a generic-form op printed after its region (`"stablehlo.sort"(%x) ({ ... }) : (tensor<487xf16>) -> ...`)
_AFTER_REGION = re.compile(r"\n\s*\}\)\s*:\s*([^\n]*)")
_STATEMENT_END = re.compile(r"\n\s*(?:%|\^bb|return\b|\}|func\.)|\{\s*\n")
_MAIN_ARGS = re.compile(r"func\.func\s+(?:public\s+)?@main\((.*?)\)\s*->", re.S)
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*(?:tensor<|!torch\.vtensor<)")
_SSA = re.compile(r"%[\w.$-]+")


def _shapes(text: str) -> list[tuple[list[int | None], str]]:
    out = []
    for match in _TENSOR.finditer(text):
        dims = [d for d in match.group(1).split("x") if d]
        out.append(([None if d == "?" else int(d) for d in dims], match.group(2)))
    for match in _TORCH.finditer(text):
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        out.append(([None if d in ("?", "-1") else int(d) for d in dims if d.lstrip("-").isdigit() or d == "?"],
                    match.group(2)))
    return out


def narrow_words_lost(text: str, emulated: tuple[str, ...]) -> str:
    """"" unless the module holds a tensor of an element type the target emulates in 32-bit words
    (`emulated`: "i8", "i16") whose byte size is not a multiple of 4 (or not known: a dynamic dim);
    else that tensor's type, as said in a verdict."""
    for shape, element in _shapes(text):
        bits = _BITS.get(element)
        if bits is None or element.lstrip("su") not in emulated:  # si8, ui8: i8
            continue
        if any(d is None for d in shape):
            return f"{'x'.join('?' if d is None else str(d) for d in shape)}x{element} (its byte size is not known)"
        count = math.prod(d for d in shape if d is not None)  # every dim: a `?` one returned above
        if count * bits // 8 % 4:
            spelled = "x".join([*map(str, shape), element]) if shape else f"{element} scalar"
            return f"{spelled} ({count * bits // 8} byte{'s' if count * bits // 8 != 1 else ''})"
    return ""


def _op_texts(text: str) -> list[tuple[str, str]]:
    """(op name, the op's text up to its region or the next statement) for each sort or top-k: a
    LinalgExt op spans lines (`iree_linalg_ext.topk dimension(0)` / `ins(...)` / `outs(...)`)."""
    out = []
    for match in _SORTING.finditer(text):
        end = _STATEMENT_END.search(text, match.end())
        op = text[match.start():end.start() if end else len(text)]
        if end is not None and end.group(0).lstrip().startswith("{") and op.rstrip().endswith("("):
            types = _AFTER_REGION.search(text, end.start())  # a generic-form op: its types follow its region
            op += f" : {types.group(1)}" if types else ""
        out.append((match.group(0), op))
    return out


def _bound_args(text: str, arg_shapes: Sequence[Sequence[int]]) -> dict[str, list[int]]:
    """@main's tensor arguments by name -> the shape the run gave each (`arg_shapes`, in order)."""
    found = _MAIN_ARGS.search(text)
    if found is None or not arg_shapes:
        return {}
    return {m.group(1): list(shape) for m, shape in zip(_ARG.finditer(found.group(1)), arg_shapes)}


def _sizes(op: str, bound: dict[str, list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    """The op's operand and result tensor shapes. An operand's `?` dim is read from the run's shape
    of an operand of that rank where the operand is an argument of @main; a result's `?` dims, and
    an operand's the run does not give, are left out (unknown: an ONNX top-k's `?` indices are not
    its input's length)."""
    runs = [bound[name] for name in _SSA.findall(op) if name in bound]
    arrow = op.rfind("->")
    operands, results = (op[:arrow], op[arrow:]) if arrow >= 0 else (op, "")

    def known(part: str, resolve: bool) -> list[list[int]]:
        out = []
        for shape, _ in _shapes(part):
            run = next((r for r in runs if len(r) == len(shape)), None) if resolve and None in shape else None
            dims = [d if d is not None else run[i] for i, d in enumerate(shape)] if run is not None \
                else [d for d in shape if d is not None]
            if dims:
                out.append(dims)
        return out

    return known(operands, True), known(results, False)


def loop_limit_reached(text: str, arg_shapes: Sequence[Sequence[int]] = ()) -> str:
    """"" unless the module sorts or takes a top-k in one invocation over more loop iterations
    than Mesa llvmpipe's limit (a sort of n: about n*(n-1); `iree_linalg_ext.topk`, k among n: n*k;
    a torch or ONNX top-k, which IREE lowers to `iree_linalg_ext.sort` of all n then a slice, checked
    on 3.13 with `--compile-to=flow`: as a sort of n); else what it does, as said in a verdict.
    `arg_shapes`: the shapes of @main's arguments in the run, for dims the text leaves `?` (audit B:
    a sort of `tensor<?xf32>` run on 258 elements was a "suspected driver")."""
    worst, said = 0, ""
    bound = _bound_args(text, arg_shapes)
    for name, op in _op_texts(text):
        operands, results = _sizes(op, bound)
        if not operands:
            continue
        n = max(operands[0])
        # k: the values result's length (a LinalgExt top-k's `outs` where its result's is `?`)
        k = max(results[0]) if results else max(operands[-1]) if len(operands) > 1 else n
        if name.startswith("iree_linalg_ext.topk"):  # IREE's own top-k: k passes over n
            iterations, what = n * k, f"it takes the top {k} of {n} elements in one invocation ({n * k:,} loop iterations)"
        elif "topk" in name.lower():  # torch's and ONNX's: IREE lowers them to a whole sort (then a slice)
            iterations = n * (n - 1)
            top = f"the top {k} of {n} elements" if results else f"a top-k of {n} elements"
            what = (f"it takes {top}, which IREE lowers to a sort of all {n} in one invocation "
                    f"(about {iterations:,} loop iterations)")
        else:
            n = max(max(s) for s in operands + results)
            iterations, what = n * (n - 1), f"it sorts along a dim of up to {n} elements in one invocation"
        if iterations > worst:
            worst, said = iterations, what
    if worst > MESA_LOOP_LIMIT:
        return f"{said}, past the limit"  # the limit itself is said by its rule (`target_limits`)
    return ""


__all__ = ["LOOP_LIMIT_SORT_LENGTH", "MESA_LOOP_LIMIT", "loop_limit_reached", "narrow_words_lost"]
