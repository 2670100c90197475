"""bench/'s scripts loaded in tests by their path. bench/ is a folder of scripts, not a package:
each runs as `python bench/X.py` with its folder first on sys.path, which is how `import harness`
finds the shared harness; a test loads the harness under that same name first, then a script,
without putting bench/ on sys.path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _exec(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def harness() -> ModuleType:
    """bench/harness.py, as the scripts import it (`import harness`)."""
    known = sys.modules.get("harness")
    if known is not None:
        assert Path(known.__file__).resolve() == BENCH / "harness.py", f"another module named harness: {known}"
        return known
    return _exec(BENCH / "harness.py", "harness")


def load(path: Path) -> ModuleType:
    """A script of bench/ imported, not run (its `if __name__ == "__main__"` stays shut)."""
    harness()
    return _exec(path, f"bench_script_{path.stem}")
