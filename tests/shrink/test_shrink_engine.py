"""The reduction engine with pure-Python predicates: acceptance rule, determinism across jobs,
misbehaving passes and predicates, time limits and interruption. No IREE here."""

from __future__ import annotations

import random
import threading
import time

from shapefuzz.shrink.engine import Pass, Problem


def key(text: str) -> tuple:
    return (len(text), text)


def delete_one(text: str):
    for i in range(len(text)):
        yield text[:i] + text[i + 1 :]


def delete_chunks(text: str):
    n = len(text) // 2
    while n >= 2:
        for i in range(0, len(text) - n + 1):
            yield text[:i] + text[i + n :]
        n //= 2


def lower_letters(text: str):
    for i, ch in enumerate(text):
        if ch > "a":
            yield text[:i] + "a" + text[i + 1 :]


TIERS = [[Pass("delete_chunks", delete_chunks), Pass("delete_one", delete_one)], [Pass("lower", lower_letters)]]


def interesting(text: str) -> bool:
    # "the bug" needs an x before a y, and at least three characters
    return len(text) >= 3 and "x" in text and "y" in text[text.index("x") :]


def test_reduces_to_the_minimum():
    problem = Problem("qqxwwwzyzz", interesting, key)
    assert problem.run(TIERS) == "axy"
    assert problem.stats.accepted > 0 and problem.stopped_because is None


def _noisy(predicate):
    """Same answers, random timing: arrival order differs from proposal order."""
    rng = random.Random(1)
    lock = threading.Lock()

    def wrapped(text: str) -> bool:
        with lock:
            delay = rng.random() * 0.003
        time.sleep(delay)
        return predicate(text)

    return wrapped


def test_same_result_for_any_jobs():
    start = "mmxbbbbycxqyz"

    def run(jobs: int) -> tuple[str, list[str]]:
        steps: list[str] = []
        problem = Problem(start, _noisy(interesting), key, jobs=jobs, on_accept=lambda a: steps.append(a.text))
        return problem.run(TIERS), steps

    one = run(1)
    assert run(2) == one
    assert run(4) == one


def test_lowest_key_wins_whatever_the_proposal_order():
    problem = Problem("zzzz", lambda t: True, key)
    assert problem.try_candidates(["zz", "zzz", "az", "b"], "p")
    assert problem.current == "b"
    # not strictly smaller: never accepted, never even tried
    tried = []
    problem2 = Problem("ab", lambda t: tried.append(t) or True, key)
    assert not problem2.try_candidates(["ab", "ba", "zz"], "p")
    assert tried == [] and problem2.current == "ab"


def test_prefilter_rejects_before_any_trial():
    tried = []
    problem = Problem("abcd", lambda t: tried.append(t) or True, key, prefilter=lambda ts: ["c" in t for t in ts])
    problem.run([[Pass("delete_one", delete_one)]])
    assert problem.current == "c"
    assert all("c" in t for t in tried)
    assert problem.stats.invalid > 0


def test_a_pass_that_hangs_or_raises_is_set_aside():
    def hangs(text: str):
        time.sleep(3600)
        yield text[:1]

    def raises(text: str):
        yield text[:-1]
        raise RuntimeError("pass bug")

    problem = Problem("qqxwwy", interesting, key, pass_timeout=0.3)
    tiers = [[Pass("hangs", hangs), Pass("raises", raises), Pass("delete_one", delete_one)]]
    start = time.monotonic()
    problem.run(tiers)
    assert len(problem.current) == 3 and interesting(problem.current)
    assert time.monotonic() - start < 10
    assert set(problem.stats.set_aside) == {"hangs", "raises"}
    assert "pass bug" in problem.stats.set_aside["raises"]


def test_a_predicate_that_raises_counts_as_not_interesting():
    def flaky(text: str) -> bool:
        if text.startswith("q"):
            raise ValueError("compiler wrapper bug")
        return interesting(text)

    problem = Problem("qxwwy", flaky, key)
    problem.run([[Pass("delete_one", delete_one)]])
    assert len(problem.current) == 3 and interesting(problem.current)
    assert problem.stats.predicate_errors


def test_time_limit_keeps_the_best_so_far():
    def slow(text: str) -> bool:
        time.sleep(0.05)
        return interesting(text)

    problem = Problem("q" * 30 + "xy", slow, key, time_limit=0.5)
    best = problem.run([[Pass("delete_one", delete_one)]])
    assert problem.stopped_because == "time limit"
    assert interesting(best) and len(best) < 32


def test_ctrl_c_keeps_the_best_so_far():
    calls = {"n": 0}

    def interrupted(text: str) -> bool:
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt
        return interesting(text)

    for jobs in (1, 2):
        calls["n"] = 0
        problem = Problem("qqqqqqxy", interrupted, key, jobs=jobs)
        best = problem.run([[Pass("delete_one", delete_one)]])
        assert problem.stopped_because == "interrupted"
        assert interesting(best) and len(best) < 8


def test_engine_and_passes_never_import_iree_modules():
    import ast
    from pathlib import Path

    import shapefuzz.shrink as pkg

    allowed = {"shapefuzz.shrink.engine", "shapefuzz.size", "shapefuzz.shrink",
               "shapefuzz.case", "shapefuzz.iree.mlirinfo"}  # pure text parsing, no IREE call
    for name in ("engine.py", "mlirtext.py", "params.py"):
        tree = ast.parse((Path(pkg.__file__).parent / name).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        ours = {m for m in imported if m.startswith("shapefuzz")}
        if name == "params.py":
            allowed_here = allowed | {"shapefuzz.families"}
        else:
            allowed_here = allowed
        assert ours <= allowed_here, (name, ours - allowed_here)
