"""The text stage of a generated case (issue #43 item 6, "minimal means minimal"): once its
parameter steps are done, a case whose kept failure is a compile-stage one (an error, a crash, a
compile timeout or out of memory) goes on as plain MLIR, its `// shapefuzz-case:` header removed,
through the structure passes and `replace_ops.ROOT_PASSES`. Parameter steps cannot drop what the
family's template always writes (an accumulator's fill, a chain op the failure keeps a shape for).

A wrong value or a run-time failure never gets it: only the family's reference judges those, and
it describes the header's body, not a body the text passes changed. The parameter-shrunk case is
kept beside the result (`ShrinkResult.case_form`, the corpus entry's `case.mlir`), so replay can
still judge the case against its family once the compile bug is fixed.

Text passes once made reproducers that verify but read out of bounds or alias an accumulator: a
different bug, or none. So a text step is accepted only when (beside the same signature, checked
by the oracle, and verifying with iree-opt, the prefilter) `Guard` holds for it:

- the failing op kind stays: the op the kept failure's diagnostic names (`'linalg.generic' op
  ...`), where the starting text has one (an op the compiler made itself names nothing here);
- every index an op reads is computed as before: an op that indexes (a gather, a scatter, a
  `tensor.extract`/`insert`(`_slice`) or `memref.load`/`store` with a computed index, a generic
  whose body extracts) is kept with the very chain of ops that computes its operands, or goes
  (`cut_producers` and `replace_ops` would make a template's in-bounds coordinates an input);
- no more aliased accumulators or undefined contents read: ops whose `outs` value is also one of
  their `ins`, or is another op's `outs` too (`bypass_ops` would make an op accumulate into its own
  input), ops that read their `outs` (a conv, a matmul, a reduction, a scatter) on a `tensor.empty`,
  and any other read of a `tensor.empty` (`bypass_ops` took a fill away: undefined values summed,
  scattered or returned).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from shapefuzz.case import CASE_HEADER
from shapefuzz.model import Signature, Stage
from shapefuzz.shrink import mlirtext, replace_ops
from shapefuzz.shrink.engine import Pass
from shapefuzz.shrink.mlirtext import SSA, functions, statements

_QUOTED_OP = re.compile(r"'([a-z_][\w]*\.[\w.]+)' op\b")
_INDEXED = re.compile(r"\b(?:tensor\.(?:extract|insert)(?:_slice)?|memref\.(?:load|store))\b[^\[]*\[([^\]]*%[^\]]*)\]")
_ARG = re.compile(r"(%[\w.$\-]+)\s*:\s*([^,{)]+)")  # a function argument and its type
_INTEGER = re.compile(r"^(?:tensor<(?:[^<>]*x)?(?:i\d+|index)>|!torch\.vtensor<\[[^\]]*\],(?:si|ui|i)\d+>)$")
# ops that index by an integer operand, in every spelling a family writes (torch's and ONNX's too: a
# torch index_select whose indices were cut to an argument read out of bounds, and lanes "agreed")
_GATHERS = re.compile(
    r"\b(?:(?:iree_linalg_ext|tensor)\.(?:gather|scatter)"
    r"|stablehlo\.(?:gather|scatter|dynamic_slice|dynamic_update_slice)"
    r"|torch\.aten\.(?:index_select|gather|index\.Tensor\w*|index_put\w*|scatter\w*|embedding\w*|take_along_dim"
    r"|select_scatter|slice_scatter)"
    r"|onnx\.(?:Gather\w*|Scatter\w*|OneHot))(?![\w.])")
_INS = re.compile(r"\bins\(([^:)]*)")
_OUTS = re.compile(r"\bouts\(([^:)]*)")
# ops that read what their `outs` holds (accumulate into it)
_ACCUMULATES = re.compile(r"conv|matmul|matvec|vecmat|dot|pooling|reduce|mmt4d|contract|scatter")


def applies(signatures: Iterable[Signature]) -> bool:
    """Whether a kept failure may take the text stage: every signature a compile-stage one."""
    sigs = list(signatures)
    return bool(sigs) and all(s.stage == Stage.COMPILE for s in sigs)


def decase(text: str) -> str:
    """The text without its case header line (the case form is kept apart)."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(CASE_HEADER))


def failing_op(signatures: Iterable[Signature], text: str) -> str | None:
    """The op the kept failure's diagnostic names, where `text` has one of that kind."""
    for s in signatures:
        for name in _QUOTED_OP.findall(s.message):
            if _has_op(text, name):
                return name
    return None


def _has_op(text: str, name: str) -> bool:
    return re.search(r"(?<![\w.])\"?" + re.escape(name) + r"(?![\w.])", text) is not None


def index_slices(text: str) -> dict[str, frozenset[str]]:
    """Each op that indexes (see the module's doc), by its first result: the statements (as text,
    spaces collapsed) and the arguments (name and type) its index operands are computed from (a
    gather's or scatter's integer operands, an extract's index list, every operand of a generic
    whose body indexes)."""
    lines = text.splitlines(keepends=True)
    out: dict[str, frozenset[str]] = {}
    for func in functions(lines):
        header = "".join(lines[func.header[0] : func.header[1]])
        args = {m.group(1): m.group(2).strip() for m in _ARG.finditer(header)}
        stmts = statements(lines, func)
        texts = {s: " ".join(s.text(lines).split()) for s in stmts}
        defined = {r: st for st in stmts for r in st.results}
        types = replace_ops.value_types(lines, func)
        for st in stmts:
            text = texts[st]
            if not st.results:
                continue
            operands = [v for v in SSA.findall(text.split("=", 1)[-1]) if v not in st.results]
            if _GATHERS.search(text):
                todo = [v for v in operands if _INTEGER.match(types.get(v, ""))]
            elif (m := _INDEXED.search(text)) and not text.split("=", 1)[-1].lstrip().startswith("linalg."):
                todo = SSA.findall(m.group(1))
            elif _INDEXED.search(text):  # a generic's body indexes: by what, its operands decide
                todo = operands
            else:
                continue
            seen: set[str] = set()
            while todo:
                v = todo.pop()
                if v in defined and (t := texts[defined[v]]) not in seen:
                    seen.add(t)
                    todo += SSA.findall(t.split("=", 1)[-1])
                elif v in args:
                    seen.add(f"{v}: {args[v]}")
            out[st.results[0]] = frozenset(seen)
    return out


def aliased_accumulators(text: str) -> int:
    """Ops whose `outs` value is one of their `ins` too, plus `outs` values shared by several ops,
    plus accumulating ops whose `outs` is a `tensor.empty`, plus other reads of a `tensor.empty`."""
    lines = text.splitlines(keepends=True)
    count, outs_seen = 0, Counter[str]()
    for func in functions(lines):
        empties: set[str] = set()
        for s in statements(lines, func):
            stmt = s.text(lines)
            name = replace_ops.op_name(stmt)
            if name == "tensor.empty":
                empties.update(s.results)
            ins = {v for m in _INS.finditer(stmt) for v in SSA.findall(m.group(1))}
            outs = {v for m in _OUTS.finditer(stmt) for v in SSA.findall(m.group(1))}
            reads_outs = bool(_ACCUMULATES.search(name)) or (name == "linalg.generic" and '"reduction"' in stmt)
            count += bool(ins & outs) + (reads_outs and bool(outs & empties))
            if name != "tensor.dim":  # (its size is defined)
                read = set(SSA.findall(_OUTS.sub("", stmt).split("=", 1)[-1] if s.results else stmt))
                count += len(read & empties)
            outs_seen.update(outs)
    return count + sum(n - 1 for n in outs_seen.values() if n > 1)


class Guard:
    """admissible(candidate) for the text stage: the start's failing op kind kept, and no more
    argument-read indices or aliased accumulators than the start has."""

    def __init__(self, start: str, signatures: Iterable[Signature]) -> None:
        self.op = failing_op(signatures, start)
        self.slices = index_slices(start)
        self.aliased = aliased_accumulators(start)

    def __call__(self, candidate: str) -> bool:
        if self.op is not None and not _has_op(candidate, self.op):
            return False
        slices = index_slices(candidate)
        if any(self.slices.get(name) != kept for name, kept in slices.items()):
            return False
        return aliased_accumulators(candidate) <= self.aliased


def tiers() -> list[list[Pass]]:
    """The text stage's passes: the structure steps, then the ops around the failing one."""
    return [[Pass(name, fn) for name, fn in mlirtext.TEXT_STRUCTURE],
            [Pass(name, fn) for name, fn in replace_ops.ROOT_PASSES]]
