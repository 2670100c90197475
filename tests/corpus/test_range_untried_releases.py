"""A range never claims more than was run. An audit's cache held 7 releases (3.0.0 3.2.0 3.3.0 3.4.0
3.6.0 3.12.0 3.13.0): over 6 the releases were bisected, and a bug failing since 3.4.0 read "fails
since 3.6.0, passes in 3.0.0" with 3.2.0 to 3.4.0 never tried (cause-bfae2d6d4a). A cache of that
size is tried whole now; past EXHAUSTIVE, or where a release cannot tell, the text names the
releases it did not judge, and the record lists each release's verdict. Fake checks: the bookkeeping."""

from __future__ import annotations

import pytest

from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.bisect import EXHAUSTIVE
from shapefuzz.recheck.regression import regression_range
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult

AUDIT_CACHE = ["3.0.0", "3.2.0", "3.3.0", "3.4.0", "3.6.0", "3.12.0", "3.13.0"]


@pytest.fixture
def entry(tmp_path):
    sig = Signature("cuda-sm80", Stage.COMPILE, Status.ERROR, "failed to bufferize op")
    return load_entry(save_finding(tmp_path, Finding(sig, "func.func @main() {\n  return\n}\n", ("cuda-sm80",), None,
                                                     0, None, None, "3.13.0", [], "error: boom"))[0])


def _answers(bad, calls, unknown=()):
    def check(e, version):
        calls.append(version)
        outcome = ReplayOutcome.NOT_RUNNABLE if version in unknown else \
            ReplayOutcome.STILL_FAILING if version in bad else ReplayOutcome.FIXED
        return ReplayResult(e.id, e.path, outcome, "failing", e.signature, detail=f"{version}'s own reason")
    return dict(check=check, installer=lambda v: v)


def test_a_cache_of_seven_releases_is_tried_whole(entry):
    calls: list[str] = []
    bad = {"3.4.0", "3.6.0", "3.12.0", "3.13.0"}
    record = regression_range(entry, AUDIT_CACHE, **_answers(bad, calls))
    assert sorted(calls) == sorted(AUDIT_CACHE) and len(AUDIT_CACHE) <= EXHAUSTIVE
    assert record["text"] == "fails since 3.4.0, passes in 3.3.0"
    assert record["releases"] == ("3.0.0 passes; 3.2.0 passes; 3.3.0 passes; 3.4.0 fails; 3.6.0 fails; "
                                  "3.12.0 fails; 3.13.0 fails")


def test_a_bisected_list_names_what_it_did_not_try_and_never_spans_a_release_that_could_not_tell(entry):
    calls: list[str] = []
    versions = [f"3.{minor}.0" for minor in range(14)]
    record = regression_range(entry, versions, **_answers(set(versions[6:]), calls, unknown={"3.5.0"}))
    assert len(calls) < len(versions) and len(versions) > EXHAUSTIVE
    # 3.5.0 could not tell: the range does not pass over it as if 3.4.0 and 3.6.0 were neighbours
    assert record["text"].startswith("fails since 3.6.0 or earlier, passes in 3.4.0 (3.5.0 could not tell); "), record
    untried = [v for v in versions if v not in calls]
    assert untried and record["text"].endswith(" not tried (bisected)")
    for version in untried:
        assert f"{version} not tried" in record["releases"]
    assert "3.5.0 could not tell" in record["releases"]
    assert "3.5.0: not runnable: 3.5.0's own reason" in record["stepped_over"]
