"""Durations as people type them ("45s", "90m", "8h", "1h30m", "2d", a bare number of seconds) and
as they are shown. One parser, so every `--time` accepts the same forms."""

from __future__ import annotations

import math
import re

from shapefuzz.errors import UsageError

_SIMPLE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_COMPOUND = re.compile(r"(?:\s*\d+(?:\.\d+)?\s*[smhd])+\s*")
_MAX_SECONDS = 100 * 365 * 86400.0  # past this a budget is no limit; inf would break the arithmetic
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str | float, flag: str = "--time") -> float:
    """Seconds, more than zero. A number is taken as seconds; a bad value is one UsageError line."""
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        raw = str(text).strip().lower()
        if _COMPOUND.fullmatch(raw):
            seconds = sum(float(n) * _UNITS[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)\s*([smhd])", raw))
        else:
            match = _SIMPLE.match(raw)
            if not match:
                raise UsageError(f"{flag} {text!r}: not a duration; write e.g. 45s, 90m, 8h or 1h30m")
            seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if math.isnan(seconds):  # (a number given by a caller; the text forms cannot spell it)
        raise UsageError(f"{flag} {str(text)[:40]!r}: not a duration; write e.g. 45s, 90m, 8h or 1h30m")
    if seconds <= 0:
        raise UsageError(f"{flag} {text!r}: the budget must be more than zero")
    if not math.isfinite(seconds) or seconds > _MAX_SECONDS:
        raise UsageError(f"{flag} {str(text)[:40]!r}: too long; at most {_MAX_SECONDS // 86400:.0f} days, or 'none'")
    return seconds


def parse_budget(value: str | float | None, flag: str) -> float | None:
    """A step's budget as a request carries it: None (its default) stays None, 0 means "off",
    anything else is `parse_duration`'s (text or a number: finite and more than zero)."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return 0.0
    return parse_duration(value, flag)


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"
