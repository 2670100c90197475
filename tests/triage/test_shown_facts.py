"""What an issue text may say of the reproducer it shows (triage.shown), from the records alone: the
lanes it reproduces on, the lanes left unchecked, and which verdict text is true of it."""

from __future__ import annotations

from shapefuzz.triage.shown import (
    OTHER, PASSES, SAME, LaneRun, ShownRuns, evidence_is_of, reproducer_digest, reproduces_on, shown_runs_of,
    stated_triage, triage_text)
from shapefuzz.triage.tracker import IREE_URL, tracker_of

SHRUNK = "// shapefuzz-case: {\"family\":\"x\"}\nfunc.func @main() { return }\n"
CANDIDATE = "func.func @main() { %0 = big.op ... return }\n"
META = {"triage": "suspected driver", "triage_evidence": "it takes the top 323 of 1025 elements",
        "triage_evidence_of": reproducer_digest(CANDIDATE), "bug": {"lanes": ["vulkan-llvmpipe", "vulkan-spirv"]}}


def test_the_digest_is_of_the_program_not_of_its_header():
    assert reproducer_digest(SHRUNK) == reproducer_digest("func.func @main() { return }")
    assert reproducer_digest(SHRUNK) != reproducer_digest(CANDIDATE)


def test_without_a_record_only_the_entry_s_own_lane_is_claimed():
    assert reproduces_on(META, "vulkan-llvmpipe", None) == (["vulkan-llvmpipe"], ["vulkan-spirv"])
    text = triage_text(META, SHRUNK, None)
    assert "323" not in text and text.startswith("suspected driver, decided on the larger candidate")
    assert "this reproducer was not re-checked on other lanes" in text


def test_a_record_of_this_reproducer_says_what_ran():
    runs = ShownRuns(reproducer_digest(SHRUNK), (LaneRun("vulkan-llvmpipe", SAME, "fails the same way"),
                                                 LaneRun("vulkan-spirv", PASSES, "passes (matches the reference)")))
    meta = {**META, "shown": runs.to_json()}
    shown = shown_runs_of(meta, SHRUNK)
    assert shown == runs and shown_runs_of(meta, CANDIDATE) is None  # only for the reproducer it is of
    assert reproduces_on(meta, "vulkan-llvmpipe", shown) == (["vulkan-llvmpipe"], [])
    assert "this reproducer's own runs: vulkan-llvmpipe fails the same way; vulkan-spirv passes" in \
        triage_text(meta, SHRUNK, shown)
    # re-derived from those runs: said as such, with its own evidence
    rederived = ShownRuns(runs.digest, runs.runs, triage="compiler bug", evidence="two targets disagree")
    assert triage_text(meta, SHRUNK, rederived) == ("compiler bug, re-derived from this reproducer's own runs "
                                                    "(two targets disagree)")
    # re-checked, and its own lane no longer fails this way: not claimed
    moved = ShownRuns(runs.digest, (LaneRun("vulkan-llvmpipe", OTHER, "fails differently (x)"),))
    assert reproduces_on(meta, "vulkan-llvmpipe", moved) == ([], ["vulkan-spirv"])


def test_evidence_of_this_reproducer_or_of_unknown_origin_is_quoted():
    own = {**META, "triage_evidence_of": reproducer_digest(SHRUNK)}
    assert evidence_is_of(own, SHRUNK) and triage_text(own, SHRUNK, None) == \
        "suspected driver (it takes the top 323 of 1025 elements)"
    legacy = {k: v for k, v in META.items() if k != "triage_evidence_of"}  # older, or marked by hand
    assert triage_text(legacy, SHRUNK, None) == "suspected driver (it takes the top 323 of 1025 elements)"
    assert ShownRuns.from_json({"reproducer": 3}) is None and ShownRuns.from_json("x") is None


def test_the_route_follows_the_verdict_the_text_states():
    """A "suspected driver" decided on the larger candidate, re-derived "target limit" on the shrunk
    reproducer (an audit's 6373377de8-2: the header said one, the Triage line the other): the text's
    route takes the re-derived verdict; evidence of this reproducer keeps the recorded one."""
    limit = ShownRuns(reproducer_digest(SHRUNK), (LaneRun("vulkan-llvmpipe", SAME, "fails the same way"),),
                      triage="target limit", evidence="llvmpipe-loop-limit: it takes the top 257 of 257")
    stated = stated_triage(META, SHRUNK, limit)
    assert stated["triage"] == "target limit" and tracker_of(stated).why.startswith("a target limit (llvmpipe-loop")
    assert evidence_is_of(stated, SHRUNK)  # the evidence it now carries is this reproducer's
    assert triage_text(META, SHRUNK, limit).startswith("target limit, re-derived")
    bug = ShownRuns(limit.digest, limit.runs, triage="compiler bug", evidence="two targets disagree")
    assert tracker_of(stated_triage(META, SHRUNK, bug)).url == IREE_URL  # re-derived a bug: filed
    own = {**META, "triage_evidence_of": reproducer_digest(SHRUNK)}
    assert stated_triage(own, SHRUNK, bug)["triage"] == "suspected driver"  # its own evidence stands
    assert stated_triage(META, SHRUNK, None) == META and stated_triage(META, SHRUNK, ShownRuns(limit.digest, ())) == META
