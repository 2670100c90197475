"""`--format lit`: one MLIR file with RUN lines for IREE's lit suite. While the entry is expected
to fail, the RUN lines assert today's failure (`not iree-compile ... | FileCheck` with the error
as a CHECK line, `not --crash` for crashes, `not iree-run-module --expected_output=...` for wrong
numbers) and the comment below them gives the lines that should pass once it is fixed; an entry
marked fixed gets the passing lines as RUN lines."""

from __future__ import annotations

import re
import shlex

from shapefuzz.corpus import comment_text
from shapefuzz.errors import UsageError
from shapefuzz.export.plan import Plan, cannot_represent, inline_value
from shapefuzz.model import Stage, Status


def _check_text(detail: str, status: Status) -> str | None:
    """What FileCheck should find: the fatal message of a crash, else the first error line."""
    if status == Status.CRASH:
        fatal = re.search(r"(LLVM ERROR:.*|Assertion [`'].*' failed)", detail)
        return fatal.group(1).strip()[:200] if fatal else None
    for line in detail.splitlines():
        match = re.search(r"error: (.+)$", line)
        if match:
            return "error: " + match.group(1).strip()
    return None


def _filecheck_literal(text: str) -> str:
    return text.replace("{{", "{{[{][{]}}").replace("[[", "{{[[][[]}}")


# The keywords lit acts on wherever they appear, as lit finds them: its TestRunner compiles
# `(RUN:|XFAIL:|...)(.*)\n` and scans the whole file, so `fooRUN: cmd` runs `cmd` (no word boundary,
# case-sensitive, the colon right after the word). A reproducer holding one could run a command.
_LIT_DIRECTIVE = re.compile(r"(?:RUN|XFAIL|REQUIRES|UNSUPPORTED|ALLOW_RETRIES|DEFINE|REDEFINE):|END\.")


def _lit_safe(value: object) -> str:
    """Text for a lit comment or CHECK line: one line, and no lit keyword (lit finds `RUN:` anywhere
    in a line, so an error message quoting one would become a command)."""
    return _no_directive(comment_text(value))


def _check_pattern(text: str) -> str:
    """A CHECK pattern for the compiler's own line that holds no lit keyword and still matches it:
    `RUN:` becomes `RUN{{:}}` (a FileCheck regex for the same colon)."""
    literal = _filecheck_literal(comment_text(text))
    return _LIT_DIRECTIVE.sub(lambda m: m.group(0)[:-1] + ("{{[.]}}" if m.group(0) == "END." else "{{:}}"), literal)


def _no_directive(text: str) -> str:
    while _LIT_DIRECTIVE.search(text):  # a space before the colon (or dot): lit no longer matches it
        text = _LIT_DIRECTIVE.sub(lambda m: m.group(0).replace(":", " :").replace("END.", "END ."), text)
    return text


def to_lit(p: Plan) -> str:
    cannot_represent(p, "lit")
    sig = p.entry.signature
    directive = _LIT_DIRECTIVE.search(p.entry.mlir)
    if directive:
        raise UsageError(f"entry {p.entry.id}: its reproducer holds the lit directive {directive.group(0)!r}; "
                         "refusing to export it as a lit test (use --format run-module)")
    flags = " ".join(shlex.quote(f) for f in p.flags)
    compile_ok = f"iree-compile %s {flags} -o %t.vmfb"
    run = None
    if p.runs:
        assert p.backend.driver is not None and p.inputs is not None  # what `runs` means
        parts = [f"iree-run-module --module=%t.vmfb --device={shlex.quote(p.backend.driver)} "
                 f"{shlex.quote('--function=' + p.function)}"]
        parts += [f"--input={shlex.quote(inline_value(a))}" for a in p.inputs]
        if p.expected is not None:
            parts += [f"--expected_output={shlex.quote(inline_value(a))}" for a in p.expected]
        run = " ".join(parts)
    passing = [compile_ok] + ([run] if run else [])
    header = [
        f"// Regression test exported by shapefuzz from corpus entry {p.entry.id}.",
        f"// Signature: {_lit_safe(sig)}",
        f"// Seen with IREE {_lit_safe(', '.join(p.entry.toolchain_versions))}; "
        f"expected state: {p.entry.expected_state}.",
        "//",
    ]
    lines: list[str] = []
    if not p.failing or sig.status in (Status.TIMEOUT, Status.OOM):
        lines += [f"// RUN: {cmd}" for cmd in passing]
        if p.failing:
            lines.append(f"// (a {sig.status.value} cannot be asserted by lit; these lines fail until it is fixed)")
    else:
        nots = "not --crash" if sig.status == Status.CRASH else "not"
        check = "[FAILED]" if sig.status == Status.MISMATCH else _check_text(p.entry.meta.get("detail") or "", sig.status)
        command = f"iree-compile %s {flags} -o %t.vmfb" if sig.stage == Stage.COMPILE else run
        if sig.stage != Stage.COMPILE:
            lines.append(f"// RUN: {compile_ok}")
        lines.append(f"// RUN: {nots} {command}" + (" 2>&1 | FileCheck %s" if check else ""))
        if check:
            lines.append(f"// CHECK: {_check_pattern(check)}")
    if p.failing:
        lines += ["//", "// Once fixed, these commands pass (use them as the run lines then):"]
        lines += [f"//   {cmd}" for cmd in passing]
    # Our RUN lines are the only lines lit may act on: every other line (a flag or version from
    # the entry quoted in a comment) has its keywords broken up too.
    ours = [line if line.startswith("// RUN: ") else _no_directive(line) for line in header + lines]
    return "\n".join(ours) + "\n\n" + p.entry.mlir.rstrip("\n") + "\n"
