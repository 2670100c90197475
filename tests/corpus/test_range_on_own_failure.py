"""A range judges each release by the failure the reproducer itself shows at the current release,
never by a pass the cause took from another, unshrunk example. An audit (cause-7af5034ab8) found
"no range: only 3.13.0 could tell" for a reproducer that 3.0.0, 3.6.0 and 3.12.0 fail with the same
error: the cause's pass (tile-and-distribute-to-workgroups-using-forall-op) came from the unshrunk
bucket, while the shown reproducer fails in iree-llvmcpu-tile-and-fuse-producer-consumer at 3.12
and 3.13, iree-llvmcpu-tile-root-and-fuse-producer-consumer (its name before) at 3.2 to 3.6 and
iree-llvmcpu-tile at 3.0, with the same error word for word."""

from __future__ import annotations

import pytest

from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.regression import OWN_FAILURE, Failure, regression_range
from support.reversed_dot import ERROR, REVERSED_DOT

STALE = "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op"  # the unshrunk bucket's pass


def test_the_same_error_word_for_word_in_a_renamed_pass_is_the_same_failure():
    now = Failure("compile", "error", "iree-llvmcpu-tile-and-fuse-producer-consumer", ERROR)
    assert now.same_as(Failure("compile", "error", "iree-llvmcpu-tile", ERROR))  # 3.0's pass for that step
    assert not now.same_as(Failure("compile", "error", "iree-llvmcpu-tile", ERROR.replace("2", "3")))
    assert not now.same_as(Failure("compile", "error", "iree-llvmcpu-tile"))  # no error to compare: the pass decides
    assert not now.same_as(Failure("compile", "crash", "iree-llvmcpu-tile", ERROR))


@pytest.mark.iree
def test_a_range_is_judged_by_the_reproducers_own_failure_not_the_causes_stale_pass(toolchain, tmp_path):
    """Real IREE: the releases of the toolchain cache (skipped if none older is cached) and the pinned
    wheels, the cause's pass a stale one: every release fails the same way."""
    from shapefuzz.iree.releases import cached_versions, installed_version, version_key

    pinned = installed_version()
    older = [v for v in ("3.0.0", "3.6.0", "3.12.0") if v in cached_versions()]
    if not pinned or not older:
        pytest.skip("none of IREE 3.0.0, 3.6.0, 3.12.0 is in the toolchain cache "
                    "(`shapefuzz --iree-version 3.12.0 backends` fetches one)")
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "'linalg.generic' op inferred input/output operand #N")
    path, _ = save_finding(tmp_path, Finding(sig, REVERSED_DOT, ("llvm-cpu",), None, 0, None, None,
                                             toolchain.probe.version, [], f"error: {ERROR}"))
    update_meta(path, bug={"failing_pass": STALE})  # what annotate_corpus wrote from the cause
    versions = sorted([*older, pinned], key=version_key)
    said: list[str] = []
    record = regression_range(load_entry(path), versions, said.append, failing=STALE, trust_seen=True)
    # the pinned release compiled it (never trusted) and named the pass this reproducer fails in
    assert any(OWN_FAILURE in line and "tile-and-fuse-producer-consumer" in line for line in said), said
    assert record["text"] == f"present in every release tried ({versions[0]}–{pinned})", record
    assert record["tried"] == ", ".join(versions) and not record["stepped_over"]
    assert record["releases"] == "; ".join(f"{v} fails" for v in versions)


def test_a_release_failing_in_the_same_pass_with_other_words_says_so(monkeypatch):
    """An audit read 3.0.0's "failed to legalize operation 'vector.insert'" in SPIR-V's i64
    emulation as the same failure as 3.13's 'vector.broadcast': it fails there, with another message."""
    from types import SimpleNamespace

    from shapefuzz.recheck import regression
    from shapefuzz.recheck.bisect import Probe
    from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult

    detail = ("<work>/m.mlir:3:8: error: failed to legalize operation '{op}'\n"
              "// -----// IR Dump After SPIRVEmulateI64Pass Failed: iree-spirv-emulate-i64 //----- //\n")
    sig = Signature("vulkan-spirv", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'vector.broadcast'")
    base = ReplayResult("e", "p", ReplayOutcome.STILL_FAILING, "failing", sig)
    older = SimpleNamespace(stage=Stage.COMPILE, status=Status.ERROR, detail=detail.format(op="vector.insert"))
    monkeypatch.setattr(regression, "_lane_result", lambda entry, toolchain: (base, older))
    want = regression.observed_failure(SimpleNamespace(stage=Stage.COMPILE, status=Status.ERROR,
                                                       detail=detail.format(op="vector.broadcast")))
    judged = regression._judged(None, None, want)  # type: ignore[arg-type]
    assert judged.outcome == ReplayOutcome.CHANGED and "'vector.insert'" in judged.detail, judged
    assert regression._verdict_word(Probe("3.0.0", judged)) == "fails with another message"
    same = SimpleNamespace(stage=Stage.COMPILE, status=Status.ERROR, detail=detail.format(op="vector.broadcast"))
    monkeypatch.setattr(regression, "_lane_result", lambda entry, toolchain: (base, same))
    assert regression._judged(None, None, want).outcome == ReplayOutcome.STILL_FAILING  # type: ignore[arg-type]


def test_an_op_the_message_prints_whole_is_no_part_of_the_message():
    """vmvx's `math.ctpop`: 3.0.0 and 3.6.0 say "failed to legalize operation 'math.ctpop' that was explicitly
    marked illegal", 3.13 adds the op itself; an audit read "fails with another message" over one bug."""
    said = "failed to legalize operation 'math.ctpop' that was explicitly marked illegal"
    new = Failure("compile", "error", "iree-vm-conversion", said + ': %19 = "math.ctpop"(%18) : (i32) -> i32')
    assert new.same_message(Failure("compile", "error", "iree-vm-conversion", said))
    assert not new.same_message(Failure("compile", "error", "iree-vm-conversion", said.replace("ctpop", "ctlz")))
