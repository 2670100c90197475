"""Allocation by yield (no IREE): the campaign spends check-seconds on cells in proportion to what
a second of each has found lately, and keeps every cell alive.

Cells:
- a *draw cell* is (family, shape): `bare` (the op alone), `chain` (inside a producer/consumer
  chain), `large` (large shapes for the compile-only lanes). The engine picks the next draw's cell;
  a shape it cannot ask for (no compile-only lane, a target that draws chains at a pinned share)
  is pooled: "small" then stands for bare and chain together.
- a *lane cell* is (family, lane): which lane takes a candidate's non-reference slot.
- a *feature record* counts, per (family, feature or feature pair), the new causes found by the
  candidates that carried it: of several draws the one whose features and pairs have yielded is
  preferred (`feature_ratio`), so rare conjunctions that found bugs are drawn again more often.

What is counted: a cell's check-seconds (the lanes' compile and run seconds the target reports,
the worker's seconds where it reports none) and the *new compiler-bug causes* its candidates were
the first to hit (a bucket judged a compiler bug when it was met, whose cause held no older
bucket). A lane cell gets a cause's share by the lanes its new buckets were on.

The estimate (a Bayesian rate with forgetting): a cell's recent causes over its recent seconds,
both discounted by half every `HALF_LIFE` of the cell's own check-seconds (so a cell that keeps
spending without finding falls, and old finds count less as the easy bugs are taken), with its
parent's rate worth `PRIOR_SECONDS` (cell -> family -> every cell; a lane cell -> the lane over
every family -> every lane): a cell with no record draws at its family's rate, not at zero.

The allocation: a cell's share of check time is `FLOOR` of a uniform share plus the rest in
proportion to base share x rate (the base shares are today's defaults: one draw in eight large,
half of the small ones in chains; the families of the brief's bug classes, `CORE_FAMILIES`, weigh
`CORE_WEIGHT` times the others, so twelve families do not thin the five the tool was built for); its share of draws is that share divided by its mean cost per
candidate, so a slow cell is paid for by what it finds, not by how long it takes, and a cell that
finds nothing still keeps FLOOR / cells of the time.

Swarm epochs (Groce et al., ISSTA 2012): every `EPOCH` draws, each chain op is left out with
chance `LEAVE_OUT` (at least two kept on each side), so conjunctions of the other ops inside a
chain come up more often for a while. The per-candidate swarm over each family's knobs
(families/base.py) stays as it is.

Everything is a function of the seed, the draw index and the records, and the records are kept
in the store's `allocation` table in the same transaction as the candidate they count
(`CampaignStore.record`): a resume reads back the same weights. A store from before the table
is replayed from its candidates once (`rebuild`)."""

from __future__ import annotations

import collections
import json
import math
import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from shapefuzz.campaign.database import CELL_KINDS, CampaignStore, CellRecord, CellRow
from shapefuzz.campaign.lanecost import compiled
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.campaign.steering import pairs
from shapefuzz.families.registry import CORE_FAMILIES, CORE_WEIGHT


SHAPES = ("bare", "chain", "large")
SMALL = "small"  # a request for bare or chain as the target's own share decides
BASE_SHARE = {"bare": 7 / 16, "chain": 7 / 16, "large": 1 / 8, SMALL: 7 / 8}

FLOOR = 0.25  # of a uniform share of check time, the least any cell keeps
HALF_LIFE = 600.0  # check-seconds of a cell's own after which its old finds and seconds count half
PRIOR_SECONDS = 60.0  # check-seconds a cell's parent rate is worth in its own
ROOT_PRIOR = (1.0, 60.0)  # (causes, seconds) before anything is known: one cause a check-minute
COST_PRIOR = 2.0  # candidates the parent's mean cost is worth in a cell's
EPOCH = 64  # draws per swarm epoch
LEAVE_OUT = 1 / 3  # chance a chain op is left out for an epoch
KEEP_PER_SIDE = 2  # chain ops kept on each side in every epoch
FEATURE_PRIOR = 8.0  # candidates the family's rate is worth in a feature's
FEATURE_RATIO = (0.5, 4.0)  # how far a draw's features move its score
UNREACHED_AFTER = 4  # requests of a shape that never came back so before the cell is dropped

DRAW, LANE, FEATURE = CELL_KINDS  # the kinds of rows in the store


Record = CellRecord


def spend(record: Record, seconds: float, causes: float) -> None:
    """One more candidate of the cell: `seconds` spent, `causes` found; the recent part is
    discounted by half every HALF_LIFE of the cell's own seconds."""
    keep = 0.5 ** (seconds / HALF_LIFE) if seconds > 0 else 1.0
    record.checks += 1
    record.seconds += seconds
    record.causes += causes
    record.recent_seconds = record.recent_seconds * keep + seconds
    record.recent_causes = record.recent_causes * keep + causes


@dataclass(frozen=True)
class Request:
    """What the next draw asks for: its family and shape; `left_out`: the chain ops this epoch leaves out."""

    group: str
    shape: str
    left_out: tuple[str, ...] = ()

    @property
    def large(self) -> bool:
        return self.shape == "large"

    @property
    def chain(self) -> bool | None:
        """True or False where the shape says; None: the target's own share."""
        return None if self.shape in (SMALL, "large") else self.shape == "chain"


LARGE_FEATURE = "regime:large"  # what a large round's candidate carries


def shape_of(features: Iterable[str]) -> str:
    """The shape a candidate came out as."""
    features = tuple(features)
    if LARGE_FEATURE in features:
        return "large"
    return "chain" if any(f.startswith("context:") for f in features) else "bare"


def _rate(causes: float, seconds: float, prior: float) -> float:
    return (causes + PRIOR_SECONDS * prior) / (seconds + PRIOR_SECONDS)


def _cost(seconds: float, checks: int, prior: float) -> float:
    return (seconds + COST_PRIOR * prior) / (checks + COST_PRIOR)


def _sum(records: Iterable[Record]) -> Record:
    total = Record()
    for r in records:
        total.checks += r.checks
        total.seconds += r.seconds
        total.causes += r.causes
        total.recent_seconds += r.recent_seconds
        total.recent_causes += r.recent_causes
    return total


class Allocation:
    """The records and the choices read from them. `on`: the engine draws by them (False: they are
    only kept, for the report); `large`: the engine may ask for large rounds; `chain_ops`: the
    chain ops by side when the target draws a chain or none as asked (None: its own share decides)."""

    def __init__(self, groups: Sequence[str], seed: int, on: bool = True, large: bool = False,
                 chain_ops: Sequence[Sequence[str]] | None = None) -> None:
        self.groups, self.seed, self.on, self.large = tuple(groups), seed, on, large
        self.chain_ops = tuple(tuple(side) for side in chain_ops) if chain_ops else None
        self.draws: dict[str, Record] = collections.defaultdict(Record)  # "family/shape"
        self.lanes: dict[str, Record] = collections.defaultdict(Record)  # "family/lane"
        self.found: collections.Counter[str] = collections.Counter()  # "family/feature" -> causes
        self.asked: dict[str, str] = {}  # candidate key -> the shape its draw asked for (until it is recorded)
        # what the choices read of the records, kept until the records change (`_changed`): a draw
        # asks for the shares of every cell, and the live view every half second
        self._cache: dict[Any, Any] = {}

    def _changed(self) -> None:
        self._cache.clear()

    def settings(self) -> str:
        """What the store's meta keeps of it, for the report (`from_store`)."""
        return json.dumps({"on": self.on, "large": self.large, "chain_ops": [list(side) for side in self.chain_ops or ()]})

    @classmethod
    def from_store(cls, store: CampaignStore) -> "Allocation":
        """The allocation a campaign's store holds, as its last session set it up (the report's)."""
        settings = store.meta_object("allocation") or {}
        groups = (store.meta_object("config") or {}).get("families") or []
        chain = settings.get("chain_ops")
        allocation = cls([g for g in groups if isinstance(g, str)], 0, on=settings.get("on") is True,
                         large=settings.get("large") is True,
                         chain_ops=[[op for op in side if isinstance(op, str)] for side in chain if isinstance(side, list)]
                         if isinstance(chain, list) else None)
        allocation.load(store.cells())
        if not allocation.groups:  # a store without the run's config (an engine run alone): its records' families
            allocation.groups = tuple(sorted({k.split("/", 1)[0] for k in allocation.draws}))
        return allocation

    # --- what is asked for ------------------------------------------------------------------
    def shapes(self, large_now: bool = True) -> tuple[str, ...]:
        """The shapes a draw may ask for now (`large_now`: the lane plan can take a large round)."""
        small = ("bare", "chain") if self.chain_ops else (SMALL,)
        return small + (("large",) if self.large and large_now else ())

    def reached(self, group: str, shape: str) -> bool:
        """False for a chain the family never came back with (its root takes none)."""
        r = self.draws.get(f"{group}/{shape}")
        return r is None or not (r.requests >= UNREACHED_AFTER and r.misses == r.requests)

    def cells(self, groups: Sequence[str], large_now: bool = True) -> list[tuple[str, str]]:
        return [(g, s) for g in groups for s in self.shapes(large_now) if self.reached(g, s)]

    # --- the estimates ----------------------------------------------------------------------
    def _members(self, group: str, shape: str) -> list[Record]:
        names = ("bare", "chain") if shape == SMALL else (shape,)
        return [self.draws[k] for k in (f"{group}/{n}" for n in names) if k in self.draws]

    def _parents(self) -> tuple[float, float, dict[str, tuple[float, float]]]:
        """(the rate and the mean cost over every draw cell; per family, its rate and mean cost)."""
        if "parents" not in self._cache:
            self._cache["parents"] = self._parents_now()
        return self._cache["parents"]

    def _parents_now(self) -> tuple[float, float, dict[str, tuple[float, float]]]:
        every = _sum(self.draws.values())
        root_rate = (every.recent_causes + ROOT_PRIOR[0]) / (every.recent_seconds + ROOT_PRIOR[1])
        root_cost = every.seconds / every.checks if every.checks and every.seconds > 0 else 1.0
        by_family: dict[str, list[Record]] = collections.defaultdict(list)
        for k, r in self.draws.items():
            by_family[k.split("/", 1)[0]].append(r)
        families = {}
        for g, records in by_family.items():
            f = _sum(records)
            families[g] = (_rate(f.recent_causes, f.recent_seconds, root_rate), _cost(f.seconds, f.checks, root_cost))
        return root_rate, root_cost, families

    def rate(self, group: str, shape: str, parents: tuple | None = None) -> float:
        """Expected new causes per check-second of the cell (family, shape), now."""
        root_rate, _, families = parents or self._parents()
        own = _sum(self._members(group, shape))
        return _rate(own.recent_causes, own.recent_seconds, families.get(group, (root_rate, 0.0))[0])

    def cost(self, group: str, shape: str, parents: tuple | None = None) -> float:
        """Mean check-seconds of a candidate of the cell (1.0 while nothing is known)."""
        _, root_cost, families = parents or self._parents()
        own = _sum(self._members(group, shape))
        return max(1e-3, _cost(own.seconds, own.checks, families.get(group, (0.0, root_cost))[1]))

    @staticmethod
    def weight(group: str) -> float:
        """A family's base weight: CORE_WEIGHT for the brief's bug classes' families, else 1."""
        return CORE_WEIGHT if group in CORE_FAMILIES else 1.0

    def time_shares(self, cells: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Each cell's share of check time: FLOOR of a uniform share, the rest by base share x rate."""
        if not cells:
            return {}
        groups = {g for g, _ in cells}
        shapes = {s for _, s in cells}
        base_total = sum(BASE_SHARE[s] for s in shapes)
        weight_total = sum(self.weight(g) for g in groups)
        parents = self._parents()
        value = {c: BASE_SHARE[c[1]] / base_total * self.weight(c[0]) / weight_total * self.rate(*c, parents)
                 for c in cells}
        total = sum(value.values()) or 1.0
        return {c: FLOOR / len(cells) + (1 - FLOOR) * v / total for c, v in value.items()}

    def draw_shares(self, cells: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        """Each cell's share of draws: its share of time over its cost per candidate."""
        key = ("draws", tuple(cells))
        if key not in self._cache:
            self._cache[key] = self._draw_shares(cells)
        return self._cache[key]

    def _draw_shares(self, cells: Sequence[tuple[str, str]]) -> dict[tuple[str, str], float]:
        time = self.time_shares(cells)
        parents = self._parents()
        weight = {c: t / self.cost(*c, parents) for c, t in time.items()}
        total = sum(weight.values()) or 1.0
        return {c: w / total for c, w in weight.items()}

    # --- the choices ------------------------------------------------------------------------
    def pick(self, rng: random.Random, groups: Sequence[str], index: int, large_now: bool,
             group: str | None = None) -> Request:
        """The next draw's cell (`group` given: only its shape is chosen, as coverage steering
        chose the family), with the chain ops this epoch leaves out."""
        cells = self.cells([group] if group is not None else groups, large_now)
        if not cells:  # every shape of the family dropped: plainly drawn
            return Request(group or groups[0], SMALL if not self.chain_ops else "bare")
        shares = self.draw_shares(cells)
        chosen = rng.choices(cells, [shares[c] for c in cells])[0]
        return Request(chosen[0], chosen[1], self.left_out(index) if chosen[1] == "chain" else ())

    def left_out(self, index: int) -> tuple[str, ...]:
        """The chain ops the swarm epoch of draw `index` leaves out."""
        if not self.chain_ops:
            return ()
        rng = random.Random(f"{self.seed}:epoch:{index // EPOCH}")
        out: list[str] = []
        for side in self.chain_ops:
            dropped = [op for op in side if rng.random() < LEAVE_OUT]
            out += dropped[:max(0, len(side) - KEEP_PER_SIDE)]
        return tuple(out)

    def lane_shares(self, group: str, lanes: Sequence[str]) -> dict[str, float]:
        """Each lane's share of the family's slots: FLOOR of a uniform share of check time, the
        rest by rate (the family's on the lane, with the lane's over every family as its prior),
        over its cost per check."""
        if not lanes:
            return {}
        pooled = self._lane_parents()
        rates, costs = {}, {}
        for lane in lanes:
            p_rate, p_cost = pooled.get(lane, pooled[""])
            own = self.lanes.get(f"{group}/{lane}") or Record()
            rates[lane] = _rate(own.recent_causes, own.recent_seconds, p_rate)
            costs[lane] = max(1e-3, _cost(own.seconds, own.checks, p_cost))
        total = sum(rates.values()) or 1.0
        weight = {lane: (FLOOR / len(lanes) + (1 - FLOOR) * r / total) / costs[lane] for lane, r in rates.items()}
        norm = sum(weight.values()) or 1.0
        return {lane: w / norm for lane, w in weight.items()}

    def _lane_parents(self) -> dict[str, tuple[float, float]]:
        """lane -> its rate and mean cost over every family ("": a lane with no record)."""
        if "lanes" not in self._cache:
            every = _sum(self.lanes.values())
            root_rate = (every.recent_causes + ROOT_PRIOR[0]) / (every.recent_seconds + ROOT_PRIOR[1])
            root_cost = every.seconds / every.checks if every.checks and every.seconds > 0 else 1.0
            by_lane: dict[str, list[Record]] = collections.defaultdict(list)
            for k, r in self.lanes.items():
                by_lane[k.split("/", 1)[1]].append(r)
            out = {"": (root_rate, root_cost)}
            for lane, records in by_lane.items():
                p = _sum(records)
                out[lane] = (_rate(p.recent_causes, p.recent_seconds, root_rate), _cost(p.seconds, p.checks, root_cost))
            self._cache["lanes"] = out
        return self._cache["lanes"]

    def pick_lanes(self, rng: random.Random, group: str, lanes: Sequence[str], slots: int) -> tuple[str, ...]:
        """`slots` of `lanes` for a candidate of `group`, without repeats, by `lane_shares`."""
        left = list(lanes)
        picked: list[str] = []
        while left and len(picked) < slots:
            shares = self.lane_shares(group, left)
            lane = rng.choices(left, [shares[lane] for lane in left])[0]
            picked.append(lane)
            left.remove(lane)
        return tuple(picked)

    def feature_ratio(self, group: str, features: tuple[str, ...], checks: Mapping[tuple[str, str], int],
                      group_checks: int) -> float:
        """How much better than its family a draw's features and feature pairs have found new
        causes (1.0: no better, or nothing known), in FEATURE_RATIO: of several draws the one
        with the best score (rarity x this) is kept. `checks`: the candidates checked per (family,
        feature or pair) (the steering's counts); `group_checks`: the family's."""
        found = sum(self.draws[k].causes for k in (f"{group}/{s}" for s in SHAPES) if k in self.draws)
        if not found or not group_checks:
            return 1.0
        base = (found + 0.5) / (group_checks + 1.0)
        logs = [math.log(max(1e-6, (self.found[f"{group}/{f}"] + FEATURE_PRIOR * base)
                                / (checks.get((group, f), 0) + FEATURE_PRIOR) / base))
                for f in (*features, *pairs(features))]
        ratio = math.exp(sum(logs) / len(logs)) if logs else 1.0
        return min(FEATURE_RATIO[1], max(FEATURE_RATIO[0], ratio))

    # --- learning ---------------------------------------------------------------------------
    def asked_for(self, key: str, shape: str) -> None:
        """The draw of candidate `key` asked for `shape` (its record says whether it came back so)."""
        self.asked[key] = shape

    def record(self, key: str, group: str, features: tuple[str, ...], lanes: Mapping[str, tuple[Any, float]],
               task_seconds: float, causes: Mapping[str, Sequence[str]]) -> list[CellRow]:
        """A checked candidate (a large round's carries `regime:large`): its lanes' (status,
        seconds), its worker seconds and the new causes it found (cause -> the lanes of its new
        buckets). Returns the rows that changed, for the store (written with the candidate)."""
        self._changed()
        shape = shape_of(features)
        spent = {lane: float(s) for lane, (status, s) in lanes.items() if compiled(status)}
        seconds = sum(spent.values()) or float(task_seconds)
        rows = []
        draw = self.draws[f"{group}/{shape}"]
        spend(draw, seconds, float(len(causes)))
        asked = self.asked.pop(key, None)
        if asked in ("bare", "chain"):
            cell = self.draws[f"{group}/{asked}"]
            cell.requests += 1
            cell.misses += asked != shape
            if asked != shape:
                rows.append(CellRow(DRAW, f"{group}/{asked}", cell))
        rows.append(CellRow(DRAW, f"{group}/{shape}", draw))
        credit: collections.Counter[str] = collections.Counter()
        for cause_lanes in causes.values():
            for lane in cause_lanes:
                credit[lane] += 1.0 / len(cause_lanes)  # type: ignore[assignment]  # float in a Counter
        for lane, s in spent.items():
            cell = self.lanes[f"{group}/{lane}"]
            spend(cell, s, credit.get(lane, 0.0))
            rows.append(CellRow(LANE, f"{group}/{lane}", cell))
        if causes:
            for f in (*features, *pairs(features)):
                self.found[f"{group}/{f}"] += len(causes)
                rows.append(CellRow(FEATURE, f"{group}/{f}", Record(causes=float(self.found[f"{group}/{f}"]))))
        return rows

    def load(self, rows: Iterable[CellRow]) -> None:
        self._changed()
        for row in rows:
            if row.kind == DRAW:
                self.draws[row.name] = row.record
            elif row.kind == LANE:
                self.lanes[row.name] = row.record
            elif row.kind == FEATURE:
                self.found[row.name] = int(round(row.record.causes))

    def checked(self) -> int:
        """Candidates the records count."""
        return sum(r.checks for r in self.draws.values())

    # --- what it shows ----------------------------------------------------------------------
    def table(self, groups: Sequence[str] | None = None, large_now: bool = True) -> list[dict[str, Any]]:
        """One row per cell as a candidate came out (family/bare, /chain, /large) with a record or
        a weight: checks, share of check time, causes, causes per check-hour (all time, and the
        estimate now), share of draws now (a shape drawn at the target's own share gets its part
        of the family's "small" draws, by its part of their checks)."""
        groups = tuple(groups or self.groups)
        shares = self.draw_shares(self.cells(groups, large_now)) if self.on else {}
        known = {tuple(k.split("/", 1)) for k, r in self.draws.items() if r.checks}
        wanted = {(g, s) for g, s in shares if s != SMALL} | {(g, s) for g, s0 in shares if s0 == SMALL
                                                               for s in ("bare", "chain") if (g, s) in known}
        total = sum(r.seconds for r in self.draws.values()) or 1.0
        out = []
        for g, s in sorted(known | wanted | {(g, "bare") for g, s0 in shares if s0 == SMALL}):
            r = self.draws.get(f"{g}/{s}") or Record()
            weight = shares.get((g, s))
            if weight is None and (g, SMALL) in shares:
                small = sum(self.draws[k].checks for k in (f"{g}/bare", f"{g}/chain") if k in self.draws)
                weight = shares[(g, SMALL)] * (r.checks / small if small else 1.0 if s == "bare" else 0.0)
            out.append({"cell": f"{g}/{s}", "family": g, "shape": s, "checks": r.checks,
                        "time_share": round(r.seconds / total, 4), "seconds": round(r.seconds, 1),
                        "causes": round(r.causes, 2),
                        "per_hour": round(r.causes / r.seconds * 3600, 1) if r.seconds else None,
                        "estimate_per_hour": round(self.rate(g, s) * 3600, 1),
                        "weight": round(weight or 0.0, 4) if self.on else None})
        return sorted(out, key=lambda row: (-(row["weight"] or 0.0), -row["time_share"], row["cell"]))

    def lane_table(self) -> list[dict[str, Any]]:
        """One row per lane over every family: checks, share of lane time, causes, per check-hour."""
        by_lane: dict[str, list[Record]] = collections.defaultdict(list)
        for k, r in self.lanes.items():
            by_lane[k.split("/", 1)[1]].append(r)
        total = sum(r.seconds for r in self.lanes.values()) or 1.0
        rows = []
        for lane, records in by_lane.items():
            r = _sum(records)
            rows.append({"lane": lane, "checks": r.checks, "time_share": round(r.seconds / total, 4),
                         "seconds": round(r.seconds, 1), "causes": round(r.causes, 2),
                         "per_hour": round(r.causes / r.seconds * 3600, 1) if r.seconds else None})
        return sorted(rows, key=lambda row: (-row["time_share"], row["lane"]))

    def top_line(self, n: int = 4, large_now: bool = True) -> str:
        """For the live view: the cells drawn most now, each with its share of time so far and its causes."""
        rows = self.table(large_now=large_now)[:n]
        if not rows or not any(r["checks"] for r in rows):
            return ""
        return "  ".join(f"{r['cell']} " + (f"{r['weight']:.0%} of draws, " if r["weight"] is not None else "")
                         + f"{r['time_share']:.0%} of time, {r['causes']:g} found" for r in rows)


def new_causes(created: Iterable[tuple[str, str, bool]], members: Mapping[str, Sequence[str]],
               name_of: Mapping[str, str]) -> dict[str, list[str]]:
    """The new compiler-bug causes of one check: cause -> the lanes of its new buckets.
    `created`: (bucket, lane, judged a compiler bug) for each bucket the check was the first to
    hit; a cause counts when one of them is a compiler bug and it holds no older bucket."""
    made = list(created)
    fresh = {sig for sig, _, _ in made}
    lanes: dict[str, list[str]] = {}
    bug: set[str] = set()
    for sig, lane, is_bug in made:
        name = name_of.get(sig)
        if name is None or not all(m in fresh for m in members.get(name, ())):
            continue  # one more bucket of a cause found before
        lanes.setdefault(name, []).append(lane)
        if is_bug:
            bug.add(name)
    return {name: where for name, where in lanes.items() if name in bug}


def rebuild(store: CampaignStore, allocation: Allocation, triage_bug: Callable[[Any], bool]) -> list[CellRow]:
    """The records of a store written before the table (or out of step with it: another
    shapefuzz resumed it), replayed from its candidates in the order they finished: each cause
    the store holds is credited to the first candidate that hit it. Returns every row, to write."""
    candidates = sorted(store.candidates(), key=lambda r: (r.finished, r.idx))
    order = {r.key: i for i, r in enumerate(candidates)}
    buckets = {b.sig: b for b in store.buckets()}
    first: dict[str, tuple[int, str]] = {}  # bucket -> (order, lane) of its first hit
    for key, sig, lane in store.hits():
        if key in order and (sig not in first or order[key] < first[sig][0]):
            first[sig] = (order[key], lane)
    cause_first: dict[str, tuple[int, str, list[str]]] = {}
    for sig, (i, lane) in first.items():
        bucket = buckets.get(sig)
        if bucket is None or not triage_bug(bucket):
            continue
        name = bucket.cause or bucket.sig
        if name not in cause_first or i < cause_first[name][0]:
            cause_first[name] = (i, candidates[i].key, [lane])
        elif i == cause_first[name][0]:
            cause_first[name][2].append(lane)
    by_candidate: dict[str, dict[str, list[str]]] = collections.defaultdict(dict)
    for name, (_, key, where) in cause_first.items():
        by_candidate[key][name] = where
    for row in candidates:
        if row.family not in allocation.groups:
            allocation.groups += (row.family,)
        checked = {lane: (v[0], float(v[1] or 0.0)) for lane, v in row.outcome.items()}
        allocation.record(row.key, row.family, row.features, checked, row.task_seconds, by_candidate.get(row.key, {}))
    return rows_of(allocation)


def resume_allocation(store: CampaignStore, allocation: Allocation, triage: Callable[[Any], Any]) -> None:
    """The records from the store's table; where it does not count every candidate the store holds
    (a store from before the table, or one another shapefuzz resumed), replayed from the candidates
    instead and written back (`triage`: a bucket's verdict, `verdicts.bucket_triage`)."""
    rows = store.cells()
    allocation.load(rows)
    if allocation.checked() == store.candidate_count():
        return
    fresh = Allocation(allocation.groups, allocation.seed, allocation.on, allocation.large, allocation.chain_ops)
    rebuilt = rebuild(store, fresh, lambda b: triage(b) == Triage.COMPILER_BUG)
    for records in (allocation.draws, allocation.lanes, allocation.found):
        records.clear()
    allocation.load(rebuilt)
    store.put_cells(rebuilt, replace=True)


def allocation_summary(store: CampaignStore, triage: Callable[[Any], Any]) -> dict[str, Any]:
    """What the report shows: whether the campaign drew by yield, each draw cell's row
    (`Allocation.table`) and each lane's (`lane_table`). A store from before the table is
    replayed here, in memory (the report writes nothing)."""
    allocation = Allocation.from_store(store)
    if not store.candidate_count():
        return {}
    if allocation.checked() != store.candidate_count():
        fresh = Allocation(allocation.groups, 0, allocation.on, allocation.large, allocation.chain_ops)
        rebuild(store, fresh, lambda b: triage(b) == Triage.COMPILER_BUG)
        allocation = fresh
    return {"on": allocation.on, "cells": allocation.table(), "lanes": allocation.lane_table()}


def rows_of(allocation: Allocation) -> list[CellRow]:
    """Every record, as rows."""
    return ([CellRow(DRAW, k, r) for k, r in allocation.draws.items()]
            + [CellRow(LANE, k, r) for k, r in allocation.lanes.items()]
            + [CellRow(FEATURE, k, Record(causes=float(n))) for k, n in allocation.found.items()])


__all__ = ["Allocation", "CellRow", "DRAW", "EPOCH", "FEATURE", "FLOOR", "LANE", "LARGE_FEATURE", "Record", "Request", "SHAPES",
           "SMALL", "allocation_summary", "new_causes", "rebuild", "resume_allocation", "rows_of", "shape_of", "spend"]
