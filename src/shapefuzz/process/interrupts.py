"""How a command stops on a signal. SIGINT raises KeyboardInterrupt and SIGTERM or SIGHUP raise
`Terminated` (a KeyboardInterrupt), so every command unwinds the same way: sandboxed children
killed, temporary folders removed. What stops gracefully on it (a campaign writes its summary and
report, `onnx-suite` and `replay` keep what finished, `shrink` its best so far) still exits
128 + the signal (130, 143, 129): a CI job killed by its timeout never reads as a success.

Ray's `ray.init` installs its own SIGTERM handler (a bare `sys.exit`): `install()` again after it."""

from __future__ import annotations

import signal
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []  # the signals that stopped this process, latest last


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C (sandboxed children killed, temporaries removed)."""


class Cancelled(BaseException):
    """A sandboxed call refused or cut short because the command is stopping (the main thread took
    the signal; this is another thread's call). Not an Exception: no `except Exception` keeps it."""


def handler(signum: int, frame: object) -> None:
    _received.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated()


def install() -> dict[int, Any]:
    """Ours for SIGINT, SIGTERM and SIGHUP (main thread only); returns the handlers it replaced."""
    return {sig: signal.signal(sig, handler) for sig in SIGNALS}


def ours(sig: int = signal.SIGTERM) -> bool:
    return signal.getsignal(sig) is handler


def exit_code(error: BaseException | None = None) -> int:
    """128 + the signal that stopped the command; without one recorded, 143 for `Terminated`
    and 130 for any other KeyboardInterrupt."""
    if _received:
        return 128 + _received[-1]
    return 143 if isinstance(error, Terminated) else 130


def word(error: BaseException | None = None) -> str:
    """'terminated' (SIGTERM, SIGHUP) or 'interrupted' (Ctrl-C), for the one line a stop prints."""
    return "interrupted" if exit_code(error) == 130 else "terminated"


def forget() -> None:
    """A command run in-process (tests): the next one starts with no signal recorded."""
    _received.clear()


__all__ = ["Cancelled", "SIGNALS", "Terminated", "exit_code", "forget", "handler", "install", "ours", "word"]
