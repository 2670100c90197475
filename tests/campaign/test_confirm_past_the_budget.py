"""A bucket found in time is confirmed even when its re-run ends past the budget (a compile
timeout's re-run costs the full cap per lane: a 20-minute campaign's ONNX ArgMin timeout on
cuda-sm80 and rocm-gfx942-o3, found at 17 minutes, was dropped at the end with its re-run, left a
"compiler-bug cause" with no reproducer saved and so no issue text, and a resume dropped it again
at once); a cause whose every bucket still awaits its re-run is listed apart, not as a finding;
and a resumed campaign's sessions keep their own active seconds (the resume added the first
session's 20 minutes again and halved the rates), and the overtime is off the clock. Fake targets, real worker processes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.campaign import engine as engine_module
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Engine, Limits, Outcome
from shapefuzz.campaign.outcomes import BucketState
from shapefuzz.campaign.report.summary import summarize, text_lines
from shapefuzz.model import Status

from support.economy import Target
from support.engines import build_engine  # noqa: E402


@dataclass(frozen=True)
class SlowConfirm(Target):
    """Every candidate hangs the compile on lane "a" (a timeout); its re-run takes `confirm_seconds`."""

    hot_mod: int = 1
    status: Status = Status.TIMEOUT
    confirm_seconds: float = 2.0

    def confirm(self, candidate, lanes) -> Outcome:  # type: ignore[override]
        time.sleep(self.confirm_seconds)
        return self.check(candidate, lanes)


def _engine(folder: Path, target: Target, seconds: float) -> Engine:
    return build_engine(target, CampaignStore(folder), ("g",), ("a", "b"), 5, 1, Limits(seconds=seconds),
                        start_method="fork", shrink=False)


def test_a_confirm_running_past_the_budget_finishes_and_its_bucket_is_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(Engine, "_grace", lambda self: 0.0)  # time is up as soon as the budget is spent
    target = SlowConfirm(str(tmp_path / "corpus"))
    engine = _engine(tmp_path / "camp", target, 0.5)
    engine.run()
    buckets = engine.store.buckets()
    assert buckets and all(b.state == BucketState.CONFIRMED and b.corpus_entry for b in buckets), \
        [(b.state, b.corpus_entry) for b in buckets]
    summary = summarize(engine.store)
    assert summary.findings
    assert summary.active_seconds < 1.5  # the overtime is off the clock: the rates stay the campaign's


def test_the_overtime_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(Engine, "_grace", lambda self: 0.0)
    monkeypatch.setattr(engine_module, "CONFIRM_OVERTIME", 0.5)
    target = SlowConfirm(str(tmp_path / "corpus"), confirm_seconds=20.0)
    engine = _engine(tmp_path / "camp", target, 0.5)
    start = time.monotonic()
    engine.run()
    assert time.monotonic() - start < 10.0
    buckets = engine.store.buckets()
    assert buckets and all(b.state == BucketState.PENDING for b in buckets)
    # the cause has nothing saved to file: apart, saying so, not a finding
    summary = summarize(engine.store)
    assert not summary.findings and summary.set_apart == {"awaiting a confirming re-run": 1}
    (cause,) = summary.causes
    assert cause.awaiting_confirmation and "awaits its confirming re-run" in cause.not_shrunk
    assert any("awaiting its confirming re-run" in line for line in text_lines(summary))


def test_a_resumed_session_keeps_its_own_active_seconds(tmp_path):
    store = CampaignStore(tmp_path / "camp")
    first = store.start_session([])
    store.tick(first, 100.0)
    second = store.start_session([])
    assert store.active_before(second) == 100.0
    store.tick(second, 103.0)  # the campaign's active seconds: 100 before, 3 in this session
    assert [active for _, active, _ in store.sessions()] == [100.0, 3.0]
    reopened = CampaignStore(tmp_path / "camp")
    assert reopened.active_before(1 << 40) == 103.0
