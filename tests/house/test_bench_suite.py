"""bench/ as a suite (bench/README.md): every maintained benchmark (`bench/bench_*.py`) imports
without running, is built on the shared harness (its parser, its session) and is listed in the
README; every other script there is a tool the README lists, the studies live in bench/studies/;
and no file of bench/, studies included, reaches into our private names: `from x import _y`,
`module._y`, `obj._y` not its own, `super()._y`, a method overriding a private one of our classes,
or an attribute of our modules assigned (a monkeypatch)."""

from __future__ import annotations

import ast
import inspect

import pytest

from support.bench_modules import BENCH, load

MAINTAINED = sorted(BENCH.glob("bench_*.py"))
SUITE = {"harness.py", "run.py"}


def test_the_suite_is_every_benchmark_the_readme_lists():
    readme = (BENCH / "README.md").read_text()
    assert len(MAINTAINED) >= 10
    runner = load(BENCH / "run.py")
    assert sorted(runner.benchmarks().values()) == MAINTAINED  # `run.py --list` lists them all
    for path in MAINTAINED:
        assert f"`{path.name}`" in readme, f"bench/README.md does not list {path.name}"
    others = [p for p in BENCH.glob("*.py") if p not in MAINTAINED and p.name not in SUITE]
    for path in others:  # tools: listed apart
        assert f"`{path.name}`" in readme, f"bench/{path.name}: a tool the README does not list (or a study: studies/)"
    for path in (BENCH / "studies").glob("*.py"):
        assert f"`studies/{path.name}`" in readme, f"bench/README.md does not list the study {path.name}"


@pytest.mark.parametrize("path", MAINTAINED, ids=lambda p: p.stem)
def test_a_maintained_benchmark_is_built_on_the_harness(path, capsys):
    tree = ast.parse(path.read_text())
    calls = {ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    assert "harness.parser" in calls and "harness.session" in calls, f"{path.name} does not use the harness"
    assert not any(isinstance(node, ast.ImportFrom) and node.module == "argparse" or
                   isinstance(node, ast.Call) and ast.unparse(node.func) == "argparse.ArgumentParser"
                   for node in ast.walk(tree)), f"{path.name} builds its own parser"
    module = load(path)
    assert ast.get_docstring(tree), f"{path.name} has no docstring: its --help and run.py --list show it"
    with pytest.raises(SystemExit) as exited:
        module.main(["--help"])
    assert exited.value.code == 0
    assert "--json [FILE]" in capsys.readouterr().out  # the harness's common option
    for cls in (v for v in vars(module).values() if inspect.isclass(v) and v.__module__ == module.__name__):
        for base in cls.__mro__[1:]:
            if base.__module__.startswith("shapefuzz"):
                overridden = [n for n in vars(cls) if _private(n) and hasattr(base, n)]
                assert not overridden, f"{path.name}: {cls.__name__} overrides {base.__name__}'s private {overridden}"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(source: str) -> list[str]:
    """Where a file reaches into private names that are not its own (see the module docstring)."""
    tree = ast.parse(source)
    own: set[str] = set()
    ours: set[str] = set()  # names bound to our modules or to what they hold
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and ast.unparse(node.value) == "self":
            own.add(node.attr)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("shapefuzz"):
            ours.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            ours.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith("shapefuzz"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: from {node.module} import {a.name}" for a in node.names if _private(a.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            via_super = isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "super"
            if via_super or node.attr not in own:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for one in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(one, ast.Attribute) and isinstance(one.value, ast.Name) and one.value.id in ours:
                        found.append(f"line {node.lineno}: assigns {ast.unparse(one)}")
    return found


@pytest.mark.parametrize("path", sorted(BENCH.rglob("*.py")), ids=lambda p: str(p.relative_to(BENCH)))
def test_no_bench_file_reaches_into_a_private_name(path):
    assert private_reaches(path.read_text()) == [], f"bench/{path.relative_to(BENCH)}: give the product a public name"


def test_the_scan_sees_each_way_of_reaching_in():
    source = '''
from shapefuzz.judge import oracle
from shapefuzz.families import _VALID
from shapefuzz.campaign.engine import Engine


class Timed(Engine):
    def _own(self):
        self._mine = 1
        return self._mine

    def _tick(self):
        super()._tick()


def cold(target):
    oracle._MEMO.clear()
    oracle.verify = lambda *a: None
    target._run_expectation(None)
'''
    found = [line.split(": ", 1)[1] for line in private_reaches(source)]
    assert sorted(found) == sorted(["from shapefuzz.families import _VALID", "super()._tick", "oracle._MEMO",
                                    "assigns oracle.verify", "target._run_expectation"])  # its own _own, _mine pass
