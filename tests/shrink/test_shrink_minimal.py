"""Minimal means minimal (issue 43, item 6). A bucket's shrink starts from the smallest candidate
the bucket has seen, in the one order (`size.size_of`), and a shrink result never stands for a
smaller reproducer already saved. An audit found five buckets whose saved reproducer was larger
than a candidate the bucket had already seen (an out-of-memory bucket's 2,228-byte candidate
replaced by a 5,868-byte "shrunk" file): the shrink had started from the candidate that made the
bucket, queued when the bucket was saved, although a smaller one hit the bucket before the shrink
ran. Also: the shrinker drops an op the failure does not need, wherever it sits in a chain or a
text."""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass, field
from pathlib import Path

import pytest

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Engine, EngineConfig, Limits
from shapefuzz.campaign.outcomes import Candidate, Failure, Outcome, ShrinkState, TaskKind, Triage, Verdict
from shapefuzz.campaign.worker_pool import Done, Task
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.size import size_of

SIG = Signature("a", Stage.COMPILE, Status.ERROR, "boom")


def _text(n: int) -> str:
    """A module whose size grows with n (n elements in its one tensor type)."""
    return f"func.func @main(%a: tensor<{n}xf32>) -> tensor<{n}xf32> {{\n  return %a : tensor<{n}xf32>\n}}\n"


@dataclass
class _Target:
    """Candidate `seed` is the module `_text(seed)`; every one fails on lane "a" with SIG. `saved`:
    each save's text; `shrunk`: what each shrink was asked to shrink."""

    corpus: str
    saved: list[str] = field(default_factory=list)
    shrunk: list[str] = field(default_factory=list)

    def worker_init(self) -> None:
        pass

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        return Candidate(f"k{seed}", group, seed, (), json.dumps({"n": seed}), _text(seed))

    def deadline(self, lanes) -> float:
        return 30.0

    def size(self, text: str) -> tuple[int, ...]:
        return astuple(size_of(text))

    def check(self, candidate: Candidate, lanes) -> Outcome:
        if "a" not in lanes:
            return Outcome(Verdict.PASS, {lane: (Status.OK, 0.1) for lane in lanes}, (), 0.0)
        return Outcome(Verdict.FAIL, {"a": (Status.ERROR, 0.1)}, (Failure(SIG),), 0.0)

    confirm = check

    def shrink(self, candidate: Candidate, job):
        self.shrunk.append(candidate.text)
        return None

    def corpus_count(self, failure: Failure):
        return str(Path(self.corpus) / "entry"), len(self.saved)

    def save(self, candidate, failure, flaky, cause="", triage="", evidence=""):
        self.saved.append(candidate.text)
        return str(Path(self.corpus) / "entry")

    def triage(self, candidate, failure, outcome):
        return Triage.COMPILER_BUG, "fake"

    def rename_cause(self, entry, cause):
        pass


def _engine(tmp_path: Path) -> tuple[Engine, _Target]:
    target = _Target(str(tmp_path / "corpus"))
    engine = Engine(target, CampaignStore(tmp_path / "c"),
                    EngineConfig(("g",), ("a", "b"), 11, 1, Limits(count=0), shrink=True))
    return engine, target


def _checked(engine: Engine, seed: int, index: int, lanes: tuple[str, ...] = ("a",)) -> Candidate:
    """A check of candidate `seed` on `lanes` finished (on lane "a" failing with SIG, settled by the
    check: a compile error)."""
    candidate = Candidate(f"k{seed}", "g", seed, (), json.dumps({"n": seed}), _text(seed), index=index)
    task = Task(index + 1, TaskKind.CHECK, candidate, lanes, 30.0)
    engine.book.finish(Done(task, engine.target.check(candidate, lanes), 0.1))
    return candidate


def test_a_bucket_s_shrink_starts_from_the_smallest_candidate_it_has_seen(tmp_path):
    engine, _ = _engine(tmp_path)
    _checked(engine, 64, 0)  # makes the bucket: saved, its shrink planned (waiting for the shrink share)
    (sig,) = engine.buckets
    assert engine.buckets[sig].shrink == ShrinkState.PENDING
    _checked(engine, 8, 1)  # a smaller candidate hits the bucket before its shrink starts
    _checked(engine, 32, 2)  # a larger one hits it too: not kept
    assert engine.buckets[sig].repro_text == _text(8)
    candidate, bucket = engine.shrinks.pop()
    assert bucket.sig == sig and candidate.text == _text(8)  # was _text(64): the candidate queued at planning


def test_on_resume_a_pending_shrink_starts_from_the_smallest_candidate_too(tmp_path):
    engine, _ = _engine(tmp_path)
    _checked(engine, 64, 0)
    _checked(engine, 8, 1)
    engine.store.close()
    again, _ = _engine(tmp_path)
    candidate, _ = again.shrinks.pop()
    assert candidate.text == _text(8)


def test_a_smaller_candidate_met_by_a_confirming_re_run_becomes_the_bucket_s_reproducer(tmp_path):
    """A confirm re-runs a new candidate on sibling lanes; a known bucket it hits there counts it as
    a hit, and keeps it as its reproducer where it is smaller, as a check's hit does."""
    engine, _ = _engine(tmp_path)
    _checked(engine, 64, 0)
    (sig,) = engine.buckets
    small = _checked(engine, 8, 1, ("b",))  # passes on lane b; its confirm (of some other bucket) runs lane a
    assert engine.buckets[sig].repro_text == _text(64)
    task = Task(9, TaskKind.CONFIRM, small, ("a",), 30.0)
    engine.book.finish(Done(task, engine.target.check(small, ("a",)), 0.1))
    assert engine.buckets[sig].repro_text == _text(8)
    assert engine.shrinks.pop()[0].text == _text(8)


@pytest.mark.iree
def test_a_shrink_result_never_stands_for_a_smaller_reproducer_the_entry_already_holds(toolchain, tmp_path):
    """The entry holds a smaller reproducer than the shrink's result (an earlier shrink saved it):
    the corpus keeps it, and the campaign is told what the entry holds, never the larger result
    as "shrunk" (its row said 5,868 bytes where the entry had 2,228)."""
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.corpus import load_entry, make_finding, save_finding
    from shapefuzz.shrink.engine import Stats
    from shapefuzz.shrink.iree import Target as ShrinkTarget
    from shapefuzz.shrink.run import ShrinkResult
    from shapefuzz.size import measure

    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom")
    small, middle, large = _text(4), _text(16), _text(64)
    corpus = tmp_path / "corpus"
    entry, _ = save_finding(corpus, make_finding(sig, small, toolchain))
    target = IreeTarget(toolchain, corpus)
    result = ShrinkResult(large, middle, ShrinkTarget({"llvm-cpu": sig}, ("llvm-cpu",), 5.0), measure(large),
                          measure(middle), 1.0, Stats(), None, confirmed=True)
    shrunk = target.save_shrunk(result)
    assert shrunk is not None and shrunk.entry is not None
    text, saved, found = shrunk.text, shrunk.entry, shrunk.found
    assert Path(saved) == entry and found == ()
    assert load_entry(entry).mlir == small  # the corpus kept its smaller file
    assert text == small  # was `middle`: the campaign recorded a larger file than the entry holds

    result = ShrinkResult(large, _text(2), result.target, measure(large), measure(_text(2)), 1.0, Stats(), None,
                          confirmed=True)
    shrunk = target.save_shrunk(result)
    assert shrunk is not None and shrunk.text == _text(2) == load_entry(entry).mlir  # a smaller one replaces it


def _pool_chain():
    from shapefuzz.families import get_family
    from shapefuzz.families.context.chain import ContextOp
    from shapefuzz.families.generate import draw_params

    fam = get_family("pool")
    base = draw_params("pool", 3, context_share=0.0)
    r = len(fam.make_inputs(base, 0)[0].shape)
    chain = (ContextOp.make("transpose", operand=0, perm=list(range(1, r)) + [0], form="named"),
             ContextOp.make("pad", operand=0, lo=[0] * (r - 1) + [1], hi=[0] * r, value=0.5),
             ContextOp.make("relu", result=0))
    return fam, base.replace(context=chain)


def test_a_chain_s_inner_op_the_failure_does_not_need_is_dropped():
    """A fault-injecting predicate: the "failure" needs the outer producer (the transpose that
    reads the entry's argument), not the pad between it and the root. Only the outermost op of a
    side was ever offered for dropping, so the pad stayed for good."""
    from shapefuzz.case import Case, case_from_mlir
    from shapefuzz.families import render_case
    from shapefuzz.shrink.engine import Pass, Problem
    from shapefuzz.shrink.params import shrink_params
    from shapefuzz.size import sort_key

    fam, p = _pool_chain()
    assert fam.is_valid(p)
    text = render_case(Case.make("pool", p))
    best = Problem(text, lambda t: "linalg.transpose" in t.split("func.func @main")[-1], sort_key).run(
        [[Pass("shrink_params", shrink_params)]])
    assert [op.op for op in fam.load(case_from_mlir(best).params).context] == ["transpose"]


def test_every_chain_drop_offered_fits():
    """What the shrink offers of a chain's drops is a valid case (the rest of the chain fits)."""
    fam, p = _pool_chain()
    offered = fam.shrink_candidates(p)
    assert all(fam.is_valid(c) for c in offered)
    chains = {tuple(op.op for op in c.context) for c in offered}
    # each op alone (the pad is inner), every producer together, every consumer together, all of them
    assert {("transpose", "relu"), ("transpose", "pad"), ("pad", "relu"), ("relu",), ()} <= chains


def test_a_generated_case_loses_its_dead_values_and_keeps_its_header():
    """A generated scatter renders two index constants it never reads (the audit's 25-line issue
    where the bare scatter is 9): they go, and the header still describes the body."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.shrink import run as shrink_run
    from shapefuzz.shrink.engine import Problem
    from shapefuzz.size import measure, sort_key

    text = Path(__file__).resolve().parents[2].joinpath(
        "corpus/vulkan-spirv-compare-mismatch-6a33c5fece38/reproducer.mlir").read_text()
    assert "%c0 = arith.constant" in text and "\n\n" in text
    case = case_from_mlir(text)
    tiers = shrink_run.tiers_for(text, None, None)  # (the target is not read for a generated file)
    # the "failure" needs this very case: no parameter step keeps it, only steps on its text
    best = Problem(text, lambda t: "iree_linalg_ext.scatter" in t and case_from_mlir(t) == case, sort_key).run(tiers)
    assert "arith.constant" not in best and "\n\n" not in best and best.startswith("// shapefuzz-case:")
    assert measure(best).ops == measure(text).ops - 2


@pytest.mark.iree
def test_an_op_that_defines_no_value_is_dropped_when_the_failure_does_not_need_it(toolchain):
    """A hand-written memref module (no case header): the "failure" needs the i8 store, not the
    matmul in front of it; a linalg op on memrefs defines no value, so no pass could drop it (it is
    never unused and has nothing to forward). Every step is verified by the real iree-opt."""
    from shapefuzz.shrink import run as shrink_run
    from shapefuzz.shrink.engine import Problem
    from shapefuzz.shrink.iree import Target as ShrinkTarget, Verifier
    from shapefuzz.size import sort_key

    text = """func.func @main(%a: memref<2x4xf32>, %b: memref<4x2xf32>, %acc: memref<2x2xf32>, %out: memref<1xi8>) {
  linalg.matmul ins(%a, %b : memref<2x4xf32>, memref<4x2xf32>) outs(%acc : memref<2x2xf32>)
  %c0 = arith.constant 0 : index
  %v = memref.load %acc[%c0, %c0] : memref<2x2xf32>
  %i = arith.fptosi %v : f32 to i8
  memref.store %i, %out[%c0] : memref<1xi8>
  return
}
"""
    verify = Verifier(toolchain)
    assert verify([text]) == [True]

    def fails(t: str) -> bool:  # the "failure": an i8 store
        return "memref.store" in t and "xi8>" in t

    target = ShrinkTarget({"vulkan-spirv": Signature("vulkan-spirv", Stage.COMPILE, Status.ERROR, "x")},
                          ("vulkan-spirv",), 5.0)
    best = Problem(text, fails, sort_key, prefilter=verify).run(shrink_run.tiers_for(text, target, None))
    assert "linalg.matmul" not in best and "memref.store" in best
    assert verify([best]) == [True]


@pytest.mark.iree
def test_every_chain_drop_of_drawn_cases_is_distinct_valid_and_verifies(toolchain):
    """Drawn chain cases of four families: the drops the shrink offers (an inner op alone, a whole
    side) are distinct valid cases that the real iree-opt verifies."""
    from support.context_testing import chain_cases, verify

    from shapefuzz.families import get_family
    from shapefuzz.families.context.chain import outermost_drops

    texts, offered = [], 0
    for name in ("pool", "matmul", "norm", "conv"):
        fam = get_family(name)
        for p in chain_cases(name, 30, seed=100):
            cands = fam.shrink_candidates(p)
            assert len(cands) == len(set(cands)) and p not in cands
            outer = set(outermost_drops(p.context))
            inner = [c for c in cands if c.context and c.context != p.context and c.context not in outer]
            assert all(fam.is_valid(c) for c in inner)
            offered += len(inner)
            texts += [fam.render(c) for c in inner]
    assert offered >= 40
    assert verify(toolchain, texts) == []
