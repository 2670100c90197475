"""How a command stops on a signal. SIGINT raises KeyboardInterrupt and SIGTERM or SIGHUP raise
`Terminated` (a KeyboardInterrupt), so every command unwinds the same way: sandboxed children
killed, temporary folders removed. What stops gracefully on it (a campaign writes its summary and
report, `onnx-suite` and `replay` keep what finished, `shrink` its best so far) still exits
128 + the signal (130, 143, 129): a CI job killed by its timeout never reads as a success.

A signal is recorded before it is raised, and a stop owed is never lost:
- Python swallows what a garbage-collection callback, a `__del__` or a weakref callback raises
  (it only prints "Exception ignored in ..."); a stop swallowed so is kept (`sys.unraisablehook`)
  and raised again at the next safe point (`check`: each sandboxed call, each round of a loop);
- inside `holding()` (a temporary folder made and registered, or removed) a signal is kept and
  raised when the block ends, so no folder is left made but not yet owned, or half removed;
- whatever happens to the exception, a command that took a signal never exits 0 or 1
  (`final_code`).

Ray's `ray.init` installs its own SIGTERM handler (a bare `sys.exit`): `install()` again after it."""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []  # the signals that stopped this process, latest last
_owed: list[BaseException] = []  # stops taken but not raised yet (held, or swallowed): raised by `check`
_holding = [0]  # `holding()` blocks open in the main thread
_TAG = "_shapefuzz_signal"  # set on each stop we raise: how a swallowed one is told from others


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C (sandboxed children killed, temporaries removed)."""


class Cancelled(BaseException):
    """A sandboxed call refused or cut short because the command is stopping (the main thread took
    the signal; this is another thread's call). Not an Exception: no `except Exception` keeps it."""


def take(signum: int, stop: BaseException) -> None:
    """What a handler of ours does with a signal: records it, then raises `stop` (or, inside a
    `holding()` block, keeps it for the block's end). A campaign worker's handler raises its
    SystemExit through here too."""
    _received.append(signum)
    setattr(stop, _TAG, signum)
    if _holding[0]:
        _owed.append(stop)
        return
    raise stop


def handler(signum: int, frame: object) -> None:
    take(signum, KeyboardInterrupt() if signum == signal.SIGINT else Terminated())


def _unraisable(hook: Any) -> None:
    """`sys.unraisablehook`: a stop of ours that Python swallowed (raised inside a gc callback, a
    `__del__`) is owed, raised at the next `check`; anything else goes to the hook before ours."""
    if getattr(hook.exc_value, _TAG, None) is not None:
        _owed.append(hook.exc_value)
        return
    _previous_hook[0](hook)


_previous_hook = [sys.unraisablehook]


def keep_swallowed() -> None:
    """Owe the stops Python swallows (idempotent): `install` does it, a campaign worker too."""
    if sys.unraisablehook is not _unraisable:
        _previous_hook[0] = sys.unraisablehook
        sys.unraisablehook = _unraisable


def install() -> dict[int, Any]:
    """Ours for SIGINT, SIGTERM and SIGHUP (main thread only), and the swallowed stops kept;
    returns the handlers it replaced (give them to `restore`)."""
    keep_swallowed()
    return {sig: signal.signal(sig, handler) for sig in SIGNALS}


def restore(previous: dict[int, Any]) -> None:
    """The handlers `install` replaced, and the unraisable hook before ours (in-process runs)."""
    for sig, old in previous.items():
        if old is not None:
            signal.signal(sig, old)
    if sys.unraisablehook is _unraisable:
        sys.unraisablehook = _previous_hook[0]


def check() -> None:
    """A safe point: a stop taken but not raised (swallowed, or held) is raised now. Only in the
    main thread, where signals are taken; elsewhere a no-op (other threads are cancelled)."""
    if _owed and not _holding[0] and threading.current_thread() is threading.main_thread():
        raise _owed.pop()


@contextmanager
def holding() -> Iterator[None]:
    """A block no signal cuts in two: one that lands inside is raised when the block ends. For a
    few steps that must happen together (a folder made and owned, or removed), never for a wait."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals are the main thread's: another thread is never cut by one
        return
    _holding[0] += 1
    try:
        yield
    finally:
        _holding[0] -= 1
    check()


def ours(sig: int = signal.SIGTERM) -> bool:
    return signal.getsignal(sig) is handler


def exit_code(error: BaseException | None = None) -> int:
    """128 + the signal that stopped the command; without one recorded, 143 for `Terminated`
    and 130 for any other KeyboardInterrupt."""
    if _received:
        return 128 + _received[-1]
    return 143 if isinstance(error, Terminated) else 130


def final_code(code: int | None) -> int | None:
    """The exit code a command ends with: 0 (or None) and 1 become 128 + the signal when one was
    taken, however its stop was lost on the way (swallowed where `check` never came again)."""
    if _received and code in (None, 0, 1):
        return exit_code()
    return code


def word(error: BaseException | None = None) -> str:
    """'terminated' (SIGTERM, SIGHUP) or 'interrupted' (Ctrl-C), for the one line a stop prints."""
    return "interrupted" if exit_code(error) == 130 else "terminated"


def forget() -> None:
    """A command run in-process (tests): the next one starts with no signal recorded or owed."""
    _received.clear()
    _owed.clear()
    _holding[0] = 0


__all__ = ["Cancelled", "SIGNALS", "Terminated", "check", "exit_code", "final_code", "forget", "handler",
           "holding", "install", "keep_swallowed", "ours", "restore", "take", "word"]
