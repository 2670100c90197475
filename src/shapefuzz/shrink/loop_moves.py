"""Shrinking steps across loops: a loop replaced by one copy of its body, or by nothing (its results
its initial values). An audit of a fresh campaign cut three reproducers by hand this way (a
`stablehlo.while` around a lone `shift_right_logical`, an `scf.for` around a lone `math.ctpop`): the
shrinker had no step across a loop, so each text kept its counter, its trip count and its condition.

One copy of the body is the loop's first iteration: the induction variable is the lower bound, each
iteration argument its initial value, and the loop's results what the body yields. Forms read (as
IREE and the families print them): `scf.for` (with or without `iter_args`), `scf.while` (the
condition region's ops kept, its forwarded values the body's block arguments) and the pretty
`stablehlo.while` (the condition dropped). Like every text step it is a candidate: the caller's
guard keeps it only where the failure stays, and a malformed text fails verification."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from shapefuzz.iree.mlirinfo import split_top_level
from shapefuzz.shrink.mlirtext import RESULTS, SSA, Stmt, bracket_balance, functions, statements

_NAME = SSA.pattern
_RESULTS = rf"(?:(?P<res>{_NAME})(?::(?P<n>\d+))?\s*=\s*)?"
_FOR = re.compile(rf"^\s*{_RESULTS}scf\.for\s+(?P<iv>{_NAME})\s*=\s*(?P<lb>{_NAME})\s+to\s+{_NAME}\s+step\s+{_NAME}"
                  rf"(?:\s+iter_args\((?P<iters>[^)]*)\))?(?:\s*->\s*[^{{]*?)?(?:\s*:\s*[\w]+)?\s*\{{\s*$")
_SCF_WHILE = re.compile(rf"^\s*{_RESULTS}scf\.while\s*\((?P<iters>[^)]*)\)\s*:.*\{{\s*$")
_HLO_WHILE = re.compile(rf"^\s*{_RESULTS}stablehlo\.while\s*\((?P<iters>[^)]*)\)\s*:.*$")
_YIELD = re.compile(r"^\s*(?:scf\.yield|stablehlo\.return)\b(?P<values>[^:]*)(?::.*)?$")
_CONDITION = re.compile(r"^\s*scf\.condition\((?P<cond>[^)]*)\)(?P<values>[^:]*)(?::.*)?$")
_BLOCK = re.compile(r"^\s*\^\w+\((?P<args>.*)\):\s*$")
_DO = re.compile(r"^\s*\}\s*do\s*\{\s*$")
# the first line of a statement without results: an op (`memref.store`, `"op"(...)`); one with results: `RESULTS`
_RESULTLESS_OP = re.compile(r"^(?:[a-z_][\w]*\.[\w.]+|\"[\w.]+\")")


@dataclass(frozen=True)
class Loop:
    """One loop statement read: what its first iteration is in the enclosing function."""

    result: str  # "%r" ("" when it has no results)
    count: int
    inits: tuple[str, ...]  # the iteration arguments' initial values
    body: tuple[str, ...]  # the ops of one iteration (terminator left out), as lines
    renames: dict[str, str]  # body names -> the values they have in the first iteration
    yielded: tuple[str, ...]  # the values the first iteration ends with (the loop's results after it)


def unroll_loops(text: str) -> Iterator[str]:
    """Each loop replaced by one copy of its body (its first iteration), then by nothing (its
    results its initial values)."""
    lines = text.splitlines(keepends=True)
    for func in functions(lines):
        for s in statements(lines, func):
            loop = read_loop(lines, s)
            if loop is None:
                continue
            after = "".join(lines[s.end:func.close])
            end = "".join(lines[func.close:])
            before = "".join(lines[:s.start])
            indent = re.match(r"\s*", lines[s.start]).group(0)  # type: ignore[union-attr]
            body = _dedented([_renamed(row, loop.renames) for row in loop.body], indent)
            if len(loop.yielded) == loop.count:
                yield before + "".join(body) + _results_as(after, loop.result, loop.yielded) + end
            if len(loop.inits) == loop.count and loop.result:
                yield before + _results_as(after, loop.result, loop.inits) + end


def read_loop(lines: list[str], s: Stmt) -> Loop | None:
    """The loop statement `s` as one iteration (None: not a loop form read here)."""
    head = lines[s.start].rstrip("\n")
    rows = lines[s.start + 1:s.end - 1]  # between the header and the closing brace
    if s.end - s.start < 3 or not lines[s.end - 1].strip().startswith("}"):
        return None
    if (m := _FOR.match(head)) is not None:
        names, inits = _pairs(m.group("iters") or "")
        renames = {m.group("iv"): m.group("lb"), **dict(zip(names, inits))}
        return _with_body(m, inits, rows, renames)
    if (m := _SCF_WHILE.match(head)) is not None:
        names, inits = _pairs(m.group("iters"))
        split = next((i for i, row in enumerate(rows) if _DO.match(row)), None)
        if split is None:
            return None
        cond_rows, do_rows = rows[:split], rows[split + 1:]
        condition = next((_CONDITION.match(row) for row in cond_rows if _CONDITION.match(row)), None)
        block = _BLOCK.match(do_rows[0]) if do_rows else None
        if condition is None or block is None:
            return None
        forwarded = _values(condition.group("values"))
        block_args = [a.split(":", 1)[0].strip() for a in split_top_level(block.group("args")) if a.strip()]
        if len(forwarded) != len(block_args):
            return None
        before_ops = [row for row in cond_rows if not _CONDITION.match(row)]
        first = dict(zip(names, inits))
        renames = {**first, **{a: _renamed(v, first) for a, v in zip(block_args, forwarded)}}
        return _with_body(m, inits, before_ops + do_rows[1:], renames)
    if (m := _HLO_WHILE.match(head)) is not None and rows and rows[0].strip() == "cond {":
        names, inits = _pairs(m.group("iters"))
        split = next((i for i, row in enumerate(rows) if _DO.match(row)), None)
        if split is None:
            return None
        return _with_body(m, inits, rows[split + 1:], dict(zip(names, inits)))
    return None


def _with_body(m: re.Match[str], inits: list[str], rows: list[str], renames: dict[str, str]) -> Loop | None:
    count = int(m.group("n") or 1) if m.group("res") else 0
    last = next((i for i in range(len(rows) - 1, -1, -1) if rows[i].strip()), None)
    yielded: list[str] = []
    if last is not None and (y := _YIELD.match(rows[last])) is not None:
        yielded = [_renamed(v, renames) for v in _values(y.group("values"))]
        rows = rows[:last]
    elif count:
        return None  # results, but no terminator read: not a form this step knows
    return Loop(m.group("res") or "", count, tuple(inits), tuple(rows), renames, tuple(yielded))


def _pairs(text: str) -> tuple[list[str], list[str]]:
    """`%a = %x, %b = %y` as ([%a, %b], [%x, %y])."""
    names, inits = [], []
    for part in split_top_level(text):
        if "=" in part:
            name, init = part.split("=", 1)
            names.append(name.strip())
            inits.append(init.strip())
    return names, inits


def _values(text: str) -> list[str]:
    return [v.strip() for v in split_top_level(text) if v.strip()]


def _renamed(text: str, renames: dict[str, str]) -> str:
    return SSA.sub(lambda m: renames.get(m.group(0), m.group(0)), text)


def _results_as(text: str, result: str, values: tuple[str, ...]) -> str:
    """Uses of the loop's results (`%r`, `%r#k`) replaced by `values`."""
    if not result:
        return text

    def value(m: re.Match[str]) -> str:
        k = int(m.group(1) or 0)
        return values[k] if k < len(values) else m.group(0)
    return re.sub(re.escape(result) + r"(?:#(\d+))?(?![\w.$\-#])", value, text)


def _dedented(rows: list[str], indent: str) -> list[str]:
    """Rows moved out of a region to the loop's own indentation: each statement's first line at it, the
    rest of the statement deeper (the text passes read statements by indentation, and a region's rows
    may be indented unevenly: a template's loop body was read as one statement once lifted)."""
    out, depth = [], 0
    for row in rows:
        text = row.strip()
        starts = depth == 0 and (RESULTS.match(text) is not None or _RESULTLESS_OP.match(text) is not None)
        out.append(f"{indent if starts else indent + '  ' * (1 + max(depth, 0))}{text}\n" if text else row)
        depth += bracket_balance(text)
    return out


LOOP_PASSES = (("unroll_loops", unroll_loops),)

__all__ = ["LOOP_PASSES", "Loop", "read_loop", "unroll_loops"]
