"""The maintained benchmarks, by name: `--list` says what each measures (the first paragraph of
its docstring; nothing is imported, so it needs no IREE), and NAME runs one with the options that
follow (`run.py sandbox --calls 3`; `run.py sandbox --help` for its own). bench/README.md gives
each one's goal and last figures.

    .venv/bin/python bench/run.py --list
    .venv/bin/python bench/run.py failure_flag --cases 4 --rounds 1 --json figures.json
"""

from __future__ import annotations

import ast
import runpy
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent


def benchmarks() -> dict[str, Path]:
    """Every maintained benchmark: `bench_<name>.py` in this folder (studies live in studies/)."""
    return {path.stem.removeprefix("bench_"): path for path in sorted(HERE.glob("bench_*.py"))}


def summary(path: Path) -> str:
    """The first paragraph of the module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or "(no docstring)"
    return " ".join(doc.split("\n\n", 1)[0].split())


def find(name: str) -> Path | None:
    known = benchmarks()
    key = Path(name).stem.removeprefix("bench_")
    return known.get(key)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    if argv[0] == "--list":
        for name, path in benchmarks().items():
            print(f"{name}  ({path.relative_to(HERE.parent)})")
            print(textwrap.indent(textwrap.fill(summary(path), 96), "    "))
        return 0
    path = find(argv[0])
    if path is None:
        print(f"run.py: no benchmark {argv[0]!r}; these are: {', '.join(benchmarks())}", file=sys.stderr)
        return 2
    sys.argv = [str(path), *argv[1:]]
    runpy.run_path(str(path), run_name="__main__")  # as `python bench/bench_<name>.py ...` would run it
    return 0


if __name__ == "__main__":
    sys.exit(main())
