"""The repository's own corpus/ replayed against the pinned toolchain: every entry must be in its
recorded state (still failing, or fixed where marked fixed), so a toolchain change that fixes or
changes a bug shows up here. Skipped while corpus/ has no entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.corpus import iter_entries
from shapefuzz.recheck.replay import replay_corpus

CORPUS = Path(__file__).resolve().parents[2] / "corpus"

pytestmark = pytest.mark.iree


@pytest.mark.skipif(not CORPUS.is_dir() or not any(True for _ in iter_entries(CORPUS)),
                    reason="corpus/ has no entries yet")
def test_repository_corpus_is_as_recorded(toolchain):
    summary = replay_corpus(CORPUS, toolchain, jobs=2, confirm=False)
    off = [f"{r.entry_id}: expected {r.expected_state}, got {r.outcome.value} {r.detail} {r.now or ''}".strip()
           for r in summary.results if not r.as_expected]
    assert not off, "\n".join(off)
