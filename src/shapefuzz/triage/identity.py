"""A cause's identity: what makes two failures one bug, across lanes, families and spellings.

The same failing pass (from the compiler's own output), the same crashing frames for a crash, and
the same normalized message. Pass names, op names inside the message and the crashing functions
are kept; numbers, SSA names, shapes and element types, dispatch names, paths and the host's CPU
features are dropped, and so is the op a diagnostic is attached to once the failing pass is known
(one pass rejecting a conv's `linalg.generic` and a scatter's `iree_linalg_ext.scatter` with one
message is one bug). An identity is *strong* when the compiler said where it failed (a pass or
crash frames): failures with equal strong identities are one cause at once. A weak identity
(wrong values, a timeout without a stack, running out of memory, a runtime error) says nothing about where, so
two buckets sharing one become one cause only once a candidate hits both (see campaign.causes.cause_ties),
unless the bucket's verdict names how it comes about (`mechanism_of`): then its identity is that mechanism
on that kind of lane, strong, whatever the family.
A compile timeout stopped with SIGABRT (sandbox) is placed by the pass on its stack, never by its
top frames or its wall-clock: two hangs in one pass are one cause, in two passes two.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from shapefuzz.model import Signature, Status, text_of
from shapefuzz.triage.signature import first_error_line, normalize
from shapefuzz.triage.failing_pass import crash_frames, failing_pass, hang_place
from shapefuzz.triage.target_limits import LIMIT_PREFIX

IDENTITY_FRAMES = 3  # top compiler frames of a crash that name it

_ANCHOR_OP = re.compile(r"^'[\w.]+' op ")
_ANCHORED = re.compile(r"\s*(?:error:\s*)?'([\w.]+)' op ")


def anchor_op(message: str) -> str:
    """The op a diagnostic is attached to (`'tensor.expand_shape' op expected ...`, with or without its
    `error:`), or ""."""
    found = _ANCHORED.match(message)
    return found.group(1) if found else ""
_SHAPED = re.compile(r"\b(tensor|memref|vector)<(?:[^<>]|<[^<>]*>)*>")
_SCALAR_TYPE = re.compile(r"\b(?:[fi]|si|ui|bf)(?:N|\d+)\b")
_HOST_CPU = re.compile(r"\b(cpu(?:_features)? = )\"[^\"]*\"")
_FRAME_NOISE = re.compile(r"\$_\d+|\b\d+\b")
_FATAL = re.compile(r"(LLVM ERROR:.*|Assertion [`'].*' failed.*|UNREACHABLE executed.*|terminate called.*)")
_DISPATCH_NAME = re.compile(r"'[\w$.]*dispatch[\w$.]*'")
# "for backend #hal.executable.target<...>": the target's whole configuration (one per lane: two
# Vulkan profiles printed the same failure as two causes); the failing pass says where it broke
_TARGET_ATTR = re.compile(r"(#hal\.executable\.target<)\S.*$")


# The single-dispatch pipeline runs FoldUnitExtentDims function by function as its own pass
# (`iree-dispatch-creation-fold-unit-extent-dims-for-func`, `FoldUnitExtentDimsForFuncPass`): the same
# patterns, so one bug. Measured: the context bench's rocm single-dispatch cause "[...-for-func]:
# inferred input/output operand #N has shape's dimension #N to be N, but found N" (concat -> pool) fails
# in `iree-dispatch-creation-fold-unit-extent-dims` with that message on plain llvm-cpu, a second cause.
_FOR_FUNC = re.compile(r"-for-func$|ForFunc(?=(?:Pass)?$)")


def one_pipeline(pass_name: str) -> str:
    """A failing pass as an identity names it: its function-by-function form is the pass."""
    return _FOR_FUNC.sub("", pass_name)


@dataclass(frozen=True)
class Identity:
    stage: str
    status: str
    failing_pass: str  # "" when the output does not say
    frames: tuple[str, ...]  # a crash's top compiler frames (normalized), else ()
    message: str  # the message with what varies between hits of one bug folded
    limit: bool = False  # a documented target gap (triage.target_limits): its rule says where, on every lane
    mechanism: bool = False  # a wrong value whose verdict named how it comes about (`mechanism_identity`)

    @property
    def strong(self) -> bool:
        return bool(self.failing_pass or self.frames or self.limit or self.mechanism)

    @property
    def key(self) -> str:
        where = one_pipeline(self.failing_pass) or "?"
        frames = (" in " + " < ".join(self.frames)) if self.frames else ""
        return f"{self.stage}/{self.status} [{where}]{frames}: {self.message}"

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.key.encode()).hexdigest()[:10]

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "failing_pass": self.failing_pass, "frames": list(self.frames),
                "strong": self.strong}


# MLIR's pass-manager and LLVM's callback plumbing: which of these frames sits below a pass depends
# on threading (OpToOpPassAdaptor::run directly, or through a function_ref callback), not on the bug.
_PASS_MANAGER_FRAME = re.compile(r"^(?:mlir::detail::OpToOpPassAdaptor|mlir::PassManager|mlir::detail::PassCrashReproducer"
                                 r"|(?:void )?llvm::function_ref<|llvm::CrashRecoveryContext|mlir::failableParallelForEach)")


# frames every fatal error of one kind passes through (an LLVM ERROR, an unreachable): they name no bug
_REPORTING_FRAME = re.compile(r"^(?:llvm::report_fatal_error|llvm::llvm_unreachable_internal|__assert_fail)")
_RUN_ON_FRAME = re.compile(r"\w+(?<!Adaptor)(?:<[^>]*>)?::runOnOperation\b")  # ConvertTorchToLinalg too
_CUT_MARK = re.compile(r"^\[\.\.\. \d+ characters cut \.\.\.\]$", re.MULTILINE)


def _below_pass_manager(frames: list[str]) -> list[str]:
    """A crash's frames up to (not including) the first pass-manager frame."""
    out = []
    for frame in frames:
        if _PASS_MANAGER_FRAME.match(frame):
            break
        out.append(frame)
    return out or frames[:1]


def pass_frames(output: str, limit: int = IDENTITY_FRAMES) -> tuple[str, ...]:
    """The top frames of a crash inside its failing pass (down to its `runOnOperation`), normalized:
    from the backtrace's first unbroken run only, so a frame an excerpt cut out is never replaced by
    one from after the cut; the frames of LLVM's fatal-error reporting are skipped."""
    frames = [f for f in crash_frames(output, 64, contiguous=True) if not _REPORTING_FRAME.match(f)]
    inside = []
    for frame in _below_pass_manager(frames):
        inside.append(frame)
        if _RUN_ON_FRAME.search(frame):
            break
    return tuple(_FRAME_NOISE.sub("N", f) for f in inside[:limit])


def _fatal_head(message: str) -> str:
    """What names a fatal error, not what it prints after: an assertion's condition, the first
    clause of an LLVM ERROR or an unreachable (its tail quotes IR, shapes, a file and line)."""
    assertion = re.match(r"(Assertion [`'].*?' failed)", message)
    if assertion:
        return assertion.group(1)
    kind, _, rest = message.partition(": ") if message.startswith("LLVM ERROR") else ("", "", message)
    rest = re.split(r": | at |\n", rest, maxsplit=1)[0][:100]
    return f"{kind}: {rest}" if kind else rest


# an op a message prints whole after it ("... marked illegal: %108 = "linalg.generic"(...) ...": the message
# names it already), up to a trailing "(IR made by PASS)" a title adds
_PRINTED_OP = re.compile(r":\s+%[\w#:.$-]+(?:, %[\w#:.$-]+)* = \".*?(?=(?: \(IR made by [^()]*\))?$)")


def without_printed_op(text: str) -> str:
    """`text` without the op its message prints whole (older releases print none)."""
    return _PRINTED_OP.sub("", text)


def fold_message(message: str, pass_known: bool) -> str:
    """A normalized signature message with what differs between hits of one bug folded too."""
    text = _HOST_CPU.sub(r'\1"<host>"', message)
    text = _DISPATCH_NAME.sub("'<dispatch>'", text)  # 'main$dispatch', 'main_dispatch_0_generic'
    text = _TARGET_ATTR.sub(r"\1...>", text)
    text = _SHAPED.sub(lambda m: f"{m.group(1)}<_>", text)
    text = _SCALAR_TYPE.sub("T", text)
    if pass_known:
        text = _ANCHOR_OP.sub("", text)
    return text.strip()


def identity_of(stage: str, status: str, message: str, output: str = "", action_log: str | None = None) -> Identity:
    """The identity of a failure: its stage, status, normalized signature `message` and the raw
    `output` of the tool (the failing pass and crash frames are read from it). A `Stage` or
    `Status` counts as its text (in an f-string a str enum prints its name, `Stage.RUN`)."""
    stage, status = text_of(stage), text_of(status)
    if message.startswith(LIMIT_PREFIX):  # one gap is one cause, whichever pass and lane met it
        return Identity(stage, status, "", (), message, limit=True)
    if status == "timeout":  # the same message whether the signature says where or not (older entries)
        message, passname = "timeout", hang_place(output) if output and stage == "compile" else None
    else:
        passname = failing_pass(output, action_log) if output and stage in ("compile", "verify") else None
    frames: tuple[str, ...] = ()
    if status == "crash" and output:
        frames = pass_frames(output)
        # the crash's own words, not the "Please report" banner, the signal the signature leads with
        # or an excerpt's cut; with frames, only the words that name it (never a message's tail)
        # (normalized before its head is cut: a number's width, a pointer read from the stack as a
        # capacity, moved the cut and split one bug in two, "...for si" and "...for siz")
        fatal = normalize(first_error_line(_CUT_MARK.sub("", output)))
        fatal = _fatal_head(fatal) if frames else fatal
        message = "" if fatal.startswith("Please report") else fatal
    return Identity(stage, status, passname or "", frames, fold_message(message, bool(passname)))


# How a wrong value (or run failure) comes about, as a bucket's triage verdict names it (triage.verdict):
# IREE's i8/i16 emulation losing a tensor's last 32-bit word, a race, a documented limit's rule. One
# mechanism is one bug whatever family showed it (the #43 audit: one i8 emulation bug was a "gather"
# cause and a "conv" cause, and the gather one shared its name with an unrelated llvm-cpu bug).
_MECHANISMS = ((re.compile(r"loses its last word \(IREE's emulation"), "an emulated i8/i16 tensor loses its last 32-bit word"),
               (re.compile(r"a race in the code IREE generates"), "wrong values that change from run to run (a race)"))
_LIMIT_RULE = re.compile(r"\btarget limit ([\w.-]+) \(")


def mechanism_of(evidence: str) -> str:
    """The mechanism a triage verdict's evidence names (module comment above), or ""."""
    for pattern, mechanism in _MECHANISMS:
        if pattern.search(evidence):
            return mechanism
    rule = _LIMIT_RULE.search(evidence)
    return f"target limit {rule.group(1)}" if rule else ""


def mechanism_identity(stage: str, status: str, mechanism: str, lane_kind: str) -> Identity:
    """A wrong value's identity once its verdict named its mechanism: that mechanism on that kind of
    lane (its runtime driver), not its family; strong, so two families' buckets are one cause at once."""
    return Identity(text_of(stage), text_of(status), "", (), f"{mechanism} on {lane_kind}", mechanism=True)


def placed_timeout(signature: Signature, output: str) -> Signature:
    """A compile timeout's signature with where it hangs ("timeout in X"), read from the stack its
    SIGABRT printed: hangs in two passes are two buckets. Unchanged without a pass on the stack."""
    if signature.status != Status.TIMEOUT:
        return signature
    where = hang_place(output)
    from dataclasses import replace

    return replace(signature, message=normalize(f"timeout in {where}")) if where else signature


def with_localized_pass(ident: Identity, where: str) -> Identity:
    """A wrong value's or run-time failure's identity once localized (triage.localize): it carries
    the pass (or phase) where the values first go wrong, so wrong values from two passes are two
    bugs, and it is strong (it says where)."""
    from dataclasses import replace

    return replace(ident, failing_pass=where) if where and not ident.failing_pass else ident


__all__ = ["anchor_op", "IDENTITY_FRAMES", "Identity", "fold_message", "identity_of", "mechanism_identity", "mechanism_of",
           "one_pipeline", "pass_frames",
           "placed_timeout", "with_localized_pass", "without_printed_op"]
