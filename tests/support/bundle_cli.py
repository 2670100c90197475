"""Shared by the tests (moved out of test_bundle.py, which other tests imported)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
import numpy as np
import pytest
from shapefuzz.case import case_from_mlir


SRC = Path(__file__).resolve().parents[2] / "src"


# What the device machine lacks: importing any of these in the runner fails.
_BLOCKED = ("hypothesis", "jinja2", "click", "iree", "shapefuzz.families", "shapefuzz.judge.oracle", "shapefuzz.campaign",
            "shapefuzz.iree.toolchain", "shapefuzz.cli")


_BARE = ("import sys\nsys.argv = ['shapefuzz'] + sys.argv[1:]\n"
         f"for name in {_BLOCKED!r}:\n    sys.modules[name] = None\n"
         "from shapefuzz.console import main\nmain()\n")


def shapefuzz(*args, bare=False, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [sys.executable, "-c", _BARE] if bare else [sys.executable, "-m", "shapefuzz"]
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
