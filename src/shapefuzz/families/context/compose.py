"""One computation: the family's module with its entry renamed `@root` (private) and a new
`@main` that runs the producers on the root's operands, calls it (IREE inlines the call before
any fusion pass, so dispatch creation sees the whole chain), runs the consumers on its results
and returns them. Its inputs (the entry's arguments, made so the root sees its family's own
values where the producers only move them), its NumPy reference (producers, the family's
reference, consumers) and its comparison (the family's own without consumers, else an
element-wise tolerance widened by each consumer)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Sequence, TypeVar

import numpy as np

from shapefuzz.families.context.chain import Chain, ContextOp, consumers_of, producers_of
from shapefuzz.families.context.consumers import CONSUMERS
from shapefuzz.families.context.producers import contiguous, NP, PRODUCERS
from shapefuzz.errors import UndefinedReference
from shapefuzz.families.context.types import Emitter, Ty, is_float
from shapefuzz.families.torch_ir import boundary

ROOT = "root"
_ENTRY = re.compile(r"func\.func @main\(")


V = TypeVar("V")  # what a chain writer passes between ops: a value name, a torch value, an array


@dataclasses.dataclass(frozen=True)
class Plan:
    """The chain laid out over a root's signature: per root operand, its producers (outermost
    first) with their argument types; per root result, its consumers with their input types."""

    root_args: tuple[Ty, ...]
    root_results: tuple[Ty, ...]
    # per operand: [(op, source types, operand type)], outermost first
    producers: tuple[tuple[tuple[ContextOp, tuple[Ty, ...], Ty], ...], ...]
    # per result: [(op, input type, output type, extra types)], root outwards
    consumers: tuple[tuple[tuple[ContextOp, Ty, Ty, tuple[Ty, ...]], ...], ...]

    def entry_args(self) -> list[Ty]:
        out: list[Ty] = []
        for i, steps in enumerate(self.producers):
            out.append(steps[0][1][0] if steps else self.root_args[i])
            for _, sources, _ in steps:
                out += list(sources[1:])
        for outward in self.consumers:
            for _, _, _, extras in outward:
                out += list(extras)
        return out

    def through_producers(self, values: Sequence[V], emit: Callable[[ContextOp, list[V], tuple[Ty, ...], Ty], V],
                          finish: Callable[[int, V], V] = lambda i, value: value) -> tuple[list[V], list[V]]:
        """The entry's arguments (`values`, in `entry_args` order) through the producers: per root
        operand its first argument, then each producer outermost first (`emit(op, inputs, source
        types, output type)`, its further sources the next arguments), then `finish(i, value)`.
        Returns the root's operands and the arguments left for the consumers."""
        k, operands = 0, []
        for i, steps in enumerate(self.producers):
            value = values[k]
            k += 1
            for op, sources, out in steps:
                value = emit(op, [value, *values[k:k + len(sources) - 1]], sources, out)
                k += len(sources) - 1
            operands.append(finish(i, value))
        return operands, list(values[k:])

    def entry_results(self) -> list[Ty]:
        return [steps[-1][2] if steps else self.root_results[j] for j, steps in enumerate(self.consumers)]


def inexact_in_frontend(p: Plan, frontend: str, no_i4: str) -> str:
    """Why a frontend's ops (ONNX, torch) cannot write this chain exactly ("" when they can): an
    i4 dequantize (`no_i4` says why), or a max over a dim that may be empty (-3e38 in linalg,
    -inf in the frontend)."""
    for steps in p.producers:
        for op, _, _ in steps:
            if op.op == "dequantize" and op.get("from") != "i8":
                return f"context: dequantize from {op.get('from')} {no_i4}"
    for outward in p.consumers:
        for op, t, _, _ in outward:
            if op.op == "reduce" and op.get("kind") == "max" and not t.dims[op.get("dim")]:
                return f"context: a max over a dim that may be empty (-3e38 in linalg, -inf in {frontend})"
    return ""


def _ty(t: tuple[tuple[int | None, ...], str]) -> Ty:
    return Ty(tuple(t[0]), t[1])


def root_types(root_text: str) -> tuple[tuple[Ty, ...], tuple[Ty, ...]]:
    """The root module's entry argument and result types."""
    b = boundary(root_text)
    return tuple(_ty(t) for t in b.args), tuple(_ty(t) for t in b.results)


def plan(root_text: str, chain: Chain, fixed: tuple[int, ...] = (), consumers_ok: bool = True,
         nonnegative: tuple[int, ...] = ()) -> Plan:
    """The chain over this root module's signature; ValueError when an op does not fit. `fixed`:
    operands that take no producer; `nonnegative`: operands no producer may make negative."""
    return plan_types(*root_types(root_text), chain, fixed, consumers_ok, nonnegative)


def plan_types(args: tuple[Ty, ...], results: tuple[Ty, ...], chain: Chain, fixed: tuple[int, ...] = (),
               consumers_ok: bool = True, nonnegative: tuple[int, ...] = ()) -> Plan:
    for op in chain:
        if op.is_producer:
            if op.slot >= len(args):  # its operand
                raise ValueError(f"context: {op.op} on operand {op.operand}; the root takes {len(args)}")
            if op.operand in fixed:
                raise ValueError(f"context: operand {op.operand}'s values are the family's to choose (no producer)")
            if op.operand in nonnegative and (why := PRODUCERS[op.op].negative_from(op)):
                raise ValueError(f"context: {op.op}: {why} on operand {op.operand}, whose values must stay >= 0 "
                                 "(the root's reference takes a root of them)")
        else:
            if op.slot >= len(results):  # its result
                raise ValueError(f"context: {op.op} on result {op.result}; the root returns {len(results)}")
            if not consumers_ok:
                raise ValueError("context: this case's results are not compared element-wise (no consumer)")
    producers = []
    for i, t in enumerate(args):
        steps = []
        for op in reversed(producers_of(chain, i)):
            sources = tuple(_named(lambda: PRODUCERS[op.op].sources(op, t)))
            steps.append((op, sources, t))
            t = sources[0]
        producers.append(tuple(reversed(steps)))
    consumers = []
    for j, t in enumerate(results):
        outward = []
        for op in consumers_of(chain, j):
            c = CONSUMERS[op.op]
            out = _named(lambda: c.result(op, t))
            outward.append((op, t, out, tuple(c.extras(op, t))))
            t = out
        consumers.append(tuple(outward))
    return Plan(args, results, tuple(producers), tuple(consumers))


def _named(call: Callable[[], Any]) -> Any:
    """An op's misfit as a line that says it is the chain's."""
    try:
        return call()
    except ValueError as error:
        raise ValueError(f"context: {error}") from None


def _sig(types: list[Ty]) -> str:
    return types[0].text() if len(types) == 1 else "(" + ", ".join(t.text() for t in types) + ")"


def render(root_text: str, p: Plan) -> str:
    """The composed module: the root renamed, then the new entry."""
    renamed, n = _ENTRY.subn(f"func.func private @{ROOT}(", root_text, count=1)
    if n != 1 or renamed.lstrip().startswith("module"):
        raise AssertionError("the root module has no top-level @main")
    e = Emitter()
    entry = p.entry_args()
    names = [f"%arg{k}" for k in range(len(entry))]
    operands, extra_names = p.through_producers(
        names, lambda op, ins, sources, out: PRODUCERS[op.op].emit(op, e, ins, list(sources), out))
    res = e.fresh("root")
    rtypes = list(p.root_results)
    call_res = res if len(rtypes) == 1 else f"{res}:{len(rtypes)}"
    e.line(f"{call_res} = func.call @{ROOT}({', '.join(operands)}) : ({', '.join(t.text() for t in p.root_args)}) -> {_sig(rtypes)}")
    finals = []
    x = 0
    for j, steps in enumerate(p.consumers):
        value = res if len(rtypes) == 1 else f"{res}#{j}"
        for op, t, out, extras in steps:
            value = CONSUMERS[op.op].emit(op, e, value, t, extra_names[x:x + len(extras)], out)
            x += len(extras)
        finals.append(value)
    outs = p.entry_results()
    head = f"func.func @main({', '.join(f'{n}: {t.text()}' for n, t in zip(names, entry))}) -> {_sig(outs)} {{"
    ret = f"  return {', '.join(finals)} : {', '.join(t.text() for t in outs)}"
    return renamed.rstrip() + "\n\n" + "\n".join([head, *e.lines, ret, "}"]) + "\n"


def make_inputs(p: Plan, root_inputs: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """The entry's arguments: each producer inverted from the root operand outwards (the root
    sees the family's drawn values where the producers only move them), then the extras."""
    rng = np.random.default_rng([seed, 33])
    out: list[np.ndarray] = []
    for i, steps in enumerate(p.producers):
        y = root_inputs[i]
        extras: list[list[np.ndarray]] = []
        for op, sources, _ in reversed(steps):
            PRODUCERS[op.op].check(op, y.shape)
            xs = PRODUCERS[op.op].invert(op, y, list(sources), rng)
            y = xs[0]
            extras.insert(0, xs[1:])
        out.append(contiguous(y))
        for more in extras:
            out += more
    for outward in p.consumers:
        for op, t, _, _ in outward:
            out += CONSUMERS[op.op].make_extras(op, t, rng)
    return out


def check_sizes(p: Plan, shapes: list[tuple[int, ...]]) -> None:
    """ValueError when a producer cannot make its operand at these concrete sizes."""
    for i, steps in enumerate(p.producers):
        s = tuple(shapes[i])
        for op, sources, out in reversed(steps):
            PRODUCERS[op.op].check(op, s)
            zeros = np.zeros(s, dtype=NP.get(out.elt, np.float32))
            s = tuple(PRODUCERS[op.op].invert(op, zeros, list(sources), np.random.default_rng(0))[0].shape)


def root_inputs_of(p: Plan, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The root's operands: the entry's arguments through the producers."""
    return p.through_producers(inputs, lambda op, xs, _, out: PRODUCERS[op.op].forward(op, xs, out))[0]


def extras_of(p: Plan, inputs: list[np.ndarray]) -> list[np.ndarray]:
    k = len(p.root_args) + sum(len(s) - 1 for steps in p.producers for _, s, _ in steps)
    return list(inputs[k:])


def consume(p: Plan, results: list[np.ndarray], inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The root's results through their consumers. UndefinedReference where a consumer would cast
    NaN to an integer type (a quantize: the module's fptosi of NaN is poison, NumPy's astype
    platform-defined; infinities are clamped first, so they are defined)."""
    extras, x = extras_of(p, inputs), 0
    out = []
    for j, steps in enumerate(p.consumers):
        value = results[j]
        for op, t, o, more in steps:
            if is_float(t.elt) and not is_float(o.elt) and np.isnan(np.asarray(value, dtype=np.float64)).any():
                raise UndefinedReference(f"context: {op.op} would cast NaN to {o.elt} (result {j} of the root, "
                                         "through the consumers before it): the case's reference is undefined")
            value = CONSUMERS[op.op].forward(op, value, extras[x:x + len(more)], o)
            x += len(more)
        out.append(np.asarray(value))
    return out


def tolerances(p: Plan, rule: dict[str, Any], root_results: list[np.ndarray], inputs: list[np.ndarray]) -> list[tuple[float, float]]:
    """Each entry result's (rtol, atol): the family's rule on the root result, widened by each consumer."""
    from shapefuzz.export_checks import tolerance

    extras, x = extras_of(p, inputs), 0
    out = []
    for j, steps in enumerate(p.consumers):
        value = root_results[j]
        dt = value.dtype
        tol = (tolerance(dt) if rule.get("rtol") is None else float(rule["rtol"]),
               tolerance(dt) if rule.get("atol") is None else float(rule["atol"]))
        for op, t, o, more in steps:
            tol = CONSUMERS[op.op].widen(op, t, tol, value)
            value = CONSUMERS[op.op].forward(op, value, extras[x:x + len(more)], o)
            x += len(more)
        out.append(tol)
    return out


def compare_with_consumers(p: Plan, rule: dict[str, Any], root_results: list[np.ndarray], inputs: list[np.ndarray],
                           expected: list[np.ndarray], actual: list[np.ndarray]) -> Any:
    from shapefuzz.families.common import count_mismatch, shape_mismatch, values_mismatch

    problem = count_mismatch(expected, actual)
    if problem:
        return problem
    for i, ((rtol, atol), want, got) in enumerate(zip(tolerances(p, rule, root_results, inputs), expected, actual)):
        got = np.asarray(got)
        problem = shape_mismatch(i, want, got) or values_mismatch(
            i, want.astype(np.float64), got.astype(np.float64), rtol=rtol, atol=atol)
        if problem:
            return problem
    return None


Reference = Callable[[list[np.ndarray]], list[np.ndarray]]
