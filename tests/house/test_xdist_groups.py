"""The suite's pytest-xdist groups take effect (support/xdist_groups.py): under `-n 2 --dist
loadgroup`, as scripts/test.sh runs it, the `ray` tests of several modules run on one worker and a
module-scoped fixture is built once. Nothing fails when a group is ignored: the tests only spread,
so this runs a small suite of its own on two workers and reads where each test ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

CONFTEST = """
import pytest
from support.xdist_groups import group_items

def pytest_configure(config):
    config.addinivalue_line("markers", "ray: a local Ray cluster")

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    group_items(items)
"""

RECORD = """
import json, os
from pathlib import Path
import pytest

def record(what):
    with open(os.environ["WHERE"], "a") as log:
        log.write(json.dumps([what, os.environ.get("PYTEST_XDIST_WORKER")]) + "\\n")
"""


def test_ray_tests_share_one_worker_and_a_module_fixture_is_built_once(tmp_path):
    pytest.importorskip("xdist", reason="pytest-xdist is in the test extra (scripts/bootstrap.sh)")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "record.py").write_text(RECORD)
    for name in ("a", "b"):
        (tmp_path / f"test_ray_{name}.py").write_text(textwrap.dedent(f"""
            import pytest
            from record import record

            @pytest.mark.ray
            @pytest.mark.parametrize("i", range(4))
            def test_ray(i):
                record("ray")

            @pytest.mark.parametrize("i", range(4))
            def test_plain(i):
                record("plain")
            """))
    (tmp_path / "test_shared.py").write_text(textwrap.dedent("""
        import pytest
        from record import record

        @pytest.fixture(scope="module")
        def built():
            record("built")

        @pytest.mark.parametrize("i", range(6))
        def test_uses_it(built, i):
            record("uses")

        @pytest.mark.parametrize("i", range(6))
        def test_plain(i):
            record("plain")
        """))
    where = tmp_path / "where.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # (this suite's own worker)
    env.update(WHERE=str(where), PYTHONPATH=os.pathsep.join([str(TESTS), str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                          "--dist", "loadgroup", str(tmp_path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    rows = [json.loads(line) for line in where.read_text().splitlines()]
    workers = {what: {w for kind, w in rows if kind == what} for what in ("ray", "built", "uses", "plain")}
    # two workers did run tests (which ran the plain ones is the scheduler's: under load one worker
    # once took all 14 while the other ran the ray group)
    assert {w for _, w in rows} == {"gw0", "gw1"}, rows
    assert len(workers["ray"]) == 1, rows  # eight ray tests of two modules, one worker
    assert sum(kind == "built" for kind, _ in rows) == 1 and workers["uses"] == workers["built"], rows
