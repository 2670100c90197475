"""The one quoting rule for every value that goes into Markdown we write (bug reports, report.md,
INDEX.md): compiler messages, pass names and anything read from a store or corpus can hold
backticks, `|`, `<img onerror=...>` or `-->`, and none of it may close a span, a comment, a
cell or a code block early, or reach a renderer as live HTML.

- `code`: an inline code span the content cannot close (a backtick run longer than any inside).
- `fenced`: a code block the content cannot close.
- `comment`: the inside of an HTML comment with no `--` left (so no `-->` or `--!>`).
- `text`: plain text, HTML-escaped, backticks escaped (so no code span opens in it).
- `spans`: text that marks its own code spans with single backticks (our evidence sentences):
  each pair becomes a `code` span, the rest `text`.
- `cell`, `code_cell`: the same inside a table row (`|` escaped, one line).

Normal content looks as it did: `code("linalg")` is `` `linalg` `` and `text("a b")` is `a b`."""

from __future__ import annotations

import html
import re
from typing import Any

_RUNS = re.compile(r"`+")
_BREAKS = re.compile(r"[\x00-\x1f\x7f]+")  # line breaks and other control characters: one space


def _one_line(value: Any) -> str:
    return _BREAKS.sub(" ", str(value))


def _longest_run(text: str) -> int:
    return max((len(r) for r in _RUNS.findall(text)), default=0)


def code(value: Any) -> str:
    """An inline code span holding `value` on one line, which no backtick inside can close."""
    body = _one_line(value)
    fence = "`" * (_longest_run(body) + 1)
    if body.startswith(("`", " ")) or body.endswith(("`", " ")):
        body = f" {body} "  # CommonMark strips one space on each side: the content stays whole
    return f"{fence}{body}{fence}"


def fenced(value: Any, lang: str = "") -> list[str]:
    """The lines of a fenced code block that the text cannot close early."""
    body = str(value).rstrip("\n")
    fence = "`" * max(3, _longest_run(body) + 1)
    return [fence + lang, *body.splitlines(), fence]


def comment(value: Any) -> str:
    """Text to put inside `<!-- ... -->`, one line, that cannot end the comment: every `-`
    followed by another gets a space after it (`--->` becomes `- - ->`), so no `--` survives."""
    return re.sub(r"-(?=-)", "- ", _one_line(value))


def text(value: Any) -> str:
    """Plain Markdown text: `<`, `>` and `&` as entities, backslashes and backticks escaped (no
    code span opens; both render as themselves)."""
    return html.escape(str(value), quote=False).replace("\\", "\\\\").replace("`", "\\`")


_SPAN = re.compile(r"`([^`]+)`")


def spans(value: Any) -> str:
    """Text whose single-backtick pairs are its own code spans (a sentence we wrote around flags,
    pass names and IR): each pair becomes a `code` span, the rest `text`; an unpaired backtick
    is text, so nothing read from the compiler can open a span or reach a renderer as HTML."""
    body = _one_line(value)
    out, at = [], 0
    for m in _SPAN.finditer(body):
        out += [text(body[at:m.start()]), code(m.group(1))]
        at = m.end()
    return "".join(out) + text(body[at:])


def cell(value: Any) -> str:
    """Plain text as one table cell: `text`, on one line, with `|` escaped."""
    return text(_one_line(value)).replace("|", "\\|")


def code_cell(value: Any) -> str:
    """A code span as one table cell (GFM splits cells before code spans, so `|` is escaped)."""
    return code(value).replace("|", "\\|")


__all__ = ["cell", "code", "code_cell", "comment", "fenced", "spans", "text"]
