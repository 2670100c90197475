"""The background fetch of older IREE releases for a campaign's regression ranges: which releases,
within which bounds, and what happens when one cannot be fetched. A fake release source stands in
for pip (no network here); `test_same_failure.py` has the real releases."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from shapefuzz.errors import ToolchainError
from shapefuzz.iree.release_fetch import ESTIMATED_BYTES, FetchKnobs, ReleaseFetcher, choose_releases

RELEASES = ["2.9.0", "3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0",
            "3.10.0", "3.11.0", "3.12.0", "3.13.0"]
MB = 10**6


class FakeSource:
    """Releases as pip would list them; `broken` ones fail to install, `hang` holds a download
    until released; every fetch is recorded with the timeout it was given."""

    def __init__(self, cached=(), broken=(), free=10**12, hang=None, listing_fails=False):
        self.cached_set, self.broken, self.free, self.hang = set(cached), set(broken), free, hang
        self.listing_fails = listing_fails
        self.calls: list[tuple[str, float]] = []

    def available(self):
        if self.listing_fails:
            raise ToolchainError("cannot list iree-base-compiler releases with pip (network unreachable)")
        return list(RELEASES)

    def cached(self):
        return sorted(self.cached_set)

    def fetch(self, version, timeout):
        self.calls.append((version, timeout))
        if self.hang is not None:
            self.hang.wait(10)
        if version in self.broken:
            raise ToolchainError(f"cannot install IREE {version}: pip found no iree-base-runtime {version} wheel")
        self.cached_set.add(version)
        return 340 * MB

    def free_bytes(self):
        return self.free


def run(source, knobs=FetchKnobs(), pinned="3.13.0"):
    lines: list[str] = []
    fetcher = ReleaseFetcher(source, pinned, knobs, lines.append)
    fetcher.run()
    return fetcher.log, lines


def test_the_spread_is_the_oldest_usable_one_between_and_the_one_before_the_pinned_release():
    assert choose_releases(RELEASES, "3.13.0", 3) == ["3.0.0", "3.6.0", "3.12.0"]
    assert choose_releases(RELEASES, "3.13.0", 1) == ["3.12.0"]
    assert choose_releases(RELEASES, "3.13.0", 5) == ["3.0.0", "3.3.0", "3.6.0", "3.9.0", "3.12.0"]
    assert choose_releases(RELEASES, "3.4.0", 9) == ["3.0.0", "3.1.0", "3.2.0", "3.3.0"]  # all there are
    assert choose_releases(RELEASES, "3.0.0", 3) == [] and choose_releases(RELEASES, "3.13.0", 0) == []
    # cached releases near a pick stand in for it (no download); the one before the pinned stays
    assert choose_releases(RELEASES, "3.13.0", 3, cached=["3.2.0", "3.3.0", "3.4.0", "3.11.0"]) == \
        ["3.2.0", "3.4.0", "3.12.0"]
    assert choose_releases(RELEASES, "3.13.0", 3, cached=["3.9.0"]) == ["3.0.0", "3.6.0", "3.12.0"]


def test_cached_releases_are_reused_and_only_the_missing_ones_downloaded():
    source = FakeSource(cached={"3.6.0", "3.9.0"})
    log, lines = run(source, FetchKnobs(seconds=42))
    assert [c for c in source.calls] == [("3.0.0", 42), ("3.12.0", 42)]  # each within the time bound
    assert log.reused == ["3.6.0"] and log.ready == ["3.0.0", "3.6.0", "3.12.0"] and not log.failed
    assert "3.6.0 already cached" in lines[0] and "fetching 3.0.0, 3.12.0 in the background" in lines[0]
    assert any("fetched IREE 3.12.0 (340 MB on disk" in line for line in lines)
    assert run(source)[0].fetched == {}  # a second campaign downloads nothing


def test_a_release_that_cannot_be_fetched_is_one_line_and_the_others_still_come():
    log, lines = run(FakeSource(broken={"3.6.0"}))
    assert log.ready == ["3.0.0", "3.12.0"] and list(log.failed) == ["3.6.0"]
    said = [line for line in lines if "3.6.0 cannot be fetched" in line]
    assert len(said) == 1 and "no iree-base-runtime 3.6.0 wheel" in said[0] and "goes on" in said[0]


def test_the_disk_bound_stops_downloads_before_they_start():
    source = FakeSource()
    log, lines = run(source, FetchKnobs(disk_bytes=ESTIMATED_BYTES + 100 * MB))
    assert [v for v, _ in source.calls] == ["3.0.0"] and log.ready == ["3.0.0"]
    assert sum("fetch bound" in line for line in lines) == 2  # 3.6.0 and 3.12.0, one line each
    full = FakeSource(free=ESTIMATED_BYTES)  # a nearly full disk: nothing is tried
    log, lines = run(full)
    assert full.calls == [] and log.ready == [] and sum("free on the cache's disk" in line for line in lines) == 3


def test_an_unreachable_index_is_one_line_and_nothing_is_fetched():
    source = FakeSource(cached={"3.2.0"}, listing_fails=True)
    log, lines = run(source)
    assert source.calls == [] and log.ready == []
    assert len(lines) == 1 and "cannot list" in lines[0] and "cache only" in lines[0]


def test_the_campaign_waits_only_so_long_and_no_download_starts_after_stop():
    hang = threading.Event()
    source = FakeSource(hang=hang)
    fetcher = ReleaseFetcher(source, "3.13.0", FetchKnobs(), lambda line: None).start()
    assert fetcher.wait(0.2) is False and not fetcher.done  # the phase goes on without it
    fetcher.stop()
    hang.set()
    assert fetcher.wait(10) is True
    assert [v for v, _ in source.calls] == ["3.0.0"]  # the one under way finished; no other began
    assert set(fetcher.log.failed) == {"3.6.0", "3.12.0"}


@pytest.mark.parametrize("args, said", [
    (["--fetch-releases", "-1"], "--fetch-releases -1: give 0"),
    (["--fetch-disk", "lots"], "--fetch-disk 'lots': not a size"),
])
def test_bad_fetch_knobs_are_one_line_exit_2(tmp_path, args, said):
    result = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", "--count", "1", "--campaign",
                             str(tmp_path / "camp"), *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and said in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "camp").exists()


def test_the_regression_phase_waits_half_its_budget_then_goes_on(tmp_path, monkeypatch):
    """A fetch still under way when the phase starts gets at most half of --bisect-time; then the
    phase says so, stops the fetcher and bisects over what is cached (here: nothing else)."""
    from shapefuzz.campaign.report.summary import summarize
    from shapefuzz.campaign.run import _regression_phase
    from shapefuzz.campaign.database import CampaignStore

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    hang = threading.Event()
    fetcher = ReleaseFetcher(FakeSource(hang=hang), "3.13.0", FetchKnobs(), lambda line: None).start()
    lines: list[str] = []
    store = CampaignStore(tmp_path / "camp")
    try:
        summary = summarize(store, "budget", [])
        _regression_phase(store, summary, 0.4, lambda kind, text: lines.append(text), "budget", [], fetcher)
    finally:
        store.close()
        hang.set()
    assert lines[0] == "regression ranges: waiting at most 0 s for the releases still being fetched"
    assert "did not finish in time" in lines[1] and "no other release" in lines[2]
    assert fetcher.wait(10) and [v for v, _ in fetcher.source.calls] == ["3.0.0"]


def test_a_bad_fetch_count_in_the_environment_is_one_line_exit_2(tmp_path):
    import os

    env = {**os.environ, "SHAPEFUZZ_FETCH_RELEASES": "many"}
    result = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", "--count", "1", "--campaign",
                             str(tmp_path / "camp")], capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2 and "SHAPEFUZZ_FETCH_RELEASES='many'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
