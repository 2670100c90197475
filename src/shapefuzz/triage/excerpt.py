"""What is kept of a long output: chosen by its structure, never by where a length budget falls.

A failure's identity is read back from what we keep (triage.identity: the failing pass, a crash's
frames down to its pass's `runOnOperation`). So the lines that say where it failed are kept first,
whole when they fit: the IR-dump headers and a crash's (or a hang's) backtrace from its top down to
and including the frame naming the pass. The budget then goes to the head (the first error lines)
and the tail; what gives way is the middle of long lines and the noise between, never a frame.
When the frames alone are too long, each first loses the contents of its argument lists (which no
identity reads: `failing_pass._strip_args` drops them), then the middle of its longest lines.
Paths are folded before this (triage.paths, through `clean_output`), so an install's depth is not
a length that can push a frame out.
"""

from __future__ import annotations

import re

from shapefuzz.triage.failing_pass import (frame_of, is_dump_header, is_generic_pass, is_handler_frame,
                                           pass_in_frame)
from shapefuzz.triage.identity import IDENTITY_FRAMES

MIN_FRAMES = 12  # kept below the signal handler even when the pass's frame is higher (an issue shows 12)
PASS_DEPTH = 64  # how deep below the handler the pass's frame is looked for (failing_pass reads as deep)
NO_PASS_FRAMES = 32  # kept when no frame that deep names a pass
HEADER_WIDTH = 300  # of each IR-dump header
MIN_WIDTH = 100  # the narrowest a frame is cut to before frames themselves give way
_CUT = "[... {} characters cut ...]"  # triage.identity reads this line as no part of the output


def stack_lines(lines: list[str]) -> list[int]:
    """The indices of the lines of the first backtrace in `lines` that say where it failed: its
    frames from the top (LLVM's handler included) down to and including the first frame naming a
    pass, at least MIN_FRAMES below the handler; for a pass that runs in every phase (a hang in
    canonicalize) down to the first other pass, which places it (failing_pass.hang_place). Lines
    between frames (another thread's warnings) are not the stack."""
    picked: list[int] = []
    below, last, found, done = 0, -1, None, False
    for i, line in enumerate(lines):
        frame = frame_of(line)
        if frame is None:
            continue
        number, text = frame
        if number < last:  # the numbering starts again: a second backtrace
            break
        if number == last:  # a line kept twice (the sandbox's cut keeps a frame it also shows)
            continue
        last = number
        picked.append(i)
        if below == 0 and is_handler_frame(text):
            continue
        below += 1
        name = pass_in_frame(text)
        if name and found is None:
            found, done = len(picked), not is_generic_pass(name)
        elif name and not is_generic_pass(name):
            done = True
        if (done and below >= MIN_FRAMES) or below >= PASS_DEPTH:
            break
    if found is None:  # no pass named: the top of the stack
        return picked[:_count_to(picked, lines, NO_PASS_FRAMES)]
    if not done:  # a pass run everywhere, no other below it in reach: down to it
        return picked[:max(found, _count_to(picked, lines, MIN_FRAMES))]
    return picked


def _count_to(picked: list[int], lines: list[str], below: int) -> int:
    """How many of `picked` reach `below` frames under the handler."""
    seen = 0
    for n, i in enumerate(picked):
        frame = frame_of(lines[i])
        seen += not (seen == 0 and frame is not None and is_handler_frame(frame[1]))
        if seen >= below:
            return n + 1
    return len(picked)


# the first line of each kind that names a failure (signature.first_error_line reads them): a
# diagnostic, a fatal error, an IREE runtime status
_SAYING = (re.compile(r"error:\s*\S"), re.compile(r"LLVM ERROR:|Assertion [`']|UNREACHABLE executed|terminate called"),
           re.compile(r"\b[A-Z_]{4,}; "))


def _saying_lines(lines: list[str]) -> list[int]:
    """The index of the first line of each kind in `_SAYING`."""
    found: set[int] = set()
    for pattern in _SAYING:
        first = next((i for i, line in enumerate(lines) if pattern.search(line)), None)
        if first is not None:
            found.add(first)
    return sorted(found)


def collapse_arguments(frame: str) -> str:
    """A frame line with the contents of its argument lists dropped (`f(int, char**)` -> `f(...)`),
    which leaves the name every reader takes from it unchanged; `(anonymous namespace)`, a
    library's `(lib.so+0x...)` and short lists stay."""
    out: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(frame):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                group = frame[start:i + 1]
                keep = len(group) <= 5 or group == "(anonymous namespace)" or "+0x" in group
                out.append(group if keep else "(...)")
        elif depth == 0:
            out.append(ch)
    if depth:  # unbalanced: an already cut line
        out.append(frame[start:])
    return "".join(out)


def shorten(line: str, width: int) -> str:
    """At most about `width` characters of a line: its start and its end, the middle said cut."""
    if len(line) <= width:
        return line
    mark = f" [... {len(line) - width} characters ...] "
    front = max(1, (width * 2) // 3)
    return line[:front] + mark + line[len(line) - max(1, width - front):]


def short_frame(frame: str, width: int) -> str:
    """A frame line within about `width` characters: first without its argument lists' contents,
    then, still too long, with its middle cut."""
    return shorten(collapse_arguments(frame) if len(frame) > width else frame, width)


def _named(frames: list[str]) -> set[int]:
    """The frames no cut may touch: the top IDENTITY_FRAMES + 1 below the handler (an identity's,
    a reporting frame among them) and each frame naming a pass."""
    named, below = set(), 0
    for n, line in enumerate(frames):
        frame = frame_of(line)
        if frame is None or (below == 0 and is_handler_frame(frame[1])):
            continue
        below += 1
        if below <= IDENTITY_FRAMES + 1 or pass_in_frame(frame[1]):
            named.add(n)
    return named


def _fit_frames(frames: list[str], room: int) -> list[str | None]:
    """The frames within `room` characters (one a line): whole; else without their argument lists'
    contents; else the others than `_named`'s cut in their middle to one width, at least
    MIN_WIDTH; else, at that width, the frames just above the pass's left out (None), which the
    numbering then says."""
    if _cost(frames) <= room:
        return list(frames)
    frames = [collapse_arguments(f) for f in frames]
    if _cost(frames) <= room:
        return list(frames)
    named = _named(frames)

    def cut_to(width: int) -> list[str]:
        return [f if n in named else shorten(f, width) for n, f in enumerate(frames)]

    width = max(len(f) for f in frames)
    while width > MIN_WIDTH and _cost(cut_to(width)) > room:
        width = max(MIN_WIDTH, width * 9 // 10)
    cut: list[str | None] = list(cut_to(width))
    last = max(named) if named else len(cut) - 1
    for n in [*range(len(cut) - 1, last, -1), *range(last - 1, -1, -1)]:  # below the pass's first, then above
        if _cost([f for f in cut if f is not None]) <= room:
            break
        if n not in named:
            cut[n] = None
    return cut


def _cost(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _runs(indices: list[int]) -> int:
    """How many runs of consecutive numbers sorted `indices` make (each may need a cut said before it)."""
    return sum(1 for n, i in enumerate(indices) if n == 0 or indices[n - 1] != i - 1)


def excerpt(text: str, limit: int = 4000) -> str:
    """At most about `limit` characters of `text`: the lines that say what and where it failed
    (IR-dump headers, within two fifths of `limit`; the first error line of each kind; a backtrace
    down to its pass's frame) kept first, then
    the head (the first error lines) and the tail in what is left, whole lines each, a line longer
    than a fifth of `limit` cut in its middle; each cut part is said by a line of its own."""
    if len(text) <= limit:
        return text
    lines = text.split("\n")
    kept: dict[int, str] = {}
    header_room = limit * 2 // 5
    for i, line in enumerate(lines):
        if is_dump_header(line) and len(line[:HEADER_WIDTH]) + 1 <= header_room:
            kept[i] = line[:HEADER_WIDTH]
            header_room -= len(kept[i]) + 1
    width = max(MIN_WIDTH, limit // 5)
    for i in _saying_lines(lines):  # what a signature and an identity read the message from
        kept.setdefault(i, shorten(lines[i], width))
    stack = [i for i in stack_lines(lines) if i not in kept]
    marks = 40 * (_runs(sorted([*kept, *stack])) + 3)  # room for the lines that say what was cut
    room = limit * 4 // 5 - _cost(list(kept.values())) - marks
    for i, frame in zip(stack, _fit_frames([lines[i] for i in stack], room)):
        if frame is not None:
            kept[i] = frame
    rest = max(0, limit - _cost(list(kept.values())) - marks)
    _take(kept, lines, range(len(lines)), rest // 2, width)
    _take(kept, lines, range(len(lines) - 1, -1, -1), rest - rest // 2, width)
    return _join(kept, lines)


def _take(kept: dict[int, str], lines: list[str], order: range, room: int, width: int) -> None:
    """Lines in `order` (from the head or from the tail) into `kept` while they fit in `room`; the
    first line taken may be cut to fit, so a head is never empty for one long line."""
    first = True
    for i in order:
        if i in kept:
            continue
        line = shorten(lines[i], width)
        if len(line) + 1 > room:
            if first and room > 40:
                kept[i] = shorten(line, room - 1)
            return
        kept[i] = line
        room -= len(line) + 1
        first = False


def _join(kept: dict[int, str], lines: list[str]) -> str:
    out: list[str] = []
    gap = 0
    for i, line in enumerate(lines):
        if i in kept:
            if gap:
                out.append(_CUT.format(gap))
                gap = 0
            out.append(kept[i])
        else:
            gap += len(line) + 1
    if gap:
        out.append(_CUT.format(gap))
    return "\n".join(out)


__all__ = ["MIN_FRAMES", "collapse_arguments", "excerpt", "short_frame", "shorten", "stack_lines"]
