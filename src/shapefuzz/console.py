"""The console entry point (`shapefuzz`, `python -m shapefuzz`). Its first act, before click,
NumPy or any module of ours is imported, is to install signal handlers: a Ctrl-C or SIGTERM in
the first fraction of a second is one line and exit 130/143, never a KeyboardInterrupt traceback
from inside an import. The CLI installs its own handlers once it is loaded."""

# The C module (typeshed has no stub for it): `signal` imports enum, which alone takes milliseconds.
import _signal  # type: ignore[import-not-found]
import os


def _early_exit(signum: int, frame: object) -> None:
    os.write(2, b"shapefuzz: interrupted\n" if signum == _signal.SIGINT else b"shapefuzz: terminated\n")
    os._exit(128 + signum)


for _sig in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP):
    _signal.signal(_sig, _early_exit)


def main() -> None:
    import sys

    if sys.argv[1:2] == ["bundle-run"]:  # the runner on a device machine: NumPy and the IREE runtime alone
        from shapefuzz.bundle.runner import console_main

        console_main(sys.argv[2:])
    from shapefuzz.cli import main as cli_main
    from shapefuzz.process.sandbox import want_guardian

    want_guardian()  # this is the command's own process: a SIGKILL of it must not leave compilers
    try:
        cli_main()
    finally:
        from shapefuzz.process.sandbox import reap_at_exit

        reap_at_exit()  # the process ends: a compiler's daemon (setsid, a clean environment) with it
