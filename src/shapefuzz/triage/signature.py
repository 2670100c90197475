"""Normalized failure signatures: the same bug hit through different shapes, SSA names, files
or dispatch names folds to one signature; different error messages stay apart."""

from __future__ import annotations

import re
import signal as signal_module

from shapefuzz.model import ProcessResult, Signature, Stage, Status

_FOLDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"loc\((?:[^()]|\([^()]*\))*\)", ""),  # MLIR locations
        (r"\b(cpu(?:_features)? = )\"[^\"]*\"", r'\1"<host>"'),  # the host CPU: differs per machine
        # Each of these starts only where its token starts (the look-behind): tried from every
        # character of `a/a/a/...`, it was quadratic (a 120 KB line took over a minute).
        (r"(?<![\w.\-/])(?:[\w.\-]*/)+[\w.\-]+(?::\d+)+", "<path>"),  # path/to/file.cc:12:3
        (r"\"[^\"\s]*\.(?:mlir|vmfb|npy|cc|cpp|c|h)\"", "<file>"),
        (r"<stdin>(?::\d+)+", "<file>"),
        (r"(?<![\w.\-])[\w.\-]+\.(?:mlir|vmfb|npy)(?::\d+)*", "<file>"),
        # an address starts a token: the `0x2` in a shape `60x21` or a type `10xf32` is no address (folded
        # there, one conv dispatch `main_dispatch_0_conv_60x21x2x16x5_f32` named one bug three ways)
        (r"(?<![\w.])0x[0-9a-fA-F]+", "<addr>"),
        (r"%[\w.$\-#]+", "%_"),  # SSA values
        (r"\^[\w.$\-]+", "^_"),  # block labels
        (r"@[\w.$\-]*_dispatch_[\w.$\-]*", "@dispatch"),  # dispatch/executable names
        (r"(?<![\w$])_?[\w$]*_dispatch_\d+\w*", "dispatch"),  # (`main$async_dispatch_1_sort_Dxf32` too)
        (r"(?<=[<x\[ ,(])(?:\d+|\?)(?=x)", "N"),  # dims in shapes: tensor<4x?x8xf32>
        (r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])", "N"),  # free-standing numbers
        (r"#map\d*", "#map"),
        (r"\s+", " "),
    )
)

_ERROR_LINE = re.compile(r"error:\s*(.*)")
_FATAL = re.compile(r"(LLVM ERROR:.*|Assertion [`'](?:(?!Assertion )[^\n])*' failed.*|UNREACHABLE executed.*|terminate called.*)")
_RUNTIME_STATUS = re.compile(r"\b([A-Z_]{4,}); (.*)")  # iree status: "INVALID_ARGUMENT; message"
_STACK_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in )?([\w:~<>]+)")
_BORING_FRAME = re.compile(r"^(llvm::sys::|SignalHandler|__restore_rt|abort|raise|__GI_|_start|__libc|main$|std::)")

# LLVM's crash banner and stack dump header: what every crash prints, naming none
_BANNER = re.compile(r"Please report issues to|Stack dump:|\d+\.\s+Program arguments:|\s*#\d+ 0x")
MAX_MESSAGE = 240
MAX_NORMALIZED = 4096  # of a line, the most that is normalized: the message keeps its first 240
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")  # \t..\r and \x1c-\x1f are whitespace, folded below


def normalize(text: str) -> str:
    text = _CONTROL.sub("?", text[:MAX_NORMALIZED])  # garbage output: a signature is one printable line (corpus schema)
    for pattern, replacement in _FOLDS:
        text = pattern.sub(replacement, text)
    return text.strip()[:MAX_MESSAGE]


def first_error_line(text: str) -> str:
    """The first meaningful line of a tool's error output."""
    fatal = _FATAL.search(text)
    for line in text.splitlines():
        match = _ERROR_LINE.search(line)
        if match and match.group(1).strip():
            # A fatal error printed after an ordinary one still names the real bug.
            return fatal.group(1) if fatal else match.group(1)
    if fatal:
        return fatal.group(1)
    for line in text.splitlines():
        match = _RUNTIME_STATUS.search(line)
        if match:
            return f"{match.group(1)}; {match.group(2)}"
    for line in text.splitlines():
        if line.strip() and not _BANNER.match(line.strip()):
            return line.strip()
    return ""


def top_frame(text: str) -> str | None:
    """The first stack frame outside signal handling and libc: tells crashes apart."""
    for line in text.splitlines():
        match = _STACK_FRAME.match(line)
        if match and not _BORING_FRAME.match(match.group(1)):
            return match.group(1)
    return None


def classify(result: ProcessResult) -> Status:
    """Status of a finished child process (OK when it exited 0)."""
    if result.timed_out:
        return Status.TIMEOUT
    if result.out_of_memory:
        return Status.OOM
    if result.signal is not None or _FATAL.search(result.stderr):
        return Status.CRASH
    return Status.OK if result.returncode == 0 else Status.ERROR


def signature_for(backend: str, stage: Stage, status: Status, result: ProcessResult | None, detail: str = "") -> Signature:
    """The bucket key of a failure at `stage` on `backend`."""
    if status == Status.TIMEOUT:
        message = "timeout"
    elif status == Status.OOM:
        message = "out of memory"
    elif result is not None:
        text = result.stderr + "\n" + result.stdout
        message = normalize(first_error_line(text))
        if status == Status.CRASH:
            parts = []
            if result.signal is not None:
                try:
                    parts.append(signal_module.Signals(result.signal).name)
                except ValueError:
                    parts.append(f"signal {result.signal}")
            frame = top_frame(text)
            if frame:
                parts.append(f"in {frame}")
            if message:
                parts.append(message)
            message = " ".join(parts) or "crash"
    else:
        message = normalize(detail)
    return Signature(backend=backend, stage=stage, status=status, message=message or status.value)
