"""The estimates when the first candidate is the only sighting of two causes (f1 > n): the
Good-Turing chance is a chance (at most 1), and the next hour's chance a real number; the live
line once raised a TypeError on a complex number there and ended a real campaign at 3.2.0."""

from __future__ import annotations

from shapefuzz.campaign.discovery import estimate, short_text


def test_more_causes_seen_once_than_candidates():
    d = estimate([1, 1], 1, 30.0)
    assert d.good_turing == 1.0
    assert isinstance(d.next_hour, float) and 0.0 <= d.next_hour <= 1.0
    assert "new cause" in short_text(d)
