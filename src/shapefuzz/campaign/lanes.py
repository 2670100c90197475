"""The campaign's lanes (backends) and which of them check a candidate (no IREE): the lanes still
in use (a lane that keeps timing out is set aside), the reference lane every other is judged
against, the rotation that gives each candidate the reference plus a share of the others, and the
large rounds that go to the compile-only lanes alone."""

from __future__ import annotations


class LanePlan:
    """The lanes now and the rotation over them. `lanes_per_candidate` None: every lane checks
    every candidate; `large_every` n > 0: every n-th candidate is a large round."""

    def __init__(self, lanes: tuple[str, ...], reference: str | None, lanes_per_candidate: int | None = None,
                 compile_only: tuple[str, ...] = (), large_every: int = 0) -> None:
        self.now = lanes
        self.reference = reference
        self.lanes_per_candidate = lanes_per_candidate
        self.compile_only = compile_only
        self.large_every = large_every
        # the large rounds the campaign's allocation chose, by index (None: every large_every-th)
        self.chosen_large: set[int] | None = None

    def allocate_large(self) -> None:
        """From now on the allocation says which draws are large rounds (`choose_large`)."""
        self.chosen_large = set()

    def choose_large(self, index: int) -> None:
        assert self.chosen_large is not None  # only once allocate_large() was called
        self.chosen_large.add(index)

    def set_aside(self, lane: str) -> None:
        self.now = tuple(x for x in self.now if x != lane)

    def large_possible(self) -> bool:
        """Can a draw be a large round now (rotating lanes, and a compile-only lane still in use)?"""
        return (self.lanes_per_candidate is not None and self.large_every > 0
                and any(lane in self.now for lane in self.compile_only))

    def large_round(self, index: int) -> bool:
        """Every `large_every`-th candidate (or those the allocation chose) is drawn with large
        shapes and checked only on the compile-only lanes (too slow to execute here;
        shared-memory and tiling bugs need them)."""
        if not self.large_possible():
            return False
        if self.chosen_large is not None:
            return index in self.chosen_large
        return index % self.large_every == self.large_every - 1

    def kind(self, index: int) -> tuple[str, ...]:
        """The lanes a slot of candidate `index` may go to: the compile-only ones in a large round."""
        return tuple(lane for lane in self.now if lane in self.compile_only) if self.large_round(index) else self.now

    def lanes_for(self, index: int) -> tuple[str, ...]:
        """The reference lane plus a rotating share of the others: candidate i gets the next
        `lanes_per_candidate - 1` of them in turn, so every lane gets its turn. A large round
        goes to the compile-only lanes alone, in turn too."""
        k = self.lanes_per_candidate
        if k is not None and self.large_round(index):
            only = [lane for lane in self.now if lane in self.compile_only]
            start = index // self.large_every
            picked = {only[(start * k + j) % len(only)] for j in range(min(k, len(only)))}
            return tuple(lane for lane in only if lane in picked)
        if k is None or self.reference not in self.now or k >= len(self.now):
            return self.now
        others = [lane for lane in self.now if lane != self.reference]
        share = max(0, k - 1)
        picked = {others[(index * share + j) % len(others)] for j in range(share)}
        return (self.reference, *[lane for lane in others if lane in picked])


__all__ = ["LanePlan"]
