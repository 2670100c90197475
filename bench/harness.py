"""The shared harness of the maintained benchmarks (bench/README.md lists them, `bench/run.py` runs
them by name). It gives each one:

- `parser(__doc__)`: its argument parser, the module's docstring as the description, and the
  common option `--json [FILE]` (the figures, the machine and the benchmark's details as JSON:
  written to FILE, or printed on stdout with no FILE, the text then going to stderr);
- `session(args)`: the header line first (cores, load average, the IREE version from the
  toolchain probe, the commit of the shapefuzz measured), the benchmark's `Figures` table last
  (name, value, unit, goal, met?), and the JSON;
- `Interleaved`: two ways measured on the same items in one run, their order alternating from
  item to item. The machines are shared and noisy (two cores, several sessions): a way measured
  after the other would carry another load, so ratios are taken inside one run, never across
  runs, and the drift of the load falls on both ways alike.

    parser = harness.parser(__doc__)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        pair = harness.Interleaved("direct", "sandboxed")
        for _ in range(args.calls):
            pair.measure(lambda: harness.wall_seconds(direct), lambda: harness.wall_seconds(boxed))
        report.figures.add("sandboxed / direct", pair.median_ratio(), "x", goal="<= 1.05")
"""

from __future__ import annotations

import argparse
import contextlib
import json
import operator
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

_GOALS = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt, "==": operator.eq}


def parser(doc: str | None) -> argparse.ArgumentParser:
    """A benchmark's argument parser: `doc` (its module docstring) as the description, kept as
    written, and the harness's common options; the benchmark adds its own."""
    made = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    made.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                      help="also write the figures, the machine and the details as JSON to FILE "
                           "(no FILE: print them on stdout, the text on stderr)")
    return made


# --- the figures ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Figure:
    """One measured figure. `goal` is a comparison with a number, such as "<= 1.05" or ">= 5000"
    ("" where the figure has no goal); `met` says whether the value meets it (None: no goal)."""

    name: str
    value: float | int | str
    unit: str = ""
    goal: str = ""

    def __post_init__(self) -> None:
        if self.goal:
            _parse_goal(self.goal)  # a malformed goal is the benchmark's bug: said at once

    @property
    def met(self) -> bool | None:
        if not self.goal or isinstance(self.value, str):
            return None
        compare, bound = _parse_goal(self.goal)
        return bool(compare(self.value, bound))

    def shown(self) -> str:
        if isinstance(self.value, float):
            return f"{self.value:.4g}" if abs(self.value) < 1000 else f"{self.value:.0f}"
        return str(self.value)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit, "goal": self.goal, "met": self.met}


def _parse_goal(goal: str) -> tuple[Callable[[Any, Any], bool], float]:
    parts = goal.split()
    if len(parts) != 2 or parts[0] not in _GOALS:
        raise ValueError(f"goal {goal!r}: expected an operator ({', '.join(_GOALS)}) and a number")
    return _GOALS[parts[0]], float(parts[1])


@dataclass
class Figures:
    """A benchmark's figures, in the order added, printed as one table."""

    rows: list[Figure] = field(default_factory=list)

    def add(self, name: str, value: float | int | str, unit: str = "", goal: str = "") -> Figure:
        figure = Figure(name, value, unit, goal)
        self.rows.append(figure)
        return figure

    def table(self) -> str:
        if not self.rows:
            return "(no figures)"
        head = ("figure", "value", "unit", "goal", "met")
        cells = [(f.name, f.shown(), f.unit, f.goal, {None: "", True: "yes", False: "NO"}[f.met]) for f in self.rows]
        width = [max(len(row[i]) for row in [head, *cells]) for i in range(len(head))]
        lines = []
        for row in [head, *cells]:
            name, value, unit, goal, met = (cell.ljust(w) if i != 1 else cell.rjust(w)
                                            for i, (cell, w) in enumerate(zip(row, width)))
            lines.append(f"{name}  {value}  {unit}  {goal}  {met}".rstrip())
        return "\n".join(lines)

    def to_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.rows]


# --- the machine ---------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    """What a figure was measured on: cores, load average (1 minute), the IREE version the
    toolchain probe reads ("none" without a toolchain), and the commit of the shapefuzz measured
    (its checkout, "+changes" when it has uncommitted ones)."""
    return {"cores": os.cpu_count() or 1, "load": round(os.getloadavg()[0], 2), "iree": iree_version(),
            "commit": commit_of(shapefuzz_root()), "shapefuzz": str(shapefuzz_root() or "?"),
            "when": time.strftime("%Y-%m-%d %H:%M")}


def iree_version() -> str:
    try:
        from shapefuzz.errors import ShapefuzzError
        from shapefuzz.iree.toolchain import find_toolchain

        return find_toolchain().probe.version
    except ImportError:
        return "none (shapefuzz not importable)"
    except (ShapefuzzError, OSError) as error:
        return f"none ({str(error).splitlines()[0][:80]})"


def shapefuzz_root() -> Path | None:
    """The folder of the shapefuzz package measured (another checkout's with its src on PYTHONPATH)."""
    try:
        import shapefuzz
    except ImportError:
        return None
    return Path(shapefuzz.__file__).resolve().parent


def commit_of(folder: Path | None) -> str:
    if folder is None:
        return "unknown"
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10)
        if head.returncode != 0:
            return "unknown (not a git checkout)"
        changed = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no", "."],
                                 capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


def header_line(info: dict[str, Any]) -> str:
    return (f"machine: {info['cores']} cores, load average {info['load']:.1f}; IREE {info['iree']}; "
            f"shapefuzz {info['commit']} ({info['shapefuzz']}); {info['when']}")


# --- one run -------------------------------------------------------------------------------------
@dataclass
class Report:
    """What a benchmark hands back inside `session`: its figures, and any details the JSON keeps
    beside them (rows, samples; anything `json.dumps` takes)."""

    name: str
    machine: dict[str, Any]
    figures: Figures = field(default_factory=Figures)
    details: Any = None

    def to_json(self) -> dict[str, Any]:
        return {"benchmark": self.name, "argv": sys.argv[1:], "machine": self.machine,
                "figures": self.figures.to_json(), "details": self.details}


@contextlib.contextmanager
def session(args: argparse.Namespace, name: str | None = None) -> Iterator[Report]:
    """One benchmark run: the header first, the figures table when the block ends (not when it
    raised), and the JSON where `--json` says. With `--json` and no FILE, everything the block
    prints goes to stderr, so stdout holds the JSON alone."""
    to_stdout = getattr(args, "json", None) == "-"
    name = name or Path(sys.argv[0]).stem
    text = sys.stderr if to_stdout else sys.stdout
    with contextlib.redirect_stdout(text) if to_stdout else contextlib.nullcontext():
        report = Report(name, machine())
        print(header_line(report.machine), flush=True)
        yield report
        print(report.figures.table(), flush=True)
    where = getattr(args, "json", None)
    if where == "-":
        print(json.dumps(report.to_json(), indent=2, default=str))
    elif where:
        Path(where).write_text(json.dumps(report.to_json(), indent=2, default=str) + "\n")
        print(f"figures written to {where}", file=text)


# --- measuring two ways in one run ---------------------------------------------------------------
class Interleaved:
    """Two ways measured on the same items in one run. `measure` runs both on one item, the
    order alternating from item to item (the second way first on the first item, then the first
    way first, ...), so a warm-up, a cache or a drifting load falls on both alike. The ratios
    are the second way over the first (`first` is the baseline)."""

    def __init__(self, first: str = "first", second: str = "second") -> None:
        self.names = (first, second)
        self.first: list[float] = []
        self.second: list[float] = []

    def measure(self, first: Callable[[], float], second: Callable[[], float]) -> tuple[float, float]:
        """Runs both ways once (each callable returns what it measured: seconds, a rate) and keeps
        the pair; returns (first, second)."""
        if len(self.first) % 2 == 0:
            b = second()
            a = first()
        else:
            a = first()
            b = second()
        self.first.append(a)
        self.second.append(b)
        return a, b

    def __len__(self) -> int:
        return len(self.first)

    def ratio(self) -> float:
        """sum(second) / sum(first): the cost of the second way over everything measured."""
        return sum(self.second) / sum(self.first) if sum(self.first) else float("nan")

    def median_ratio(self) -> float:
        """median(second) / median(first)."""
        if not self.first:
            return float("nan")
        base = statistics.median(self.first)
        return statistics.median(self.second) / base if base else float("nan")

    def pair_ratios(self) -> list[float]:
        """second / first for each item (items whose first measured nothing left out)."""
        return [b / a for a, b in zip(self.first, self.second) if a]

    def pair_median(self) -> float:
        ratios = self.pair_ratios()
        return statistics.median(ratios) if ratios else float("nan")

    def to_json(self) -> dict[str, list[float]]:
        return {self.names[0]: self.first, self.names[1]: self.second}


def rotated(ways: Sequence[Any], index: int) -> list[Any]:
    """`ways` rotated by `index`: the order of the index-th round when more than two ways take
    turns going first (campaign arms over seeds)."""
    k = index % len(ways) if ways else 0
    return list(ways[k:]) + list(ways[:k])


def wall_seconds(work: Callable[[], object]) -> float:
    """The wall seconds `work()` takes."""
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def children_cpu() -> float:
    """User + system CPU seconds of every child process waited for so far (a compiler's own work:
    on a loaded machine its wall time measures the neighbours too)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


__all__ = ["Figure", "Figures", "Interleaved", "Report", "children_cpu", "header_line", "iree_version", "machine",
           "parser", "rotated", "session", "wall_seconds"]
