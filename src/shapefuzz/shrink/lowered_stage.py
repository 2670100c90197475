"""The lowered stage (issue #43 item 6, "minimal means minimal"): a compile failure of a frontend
spelling (torch, ONNX through torch, StableHLO, TOSA) that the frontend's conversion does not cause
is tried on the linalg that conversion makes, and that text is shrunk in turn.

An audit found ONNX and torch reproducers of codegen bugs that kept a chain of frontend ops where one
linalg op fails the same way: the text passes cannot cut inside one frontend op (a torch convolution
is a pad, a fill and a conv once converted), and IREE engineers read the linalg anyway. The converted
text is the frontend's own output, not ours: for torch, the module just before
`torch-iree-func-conversion` (the end of torch-mlir's conversion, before IREE's ABI wraps it), its
functions and `torch_c` casts turned to builtin tensors by torch-mlir's own
`torch-func-backend-type-conversion` and `torch-finalizing-backend-type-conversion`; for StableHLO
and TOSA, `--compile-to=input`, its `util.func`s spelled as `func.func`s.

A bug of the conversion itself never passes: its converted text compiles (or fails otherwise) and
the oracle refuses it, or, where the conversion made what IREE fails on later, a generated case's own
linalg spelling does not fail the same way, and the case is not lowered. The converted text's shrunk
result is kept where it has no more compute ops (`compute_ops`) than the frontend text's own result,
and may replace the file the shrink started from. Not by the one order: it counts every repeated type's elements and every op of a region, which
the linalg spelling writes out more (a lone `torch.aten.to.dtype` of 1024 i64s counts 5,120 elements,
its `linalg.generic` 7,168; an ONNX ReduceMax is one line, its generic's body six ops).
"""

from __future__ import annotations

import re
from typing import Callable

from shapefuzz.families import linalg_spelling
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.shrink import case_stage, mlirtext, replace_ops
from shapefuzz.shrink.engine import Pass, Problem
from shapefuzz.shrink.iree import Target
from shapefuzz.size import smaller

_TORCH = re.compile(r"!torch\.vtensor|\btorch\.(?:aten|operator|prim)\.?")
_OTHER = re.compile(r"\b(?:stablehlo|mhlo|tosa)\.[a-z_]")
_DUMP = re.compile(r"^// -----// IR Dump Before [^\n]*torch-iree-func-conversion[^\n]*//----- //\n", re.M)
_TORCH_LEFT = re.compile(r"\btorch(?:_c)?\.|!torch\.")
# what the torch conversion's end still has that IREE's input pipeline would take away next
_TO_BUILTIN = "builtin.module(torch-func-backend-type-conversion,func.func(torch-finalizing-backend-type-conversion))"
LOWER_TIMEOUT = 60.0


def frontend_spelled(text: str) -> bool:
    """Whether `text` is written in a frontend dialect IREE converts on input."""
    return bool(_TORCH.search(text) or _OTHER.search(text))


def lowered(text: str, toolchain: Toolchain, timeout: float = LOWER_TIMEOUT) -> str | None:
    """The linalg the frontend's conversion makes of `text` (see the module's doc); None where the
    conversion fails, the release lacks a pass it needs, or something of the frontend is left."""
    if _TORCH.search(text):
        return _torch_lowered(text, toolchain, timeout)
    if _OTHER.search(text):
        return _input_lowered(text, toolchain, timeout)
    return None


def _torch_lowered(text: str, toolchain: Toolchain, timeout: float) -> str | None:
    if toolchain.opt_bin is None:
        return None
    dumped = run_sandboxed(
        [str(toolchain.compile_bin), "-", "--compile-to=input", "-o", "/dev/null",
         "--mlir-print-ir-before=torch-iree-func-conversion", "--mlir-disable-threading"],
        Limits(timeout=timeout), stdin_text=text)
    if not dumped.ok or not (m := _DUMP.search(dumped.stderr)):
        return None
    module = dumped.stderr[m.end():]
    if (n := _DUMP.search(module)) is not None:  # (one dump per module; only the first is wanted)
        module = module[: n.start()]
    builtin = run_sandboxed([str(toolchain.opt_bin), "-", f"--pass-pipeline={_TO_BUILTIN}"],
                            Limits(timeout=timeout), stdin_text=module)
    if not builtin.ok or not builtin.stdout.strip() or _TORCH_LEFT.search(builtin.stdout):
        return None
    return builtin.stdout


_UTIL_FUNC = re.compile(r"\butil\.func\s+(?:(public|private)\s+)?")
_UTIL_SPELLED = (("util.return", "return"), ("util.call ", "call "))


def _input_lowered(text: str, toolchain: Toolchain, timeout: float) -> str | None:
    result = run_sandboxed([str(toolchain.compile_bin), "-", "--compile-to=input", "-o", "-"], Limits(timeout=timeout),
                           stdin_text=text)
    out = result.stdout
    if not result.ok or not out.strip() or _OTHER.search(out):
        return None
    out = _UTIL_FUNC.sub(lambda m: "func.func " + ("private " if m.group(1) == "private" else ""), out)
    for util, plain in _UTIL_SPELLED:
        out = out.replace(util, plain)
    return None if re.search(r"\butil\.", out) else out


_PUBLIC_HEAD = re.compile(r"^\s*func\.func\s+(?!private\b)@[\w$.-]+\((?P<args>[^)]*)\)", re.M)
_ARG_TYPE = re.compile(r"%[\w$.-]+\s*:\s*(?P<type>[^,{]+)")


def tensor_arguments_only(text: str) -> bool:
    """Whether every public function takes tensors only: a step of the converted text may make a scalar
    it extracts an argument (`cut_producers` on a StableHLO loop's `tensor.extract`ed trip count), which
    no check can give inputs for (its final re-check failed: "argument type 'i32' is not a ranked tensor")."""
    return all(m.group("type").strip().startswith("tensor<")
               for head in _PUBLIC_HEAD.finditer(text) for m in _ARG_TYPE.finditer(head.group("args")))


# statements that only name a value (a constant, a list, an empty tensor, a dim) or end the function
_NOT_COMPUTE = re.compile(r"^(?:arith\.constant|tensor\.(?:empty|dim)|torch\.constant\.\w+|torch\.prim\.ListConstruct|"
                          r"torch\.vtensor\.literal|stablehlo\.constant|tosa\.const|(?:func\.|util\.)?return)$")


def compute_ops(text: str) -> int:
    """The function-level statements that compute (a region's ops count once, with their op)."""
    lines = text.splitlines(keepends=True)
    count = 0
    for func in mlirtext.functions(lines):
        for stmt in mlirtext.statements(lines, func):
            body = stmt.text(lines)
            name = (replace_ops.op_name(body) or body.split(None, 1)[0]) if body.strip() else ""
            count += not (_NOT_COMPUTE.match(name) or '"onnx.Constant"' in body)
    return count


NOTE = "lowered to the linalg its frontend's conversion makes, and cut down as text"


def shrink_lowered(best: str, original: str, problem: Problem, target: Target, toolchain: Toolchain,
                   tiers: Callable[[str], list[list[Pass]]], case_text: str | None = None) -> str | None:
    """`best`'s converted text, shrunk by `tiers` under `case_stage.Guard`, where it keeps the
    failure, has no more compute ops than `best` (IREE's own input on a tie: the form its engineers run)
    and may replace `original` (`size.smaller`, as every shrink result must); None otherwise, the
    problem then back on `best` as it was (its bound, and why it stopped). Only for a compile-stage
    failure that does not show at the input phase already (the conversion's own), and, for a generated
    case (`case_text`), one its own linalg spelling shares."""
    if not case_stage.applies(target.signatures.values()) or target.phase == "input":
        return None
    start = case_stage.decase(best)
    low = lowered(start, toolchain) if frontend_spelled(start) else None
    if low is None or (problem.prefilter is not None and not all(problem.prefilter([low]))):
        return None
    # a generated case's own linalg spelling must fail the same way: where it does not, the conversion
    # may have made what fails later (an audit: torch-mlir's ONNX MaxPool typed a pad's dynamic dim
    # static, and ROCm codegen tripped over it), and its linalg would carry that bug to IREE's tracker
    own = linalg_spelling(case_text)
    problem.stats.trials += 1 + (own is not None)
    if (own is not None and not problem.is_interesting(own)) or not problem.is_interesting(low):
        return None
    kept_bound, kept_stop = problem.admissible, problem.stopped_because
    guard = case_stage.Guard(low, target.signatures.values())
    problem.rebase(low, lambda candidate: guard(candidate) and tensor_arguments_only(candidate))
    result = problem.run(tiers(low))
    if compute_ops(result) <= compute_ops(start) and smaller(result, original):
        return result
    problem.rebase(best, kept_bound)
    problem.stopped_because = kept_stop
    return None
