"""Which pass failed, read from the compiler's own output.

A compile failure names its pass in the header `--mlir-print-ir-after-failure` prints
(`// -----// IR Dump After ConvertTorchToLinalg Failed: convert-torch-to-linalg{...} //----- //`);
the first such header that is not a pipeline adaptor is the innermost pass, the one that failed.
A crash names it through its backtrace: the first `<X>Pass::runOnOperation` frame below the signal
handler. `action_log` is a second source (the last pass begun and not completed in a
`--log-actions-to` file); `last_pass_in_action_log` reads it, so a coverage log fits in here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from shapefuzz.triage.paths import fold_paths

PRINT_IR_AFTER_FAILURE = "--mlir-print-ir-after-failure"

_DUMP_HEADER = re.compile(r"^// -----// IR Dump After (\S+) Failed(?:: ([^\s{]+)(\{[^\n]*?\})?)?(?: \(([^)\n]*)\))? //----- //$",
                          re.MULTILINE)
_ADAPTORS = re.compile(r"(?:Adaptor|PassManager|Pipeline)Pass$|^iree-op-pipeline-adaptor$")
# LLVM's backtrace: " #4 0x00007f... symbol(args) File.cpp:0:0" or " #4 0x... (/lib/x.so+0x3c050)"
_FRAME = re.compile(r"^\s*#(\d+) 0x[0-9a-fA-F]+ (.*)$", re.MULTILINE)
# a library's path may start with a folded folder (triage.paths: `(<home>/env/lib/libc.so.6+0x3c050)`)
_HANDLER_FRAME = re.compile(r"^(?:llvm::sys::\w+|SignalHandler\b|__restore_rt|\((?:(?:<[\w-]+>)?/[^)]*)?lib(?:c|pthread)[.-][^)]*\)"
                            r"|(?:__GI_)?raise\b|abort\b|__pthread_kill|pthread_kill|gsignal)")
# a pass's own frame; torch-mlir's classes do not end in "Pass" (ConvertTorchToLinalg::runOnOperation);
# never the pass manager's own (`OpToOpPassAdaptor::runOnOperation...`)
_RUN_ON = re.compile(r"(\w+)(?:<[^>]*>)?::runOnOperation\b")
_NOT_A_PASS = re.compile(r"(?:Adaptor|PassManager|PassExecutor)$")


# a pass's command-line argument, as releases up to 3.6 print it in parentheses (options, if any, dropped)
_PAREN_ARGUMENT = re.compile(r"([\w.-]+)(?:\{.*\})?")


def _header_argument(match: re.Match[str]) -> str | None:
    """The pass argument a dump header names: `Failed: canonicalize{...}` (3.12 and later) or
    `Failed (canonicalize)` (3.0 to 3.6, which print the class without its `Pass` suffix,
    `Canonicalizer`), so one pass reads alike whichever release failed in it."""
    if match.group(2):
        return match.group(2)
    paren = _PAREN_ARGUMENT.fullmatch(match.group(4) or "")
    return paren.group(1) if paren else None


def pass_in_frame(frame: str) -> str | None:
    """The pass class whose `runOnOperation` a frame is, or None (the pass manager's own are none)."""
    found = _RUN_ON.search(frame)
    return found.group(1) if found and not _NOT_A_PASS.search(found.group(1)) else None


def failing_pass(output: str, action_log: str | Path | None = None) -> str | None:
    """The name of the pass that failed (its command-line argument when printed, else its class),
    or None when the output does not say. Compile errors: the IR-dump header; crashes: the
    backtrace; else the action log's last pass begun and not completed."""
    for match in _DUMP_HEADER.finditer(output):
        cls, arg = match.group(1), _header_argument(match)
        if not (_ADAPTORS.search(cls) or (arg and _ADAPTORS.search(arg))):
            return arg or _short_class(cls)
    frames = crash_frames(output, limit=64)
    for frame in frames:
        found = pass_in_frame(frame)
        if found:
            return found
    if action_log is not None:
        return last_pass_in_action_log(action_log)
    return None


# passes that run in every phase of the pipeline (and inside other passes: the inliner runs
# canonicalize on what it inlines): failing in one says nothing of where until the phase is known
_GENERIC = frozenset({"canonicalize", "canonicalizer", "cse", "inline", "inliner", "symboldce", "sccp",
                      "loopinvariantcodemotion", "ireeutilapplypatterns", "ireeutilfoldglobals"})


def is_generic_pass(name: str) -> bool:
    """Whether `name` (an argument or a class) is a pass that runs in every phase (canonicalize, cse)."""
    key = re.sub(r"[^a-z0-9]", "", _short_class(name).lower())
    return bool(key) and re.sub(r"pass$", "", key) in _GENERIC


def enclosing_passes(output: str) -> list[str]:
    """The failing pass and the passes it ran inside, innermost first, from the headers
    `--mlir-print-ir-after-failure` prints (one per nesting level: canonicalize failing inside the
    inliner prints both); pipeline adaptors left out."""
    found = []
    for match in _DUMP_HEADER.finditer(output):
        cls, arg = match.group(1), _header_argument(match)
        if not (_ADAPTORS.search(cls) or (arg and _ADAPTORS.search(arg))):
            found.append(arg or _short_class(cls))
    return list(dict.fromkeys(found))


# the rewrite drivers' own `matchAndRewrite` (every pattern runs through them): they name no pattern
_DRIVER_PATTERN = re.compile(r"^(?:PatternApplicator|RewritePattern|OpRewritePattern|OpOrInterfaceRewritePatternBase|"
                             r"ConversionPattern|OpConversionPattern|OpInterfaceRewritePattern|RewritePatternSet)$")
_MATCH_AND_REWRITE = re.compile(r"(\w+)(?:<[^>]*>)?::(?:matchAndRewrite|rewrite)\b")
HANG_STACK_FRAMES = 256  # a hang's stack is read this deep for its pass (nested pipelines run deep)


def hang_place(output: str) -> str | None:
    """Where a compile stopped with SIGABRT past its timeout hangs, from the stack LLVM's handler
    printed: the innermost pass on it, and when that pass runs in every phase (canonicalize) the
    first pass it ran inside ("Canonicalizer in LLVMCPULowerExecutableTargetPass"). Never the top
    frames: a hang's stack is caught at any point of its loop, its pass is on every one."""
    passes = [p for p in (pass_in_frame(f) for f in crash_frames(output, HANG_STACK_FRAMES)) if p]
    if not passes:
        return None
    outer = next((p for p in passes[1:] if not is_generic_pass(p)), None) if is_generic_pass(passes[0]) else None
    return f"{passes[0]} in {outer}" if outer else passes[0]


def hang_pattern(output: str) -> str | None:
    """The rewrite pattern a hanging compile was applying when stopped (its `matchAndRewrite`
    frame above the pass's), or None: shown to a reader, never part of an identity (the next stop
    may land elsewhere in the same loop)."""
    for frame in crash_frames(output, HANG_STACK_FRAMES):
        if pass_in_frame(frame):
            return None
        found = _MATCH_AND_REWRITE.search(frame)
        if found and not _DRIVER_PATTERN.match(found.group(1)):
            return found.group(1)
    return None


def last_pass_in_action_log(path: str | Path) -> str | None:
    """The pass a compile was in when it failed, from its `--log-actions-to` file (the coverage
    parser reads it: the innermost pass still open, else the last begun); None when unreadable."""
    from shapefuzz.coverage.actionlog import read_action_log

    coverage = read_action_log(path)
    return (coverage.failing_pass or None) if coverage is not None else None


def _short_class(name: str) -> str:
    return name.rsplit("::", 1)[-1]


def crash_frames(output: str, limit: int = 8, *, contiguous: bool = False) -> list[str]:
    """The compiler's own frames of a crash backtrace, top first: LLVM's signal-handling frames
    and libc's are skipped; each frame is the symbol (or `lib.so+offset` when not symbolized)
    with its source file, address and argument lists dropped. `contiguous`: only the backtrace's
    first unbroken run, since numbering that jumps (`#5` then `#23`) means an excerpt cut frames
    out, and what follows the cut is not the caller of what precedes it."""
    frames: list[str] = []
    last = None
    for match in _FRAME.finditer(output):
        number, text = int(match.group(1)), match.group(2).strip()
        if not frames and _HANDLER_FRAME.match(text):
            continue
        if contiguous and last is not None and number != last + 1:
            break
        last = number
        frames.append(_frame_name(text))
        if len(frames) >= limit:
            break
    return frames


def raw_frames(output: str, limit: int = 16) -> list[str]:
    """The backtrace's lines below the signal handler, whole (for a report), top first."""
    found = list(_FRAME.finditer(output))
    lines = [m.group(0).rstrip() for m in found]
    start = next((i for i, m in enumerate(found) if not _HANDLER_FRAME.match(m.group(2).strip())), len(lines))
    return lines[start:start + limit]


def _frame_name(text: str) -> str:
    text = re.sub(r"\s+\S+\.(?:cpp|cc|c|h|hpp|inc):\d+(?::\d+)?$", "", text)  # "File.cpp:0:0"
    lib = re.fullmatch(r"\((?:.*/)?([^/()]+\+0x[0-9a-fA-F]+)\)", text)
    if lib:  # not symbolized: the library and offset are still one place in one release
        return lib.group(1)
    text = re.sub(r"\s*\((?:<[\w-]+>)?/[^)]*\)$", "", text)  # "(/path/libIREECompiler.so+0x5b94348)", "(<iree>/...)"
    return _strip_args(text)


def _strip_args(symbol: str) -> str:
    """`ns::f(int, char**)::$_2::operator()(x) const` -> `ns::f::$_2::operator()`: argument lists
    vary with nothing that tells bugs apart."""
    out, depth = [], 0
    i = 0
    while i < len(symbol):
        ch = symbol[i]
        if ch == "(" and symbol.startswith("(anonymous namespace)", i) and depth == 0:
            out.append("(anonymous namespace)")
            i += len("(anonymous namespace)")
            continue
        if ch == "(":
            if depth == 0 and out and "".join(out).endswith("operator"):
                out.append("()")
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
        i += 1
    text = "".join(out)
    text = re.sub(r"\s+const\b", "", text)
    return re.sub(r"\s+", " ", text).strip()


def strip_ir_dumps(text: str) -> str:
    """The output without the IR the dump flag printed: each dump is reduced to its header line,
    the headers listed after the diagnostics (innermost pass first), so errors and backtraces stay
    readable and the failing pass stays findable."""
    headers = list(_DUMP_HEADER.finditer(text))
    if not headers:
        return text
    out, last = [], 0
    for match in headers:
        out.append(text[last:match.end()])
        rest = text[match.end():]
        # a dump runs until the next diagnostic, header, backtrace or end
        stop = re.search(r"^(?:// -----// IR Dump|[^\s\"%^}].*?(?:error|warning|note): |Please report|Stack dump:|"
                         r"LLVM ERROR|\s*#\d+ 0x)", rest, re.MULTILINE)
        last = match.end() + (stop.start() if stop else len(rest))
        out.append("\n")
    out.append(text[last:])
    kept = re.sub(r"\n{2,}", "\n", "".join(out))
    # the headers after the diagnostics (a threaded compile may print its dumps first), in order
    lines = kept.splitlines()
    dumps = [line for line in lines if _DUMP_HEADER.match(line)]
    return "\n".join([line for line in lines if not _DUMP_HEADER.match(line)] + dumps) + "\n"


_HOST_CPU_ATTR = re.compile(r"\b(cpu_features = )\"[^\"]*\"")


def clean_output(text: str, folds: Iterable[tuple[str, str]] = ()) -> str:
    """A compiler's output as we keep it: machine paths folded first (triage.paths: the call's own
    folders in `folds`, any site-packages, the temporary and home folders), so no length budget
    after this depends on where anything is installed; IR dumps reduced to their headers, the host's
    CPU feature string (hundreds of characters, different per machine) folded."""
    return _HOST_CPU_ATTR.sub(r'\1"<host>"', strip_ir_dumps(fold_paths(text, folds)))


def is_pass_header(line: str) -> bool:
    """An IR-dump header of a pass that is no pipeline adaptor (the first such names the failing pass)."""
    match = _DUMP_HEADER.match(line)
    if match is None:
        return False
    return not (_ADAPTORS.search(match.group(1)) or (match.group(2) and _ADAPTORS.search(match.group(2))))


def is_dump_header(line: str) -> bool:
    """Whether a line is the header `--mlir-print-ir-after-failure` prints before a dump."""
    return bool(_DUMP_HEADER.fullmatch(line))


def frame_of(line: str) -> tuple[int, str] | None:
    """A backtrace line's number and text (symbol, file), or None when it is not a frame."""
    found = _FRAME.fullmatch(line)
    return (int(found.group(1)), found.group(2).strip()) if found else None


def is_handler_frame(text: str) -> bool:
    """Whether a frame's text is LLVM's signal handling or libc's (above the compiler's own frames)."""
    return bool(_HANDLER_FRAME.match(text))


__all__ = ["HANG_STACK_FRAMES", "PRINT_IR_AFTER_FAILURE", "clean_output", "crash_frames", "enclosing_passes",
           "failing_pass", "frame_of", "hang_pattern", "hang_place",
           "is_dump_header", "is_generic_pass", "is_pass_header", "is_handler_frame", "last_pass_in_action_log",
           "pass_in_frame", "raw_frames", "strip_ir_dumps"]
