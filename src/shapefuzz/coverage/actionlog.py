"""What one compile did, read from MLIR's action log (`iree-compile --log-actions-to=FILE`): the
passes that ran, the rewrite patterns applied (each with the pass it fired in), and for a compile
that failed or crashed the pass that was running. Nothing here runs the compiler.

The log (IREE 3.13, measured) has one line per action begun and completed, per thread:
    [thread iree-compile] begins (no breakpoint) Action `pass-execution` running `CSEPass` on Operation `util.func` (...)`
    [thread llvm-worker-0] begins (no breakpoint) Action `apply-pattern pattern: FoldTensorCastProducerOp (%0 = ...)`
    [thread iree-compile] completed `pass-execution`
Printed ops may span lines (continuation lines do not start with `[thread `). Pass names are C++
class names (`ConvertConvToIm2ColOpPass`); pattern names are C++ type names, `(anonymous
namespace)::` dropped, some empty (a pattern without a debug name: skipped). A small conv on
llvm-cpu writes 4-10 MB (25-77 k lines); the parse reads at most `max_bytes` and never raises on
what it reads."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# The flags that make a compile write its action log. Ops are printed in generic form: measured on
# 3.13, the pretty printer rebuilds SSA names for every logged op and made a 0.4 s compile cost
# 2.8 s of CPU; generic form costs 0.7 s. Threading off keeps one thread, so the failing pass is
# the last one begun (with threads, other functions' pipelines go on after a failure).
LOG_FLAG = "--log-actions-to"
NOISE_LINE = "ExecutionContext registered on the context"  # printed on stderr when logging is on


def log_flags(path: str) -> tuple[str, ...]:
    return (f"{LOG_FLAG}={path}", "--mlir-print-op-generic", "--mlir-disable-threading")


def strip_noise(stderr: str) -> str:
    """The compiler's stderr without the line logging adds (it would become a crash's message)."""
    if NOISE_LINE not in stderr:
        return stderr
    return "".join(line for line in stderr.splitlines(keepends=True) if line.strip() != NOISE_LINE)


MAX_LOG_BYTES = 256 << 20  # more than this is not read (a logged compile of a large case)
MAX_NAME = 300  # characters kept of a pass or pattern name

_ANON = "(anonymous namespace)::"
# A C++ type name; anything else is a torn line (lines of two threads written into each other).
_PLAUSIBLE = re.compile(r"[\w:<>, *&.\-]+")
# The lines that matter; continuation lines of printed ops do not start with `[thread `.
_LINE = re.compile(
    rb"^\[thread ([^\]\n]{0,200})\] (?:begins \(no breakpoint\) Action `(?:pass-execution` running `([^`\n]{1,2000})`"
    rb"|apply-pattern pattern: ([^\n]{0,2000}))|(completed `pass-execution`))", re.MULTILINE)
CHUNK = 4 << 20


@dataclass(frozen=True)
class CompileCoverage:
    """The passes one compile ran and the (pass, pattern) pairs it applied; `failing_pass` is the
    last pass begun and not completed (a crash) or, when every pass completed, the last one begun
    ("" when the log names none); meaningful for a compile that failed."""

    passes: frozenset[str]
    patterns: frozenset[tuple[str, str]]  # (pass it fired in, or "" outside any pass; pattern)
    failing_pass: str = ""
    truncated: bool = False  # the log was longer than the cap: what was read is kept
    lines: int = 0

    def items(self) -> frozenset[tuple[str, str]]:
        """Everything reached, one set: (pass, "") for a pass, (pass, pattern) for a pattern."""
        return self.patterns | frozenset((p, "") for p in self.passes)


def _name(raw: bytes) -> str:
    name = raw.decode("utf-8", "replace").replace(_ANON, "").strip()[:MAX_NAME]
    return name if _PLAUSIBLE.fullmatch(name) else ""


def _pattern_head(rest: bytes) -> bytes:
    """The pattern's name (raw): up to the ` (` that opens the printed op, outside `<...>`
    (template arguments hold spaces and commas)."""
    i = rest.find(b" (")
    while i >= 0:
        if rest.count(b"<", 0, i) <= rest.count(b">", 0, i):
            return rest[:i]
        i = rest.find(b" (", i + 2)
    return rest


class ActionLogReader:
    """Fed the log in pieces (`feed`, whole lines: `read_action_log` cuts them); `result()` at any
    point. Keeps a stack of open passes per thread; garbage lines are skipped."""

    def __init__(self) -> None:
        self.passes: set[str] = set()
        self.patterns: set[tuple[str, str]] = set()
        self.open: dict[bytes, list[str]] = {}
        self.last_begun = ""
        self.lines = 0
        self._names: dict[bytes, str] = {}

    def _cached(self, raw: bytes) -> str:
        name = self._names.get(raw)
        if name is None:
            if len(self._names) > 100_000:
                self._names.clear()
            name = self._names[raw] = _name(raw)
        return name

    def feed(self, data: bytes) -> None:
        self.lines += data.count(b"\n")
        for match in _LINE.finditer(data):
            thread, pass_name, pattern, completed = match.groups()
            if completed:
                stack = self.open.get(thread)
                if stack:
                    stack.pop()
            elif pass_name is not None:
                name = self._cached(pass_name) or "?"
                self.passes.add(name)
                self.open.setdefault(thread, []).append(name)
                self.last_begun = name
            elif pattern is not None:
                name = self._cached(_pattern_head(pattern))
                if name:
                    stack = self.open.get(thread)
                    self.patterns.add((stack[-1] if stack else "", name))

    def failing_pass(self) -> str:
        still_open = [stack[-1] for stack in self.open.values() if stack]
        if still_open:  # a crash: the innermost pass still running
            return self.last_begun if self.last_begun in still_open else still_open[-1]
        return self.last_begun

    def result(self, truncated: bool = False) -> CompileCoverage:
        return CompileCoverage(frozenset(self.passes), frozenset(self.patterns), self.failing_pass(), truncated,
                               self.lines)


def read_action_log(path: str | Path, max_bytes: int = MAX_LOG_BYTES) -> CompileCoverage | None:
    """The coverage in the log at `path`, reading at most `max_bytes`; None when there is no
    readable log (the compiler did not write one)."""
    reader = ActionLogReader()
    read, tail = 0, b""
    try:
        with open(path, "rb") as handle:
            while True:
                chunk = handle.read(min(CHUNK, max_bytes - read + 1))
                if not chunk:
                    break
                read += len(chunk)
                if read > max_bytes:
                    reader.feed(tail + chunk[: max(0, len(chunk) - (read - max_bytes))].rpartition(b"\n")[0])
                    return reader.result(truncated=True)
                data = tail + chunk
                cut = data.rfind(b"\n") + 1
                reader.feed(data[:cut])
                tail = data[cut:]
                if len(tail) > CHUNK:  # a line longer than a chunk: no action line is that long
                    tail = b""
    except OSError:
        return None
    reader.feed(tail)
    return reader.result()


# A pass's frame in a crash's stack dump: `#5 0x... mlir::...::(anonymous namespace)::FooPass::runOnOperation() Foo.cpp:0:0`
_PASS_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-fA-F]+ [\w:() ]*?(\w+)::runOnOperation\(\)", re.MULTILINE)


def crash_pass(stderr: str) -> str:
    """The innermost pass in a crash's stack dump ("" when no frame names one)."""
    match = _PASS_FRAME.search(stderr)
    return match.group(1) if match else ""


def failing_pass(status: str, stderr: str, coverage: CompileCoverage | None) -> str:
    """The pass a failed compile was in, "" when unknown. `status` is the compile's ("error",
    "crash", "timeout", "oom"). An error exits normally, so its log is whole and the last pass
    begun is the one that failed (checked against --mlir-print-ir-after-failure). A crash loses
    the log's last unwritten block, so the log may name an earlier pass: the stack dump's
    innermost pass frame names it instead. A compile killed for time or memory loses the block
    too and has no stack: unknown. Meant also for triage (bug identity, component)."""
    if status == "crash":
        return crash_pass(stderr)
    if status == "error" and coverage is not None:
        return coverage.failing_pass
    return ""


# Passes a user wants to know were reached, by the lowering they stand for (IREE 3.13 class names,
# from the compiler library's pass registry and the action logs of campaign compiles: the im2col
# lanes' flag runs ConvertConv2DToImg2ColPass). Several run in every pipeline and only act on some
# inputs (DecomposeIm2colPass on GPU targets, SplitReductionPass everywhere), so a pass counts as
# reached when a rewrite pattern fired inside it, not when it merely ran.
PASSES_OF_INTEREST: dict[str, tuple[str, ...]] = {
    "im2col": ("ConvertConv2DToImg2ColPass", "ConvertConvToIm2ColOpPass", "DecomposeIm2colPass"),
    "conv to IGEMM": ("ConvolutionToIGEMMPass",),
    "winograd": ("ConvertConv2DToWinogradPass", "DecomposeWinogradTransformPass"),
    "split reduction": ("SplitReductionPass", "LLVMCPUSplitReductionPass", "TopkSplitReductionPass",
                        "FormSplitReductionDispatchesPass"),
}


__all__ = ["ActionLogReader", "CompileCoverage", "LOG_FLAG", "MAX_LOG_BYTES", "PASSES_OF_INTEREST",
           "crash_pass", "failing_pass", "log_flags", "read_action_log", "strip_noise"]
