"""Minimize before naming (issue 31, item 2): a shrink never returns a larger file, and the entry's
detail, mismatch statistics and shown actual output describe the shrunk reproducer, not the
candidate it was shrunk from."""

from __future__ import annotations

import json

import pytest

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.families import get_family, render_case
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.shrink import run as shrink_run
from shapefuzz.shrink.engine import Pass, Problem
from shapefuzz.shrink.iree import Target
from shapefuzz.shrink.params import shrink_params
from shapefuzz.size import size_of, smaller, sort_key

# A grouped conv whose shrink steps to fewer elements re-render it longer (the named conv as its
# generic, a dynamic dim as a static one): under the size order alone, every step "interesting"
# ends 22 bytes larger than it started.
CONV = ('{"acc":"f32","bias":"none","big":false,"c":16,"compute_layout":"ngchw_gfchw","dilations":[1,1],"dtype":"f32",'
        '"epilogue":"none","f":1,"filter_dyn":[false,false,false,false,true],"filter_perm":[],"form":"named","g":2,'
        '"input_dyn":[true,true,true,false,false],"input_perm":[],"kernel":[1,2],"kind":"grouped",'
        '"layout":"ngchw_gfchw","loop_perm":[],"m":1,"n":1,"output_perm":[],"pad_form":"none","pad_hi":[0,0],'
        '"pad_lo":[0,0],"pad_value":0,"perm_compute":false,"rank":2,"result_dyn":[],"spatial":[3,9],"strides":[2,1]}')
SIG = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom")


def _conv() -> str:
    return render_case(Case.make("conv", get_family("conv").load(json.loads(CONV))))


def test_a_shrink_never_grows_a_file(monkeypatch):
    text = _conv()
    always = Problem(text, lambda t: True, sort_key).run([[Pass("shrink_params", shrink_params)]])
    assert len(always) > len(text)  # what the order alone did: the case of the audit

    monkeypatch.setattr(shrink_run, "SameSignature", lambda toolchain, target, known: (lambda t: True))
    monkeypatch.setattr(shrink_run, "Verifier", lambda toolchain: (lambda texts: [True] * len(texts)))
    best, problem, _ = shrink_run.shrink_text(text, None, Target({"llvm-cpu": SIG}, ("llvm-cpu",), 5.0), frozenset())
    assert problem.stats.accepted > 0 and len(best.encode()) <= len(text.encode())
    assert smaller(best, text)


def test_a_corpus_entry_is_never_replaced_by_a_larger_file(tmp_path):
    text = _conv()
    longer = text + "// " + "x" * 40 + "\n"  # the order counts code, not comments: equal there, more bytes
    grown = Problem(text, lambda t: True, sort_key).run([[Pass("shrink_params", shrink_params)]])
    assert size_of(grown) < size_of(text) and len(grown) > len(text)  # smaller in the order, larger on disk

    def finding(mlir: str) -> Finding:
        return Finding(SIG, mlir, ("llvm-cpu",), case_from_mlir(mlir), 0, None, None, "3.13.0",
                       ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], "error: boom")

    entry, _ = save_finding(tmp_path, finding(text))
    for other in (longer, grown):
        save_finding(tmp_path, finding(other), sighting=False)
        assert load_entry(entry).mlir.rstrip("\n") == text.rstrip("\n")


@pytest.mark.iree
def test_an_issue_text_s_mismatch_matches_its_reproducer(toolchain, tmp_path, monkeypatch):
    """IREE 3.13 computes a dilated average pool with a padded-ones divisor wrong on llvm-cpu (the
    repository's corpus entry llvm-cpu-compare-mismatch-cbbd2208da0a). A 2x2-channel candidate is
    filed, then shrunk to the 1x1 one (the shrink's trials stubbed: the rest is real); its entry and
    issue text then say 1 of 1 elements, with the actual output, never the candidate's 4 of 4."""
    from shapefuzz.campaign.iree import IreeTarget, outcome_of
    from shapefuzz.campaign.outcomes import Candidate
    from shapefuzz.export.issue import IssueContext, to_issue
    from shapefuzz.export.plan import plan
    from shapefuzz.judge.oracle import case_expectation, check_module

    seed = 1218940714
    small = Case.make("pool", get_family("pool").load({
        "big": False, "c": 1, "ceil_mode": False, "compute_layout": "", "count_include_pad": True, "dilations": [2],
        "divisor": "ones", "dtype": "f32", "form": "generic", "in_dyn": [False] * 3, "kernel": [5], "kind": "avg",
        "layout": "nc", "n": 1, "pad_hi": [0], "pad_lo": [0], "spatial": [9], "strides": [1]}))
    big = Case.make("pool", get_family("pool").load({**small.params, "n": 2, "c": 2}))
    big_text, small_text = render_case(big), render_case(small)
    outcome = outcome_of(check_module(big_text, ["llvm-cpu"], case_expectation(big, seed), toolchain,
                                      confirm=False), 0.0)
    (failure,) = outcome.failures
    assert "4 of 4" in failure.detail
    target = IreeTarget(toolchain, tmp_path / "corpus")
    candidate = Candidate(big.case_id, "pool", seed, (), big.params_json, big_text)
    assert candidate.input_seed == seed
    entry = target.save(candidate, failure, False)

    monkeypatch.setattr(shrink_run, "shrink_text", lambda text, *a, **k: (small_text, _Stopped(), _NoFindings()))
    result = shrink_run.shrink_file("c.mlir", big_text, toolchain, ("llvm-cpu",), out=str(tmp_path / "min.mlir"),
                                    signature=failure.signature, seed=seed, recheck=False)
    assert result.confirmed and result.minimized == small_text
    shrunk = target.save_shrunk(result)
    assert shrunk is not None and shrunk.entry == entry
    meta = load_entry(entry).meta
    assert "1 of 1 elements differ" in meta["detail"] and "actual output" in meta["detail"]
    text = to_issue(plan(load_entry(entry), toolchain), IssueContext("IREE 3.13", ()), "files")
    assert "1 of 1 elements differ" in text and "4 of 4" not in text and "actual output: float32[1, 1, 1]" in text


class _Stopped:
    stopped_because = None

    class stats:  # noqa: N801 - the attribute Problem has
        accepted = trials = invalid = proposed = 0
        per_pass: dict = {}
        set_aside: dict = {}
        predicate_errors: list = []
        trials_at_accept, accepted_at, gaps = 0, 0.0, []  # type: ignore[var-annotated]


class _NoFindings:
    @staticmethod
    def confirmed_findings():
        return []
