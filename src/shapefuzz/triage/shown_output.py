"""What an issue text shows of a compile failure's output: what an engineer reads, not all it printed.

Kept: the diagnostics (each error and note line with its source line and caret), the op a "see
current operation" note prints (its first lines), and the one IR-dump header naming the failing
pass (the innermost, `failing_pass`'s). Folded: the `#hal.executable.target<...>` attribute to its
backend, format and chip (`cpu`, `arch`), the ~3 KB of features and layout being the same on every
report. Left to the attached output file: the outer passes' dump headers (the pipeline that ran
the failing pass) and any op dump or line past the caps below.
"""

from __future__ import annotations

import re

from shapefuzz.triage.failing_pass import is_dump_header, is_pass_header

OP_LINES = 8  # of the op a "see current operation" note prints
LINE_WIDTH = 400  # of any line shown
MAX_LINES = 40  # of the whole

_TARGET = "#hal.executable.target<"
_ESSENTIAL = re.compile(r"\b(cpu|arch) = \"([^\"]*)\"")
_DIAGNOSTIC = re.compile(r"^(?:\S+:\d+:\d+: |<unknown>:\d+:\d+: |\S+: )?(?:error|note|warning|remark): ")
_OP_CUT = "[... the rest of this op is in the attached output ...]"
_CUT_MARK = re.compile(r"^\[\.\.\. \d+ characters cut \.\.\.\]$|^\.\.\. \[\d+ bytes cut\] \.\.\.$")


def fold_targets(line: str) -> str:
    """Each `#hal.executable.target<"backend", "format", {...}>` in `line` as
    `#hal.executable.target<"backend", "format", {cpu = "znver4", ...}>` (the chip kept, the rest
    said dropped); an attribute cut before its end is folded to the line's end."""
    out, start = [], 0
    while (at := line.find(_TARGET, start)) >= 0:
        out.append(line[start:at])
        depth, end, quoted = 0, len(line), False
        for i in range(at + len(_TARGET) - 1, len(line)):
            ch = line[i]
            if ch == '"':
                quoted = not quoted
            elif not quoted and ch == "<":
                depth += 1
            elif not quoted and ch == ">" and line[i - 1] != "-":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
        body = line[at + len(_TARGET):end]
        head = re.match(r"\s*(\"[^\"]*\")(?:,\s*(\"[^\"]*\"))?", body)
        names = ", ".join(g for g in (head.groups() if head else ()) if g)
        chips = "".join(f"{k} = \"{v}\", " for k, v in dict(_ESSENTIAL.findall(body)).items())
        out.append(f"{_TARGET}{names}, {{{chips}...}}>")
        start = end
    out.append(line[start:])
    return "".join(out)


def _failing_header(lines: list[str]) -> int | None:
    """The index of the innermost (first non-adaptor) IR-dump header, else of the first."""
    headers = [i for i, line in enumerate(lines) if is_dump_header(line)]
    return next((i for i in headers if is_pass_header(lines[i])), headers[0] if headers else None)


def shown_compile_output(detail: str) -> tuple[str, bool]:
    """The lines of a compile failure's output an issue text shows, and whether any was left out
    (then the text points to the whole in the attached files)."""
    lines = detail.strip().split("\n")
    header = _failing_header(lines)
    kept: list[str] = []
    cut = False
    kept_last: str | None = None  # the last line of `lines` kept as it is
    in_op = -1  # lines of the current "see current operation" dump kept so far; -1: not in one
    for i, line in enumerate(lines):
        if is_dump_header(line):
            if i == header:
                kept.append(line)
            else:
                cut = True
            in_op = -1
            continue
        if _DIAGNOSTIC.match(line):
            in_op = 0 if "see current operation" in line else -1
        elif in_op >= 0:  # inside the op the note prints, then the note's source line and caret
            if line.strip() == "^" and i and lines[i - 1] is not kept_last:
                kept.append(lines[i - 1][:LINE_WIDTH])  # the source line the caret is under
            elif in_op >= OP_LINES or _CUT_MARK.match(line.strip()):
                if kept[-1:] != [_OP_CUT]:
                    kept.append(_OP_CUT)
                in_op, cut = OP_LINES, True
                continue
            else:
                in_op += 1
        folded = fold_targets(line)
        if len(folded) > LINE_WIDTH:
            folded = folded[:LINE_WIDTH * 2 // 3] + " [...] " + folded[-LINE_WIDTH // 4:]
            cut = True
        kept.append(folded)
        kept_last = line
    if len(kept) > MAX_LINES:
        kept, cut = kept[:MAX_LINES] + ["[... more lines in the attached output ...]"], True
    return "\n".join(kept), cut


__all__ = ["LINE_WIDTH", "MAX_LINES", "OP_LINES", "fold_targets", "shown_compile_output"]
