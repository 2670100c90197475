"""The console entry point (`shapefuzz`, `python -m shapefuzz`). Its first act, before click,
NumPy or any module of ours is imported, is to install signal handlers: a Ctrl-C or SIGTERM in
the first fraction of a second is one line and exit 130/143, never a KeyboardInterrupt traceback
from inside an import. The CLI installs its own handlers once it is loaded."""

import os
import signal


def _early_exit(signum: int, frame: object) -> None:
    os.write(2, b"shapefuzz: interrupted\n")
    os._exit(128 + signum)


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _early_exit)
    from shapefuzz.cli import main as cli_main

    cli_main()
