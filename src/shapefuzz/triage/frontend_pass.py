"""Which pass of a frontend conversion (torch-mlir's passes inside IREE's `input` phase, the ONNX
lowering among them) makes a wrong value. Pure text and search logic; the compiles are
`shapefuzz.judge.frontend_probe`'s.

Measured on IREE 3.13 (`--compile-to=input --mlir-print-ir-after-all --mlir-print-ir-after-change
--mlir-print-ir-module-scope`): every intermediate module (torch, mixed torch and linalg) compiles on
from the start, but a compile runs the whole conversion again, the culprit included, so each one
computes the same wrong values: run as it is, an intermediate says nothing. What does tell is the
**static twin**: the module with its function's dynamic (`?`) argument dims made static at entry
(the argument typed with the sizes this run has, cast back to `?` by
`torch.tensor_static_info_cast` or `tensor.cast`), so the conversion of what is still to convert
sees static shapes. A bug that needs a `?` dim (torch-mlir's instance-norm decomposition divides the
variance by the static numel - 1, -1 for a `?` dim) is then right in the twin of every module before
the culprit ran and wrong in the twin of every module after it (the wrong value is written into the
IR): a halving search over the pass dumps names the pass. A bug the static program has too is not
placed this way (said)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from shapefuzz.triage.localize_types import Values

_HEADER = re.compile(r"^// -----// IR Dump After (\S+): (.*?) \('([\w.]+)' operation(?:: @(\S+))?\) //----- //$", re.M)
_FUNC = re.compile(r"^(?P<indent>[ \t]*)func\.func (?:\w+ )?@(?P<name>[\w$.-]+)\((?P<args>.*?)\)(?P<rest>.*)\{$", re.M)
_ARG = re.compile(r"(%[\w$.-]+): (!torch\.vtensor<\[([^\]]*)\],([^>]+)>|tensor<([^>]*)>)")
_TORCH_OP = re.compile(r"\b(torch\.aten\.[\w.]+|torch\.prims?\.[\w.]+)\b|torch\.operator \"(onnx\.\w+)\"")
_DECOMPOSITION = "torch-decompose-complex-ops"
FIRST_TRIES = 3  # modules tried from the start for a right static twin


@dataclass(frozen=True)
class State:
    """The module after one pass of the conversion (the first: the program as given)."""

    pass_class: str
    pass_arg: str
    text: str

    @property
    def pass_name(self) -> str:
        return self.pass_arg.split("{", 1)[0]


def conversion_states(program: str, dump: str) -> list[State]:
    """The program, then the module after each pass of an after-change, module-scope dump that
    changed it (a pass whose module is the one before it is dropped)."""
    states = [State("", "", program)]
    found = list(_HEADER.finditer(dump))
    for i, m in enumerate(found):
        body = dump[m.end(): found[i + 1].start() if i + 1 < len(found) else len(dump)].strip("\n") + "\n"
        if body.strip() and body.strip() != states[-1].text.strip():
            states.append(State(m.group(1), m.group(2), body))
    return states


def _static_type(ty: str, shape: Sequence[int]) -> str | None:
    torch = re.match(r"!torch\.vtensor<\[([^\]]*)\],(.+)>$", ty)
    if torch:
        dims = [d.strip() for d in torch.group(1).split(",")] if torch.group(1).strip() else []
        if len(dims) != len(shape) or any(d not in ("?", str(n)) for d, n in zip(dims, shape)):
            return None
        return f"!torch.vtensor<[{','.join(map(str, shape))}],{torch.group(2)}>"
    builtin = re.match(r"tensor<(.*)>$", ty)
    if builtin:
        *dims, element = builtin.group(1).split("x") if builtin.group(1) else [""]
        if "," in element or len(dims) != len(shape) or any(d not in ("?", str(n)) for d, n in zip(dims, shape)):
            return None
        return f"tensor<{'x'.join([*map(str, shape), element])}>"
    return None


def static_twin(text: str, shapes: Sequence[Sequence[int]]) -> str | None:
    """`text` with its first function's arguments that have `?` dims typed static (`shapes`: the
    run's argument shapes, in order) and cast back to their `?` types at entry, so its body is
    unchanged. None: no function, no `?` argument, or an argument the shapes do not fit."""
    m = _FUNC.search(text)
    if m is None:
        return None
    args = _ARG.findall(m.group("args"))
    if len(args) != len(shapes):
        return None
    signature, casts = m.group("args"), []
    for (name, ty, *_), shape in zip(args, shapes):
        if "?" not in ty:
            continue
        static = _static_type(ty, shape)
        if static is None:
            return None
        signature = signature.replace(f"{name}: {ty}", f"{name}_static: {static}", 1)
        op = "torch.tensor_static_info_cast" if ty.startswith("!torch") else "tensor.cast"
        casts.append(f"{m.group('indent')}  {name} = {op} {name}_static : {static} to {ty}\n")
    if not casts:
        return None
    head = f"{m.group('indent')}func.func @{m.group('name')}({signature}){m.group('rest')}{{\n"
    line_end = text.index("\n", m.end()) + 1 if "\n" in text[m.end():] else len(text)
    return text[:m.start()] + head + "".join(casts) + text[line_end:]


def rewritten_ops(before: str, after: str) -> list[str]:
    """The torch and ONNX op names in `before` that are gone from `after` (what a pass converted)."""
    def ops(text: str) -> set[str]:
        return {a or b for a, b in _TORCH_OP.findall(text)}

    return sorted(ops(before) - ops(after))


def pattern_of(pass_name: str, ops: Sequence[str]) -> str:
    """The pattern of `pass_name` that rewrote the only op kind it removed: torch-mlir names each
    decomposition `DecomposeAten<Op>Op` (`torch.aten.instance_norm` -> DecomposeAtenInstanceNormOp),
    the ONNX lowering one pattern per op (`onnx.AveragePool`). "" when it is not one op kind."""
    if len(ops) != 1:
        return ""
    op = ops[0]
    if op.startswith("onnx."):
        return op  # its patterns are registered per ONNX op, not as classes
    if pass_name == _DECOMPOSITION and op.startswith("torch.aten."):
        words = re.split(r"[._]", op[len("torch.aten."):])
        return "DecomposeAten" + "".join(w[:1].upper() + w[1:] for w in words if w) + "Op"
    return ""


def entry_function(text: str) -> str:
    """The first function of a module (what a report shows of the IR before and after a pass)."""
    m = _FUNC.search(text)
    if m is None:
        return text
    closing = text.find(f"\n{m.group('indent')}}}", m.end())
    body = text[m.start(): closing + len(m.group("indent")) + 2 if closing >= 0 else len(text)]
    return "\n".join(line[len(m.group("indent")):] for line in body.splitlines())


@dataclass(frozen=True)
class FrontendFinding:
    pass_name: str = ""
    pass_class: str = ""
    pattern: str = ""
    evidence: str = ""
    before: str = ""  # the entry function before and after the pass (untrimmed)
    after: str = ""


def find_frontend_pass(states: list[State], shapes: Sequence[Sequence[int]], judge: Callable[[str], Values],
                       lane: str) -> FrontendFinding:
    """The pass after which the static twin of the module computes wrong values (see the module
    text); `judge` compiles a module from the start on `lane` and runs it. A finding without a
    pass says why not."""
    twins = [static_twin(s.text, shapes) for s in states]
    if twins[0] is None:
        return FrontendFinding(evidence="its conversion was not searched pass by pass: the program has no dynamic "
                                        "argument dim to make static")
    # the modules whose twin can be made (torch-level ones, before the function takes the ABI's types)
    last = next((i - 1 for i, twin in enumerate(twins) if twin is None), len(twins) - 1)
    # the first module whose twin is right: a wrong value is not written before it. Not always the
    # program itself: the ONNX lowering types its results from the `?` it is given, so an ONNX
    # program's own twin keeps the `?` (measured), while the torch module after it does not
    lo, first = -1, Values.UNUSABLE
    for i in range(min(last, FIRST_TRIES - 1) + 1):
        first = judge(twins[i] or "")
        if first == Values.RIGHT:
            lo = i
            break
    if lo < 0:
        # said of the twin, which is what was run: an audit read "made static the program does not compile"
        # over a StableHLO sort that, written with static types, compiles and fails the same way
        return FrontendFinding(evidence=(
            "its conversion was not searched pass by pass: with its dynamic argument dims made static the program "
            "computes wrong values too" if first == Values.WRONG else
            "its conversion was not searched pass by pass: its static twin (each argument typed with this run's "
            "sizes and cast back to `?` at entry) did not compile and run here"))
    if lo == last or judge(twins[last] or "") != Values.WRONG:
        return FrontendFinding(evidence=(
            f"made static, the IR is right up to the last module whose arguments can be (after "
            f"{states[last].pass_class or 'the start'}): the wrong value is not written by a pass before it"))
    hi = last  # twin of states[lo] right, of states[hi] wrong
    while hi - lo > 1:
        mid = (lo + hi) // 2
        verdict = judge(twins[mid] or "")
        if verdict == Values.UNUSABLE:
            return FrontendFinding(evidence=f"the IR after {states[mid].pass_class}, made static, does not compile and "
                                            "run: the passes after it could not be replayed")
        lo, hi = (mid, hi) if verdict == Values.RIGHT else (lo, mid)
    culprit = states[hi]
    ops = rewritten_ops(states[lo].text, culprit.text)
    pattern = pattern_of(culprit.pass_name, ops)
    rewrote = f" (it rewrote {', '.join(ops)}" + (f": {pattern}" if pattern else "") + ")" if ops else ""
    return FrontendFinding(culprit.pass_name, culprit.pass_class, pattern, before=entry_function(states[lo].text),
                           after=entry_function(culprit.text), evidence=(
        f"with its dynamic argument dims made static at entry (the sizes this run has), the IR before "
        f"{culprit.pass_class} ({culprit.pass_name}) compiles to the right values on {lane} and the IR after it to the "
        f"wrong ones: the pass wrote the wrong value into the IR while the dim was `?`{rewrote}"))


def onnx_lowering(states: list[State]) -> FrontendFinding:
    """The pass that lowered the program's ONNX ops (`torch.operator "onnx.X"`) to torch ops, with
    the ops it lowered (a finding without a pass when no pass did)."""
    for before, after in zip(states, states[1:]):
        ops = [op for op in rewritten_ops(before.text, after.text) if op.startswith("onnx.")]
        if ops:
            return FrontendFinding(after.pass_name, after.pass_class, pattern_of(after.pass_name, ops),
                                   before=entry_function(before.text), after=entry_function(after.text),
                                   evidence=f"{after.pass_class} ({after.pass_name}) lowered {', '.join(ops)} to torch ops")
    return FrontendFinding(evidence="no pass of the conversion lowered an ONNX op")


__all__ = ["FrontendFinding", "State", "conversion_states", "entry_function", "find_frontend_pass", "onnx_lowering", "pattern_of",
           "rewritten_ops", "static_twin"]
