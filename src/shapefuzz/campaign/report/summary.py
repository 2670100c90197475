"""What a campaign found, computed from its store (so it survives restarts): per family and per
backend, cases, failures, buckets and throughput; the buckets themselves; buckets found over
time as an SVG written by hand and a text sparkline. Rendered as terminal text, Markdown
(report.md in the campaign folder) and JSON."""

from __future__ import annotations

import collections
import dataclasses
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shapefuzz.campaign.allocation import allocation_summary
from shapefuzz.campaign.report.allocation_table import allocation_lines, allocation_markdown
from shapefuzz.campaign.causes.cause_facts import (finished, lead_fields, regression_of, regressions, reported_entries,
                                           reported_url, smallest_first)
from shapefuzz.campaign.causes.cause import Cause, Regression
from shapefuzz.campaign.causes.crossings import crossed, shown_crossed
from shapefuzz.campaign.report.stored_entries import corpus_of as _corpus_of, entry_of as _entry_of, stored_entry
from shapefuzz.campaign.localizing import driver_cleared, localizations, split_as_reported
from shapefuzz.campaign.causes.merging import entry_meta, entry_reproducer, merge_causes, symptoms
from shapefuzz.campaign.causes.stated import merge_by_mechanism, restated
from shapefuzz.campaign.config import format_duration
from shapefuzz.campaign.shrinkorder import not_shrunk_why
from shapefuzz.campaign.report.coverage_summary import coverage_summary, failing_passes
from shapefuzz.campaign.discovery import (
    UNOBSERVED, Discovery, compiler_bug_causes, estimate, seen_by, sightings, lines as discovery_lines,
)
from shapefuzz.campaign.lanecost import KEEP, LaneCost, lane_kin, lane_seconds
from shapefuzz.campaign.causes.verdicts import bucket_triage, cause_triage
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, ShrinkState, TaskKind, Triage, Verdict
from shapefuzz.files import atomic_write
from shapefuzz.families.operands import reproducer_operand
from shapefuzz.triage.issue import entry_chain
from shapefuzz.markup import cell, code, code_cell, fenced, text
from shapefuzz.process.worktime import PARTS

REPORT_MD, PLOT_SVG = "report.md", "buckets.svg"
_SPARK = "▁▂▃▄▅▆▇█"


@dataclass
class Row:
    cases: int = 0
    failures: int = 0  # candidates with at least one failing backend here
    unsupported: int = 0  # target limits, kept apart from bugs
    buckets: set = field(default_factory=set)
    seconds: float = 0.0  # worker time (family) or backend time (backend)
    after_seconds: dict[str, float] = field(default_factory=dict)  # a family's confirm / shrink worker time

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.cases, "failures": self.failures, "unsupported": self.unsupported,
                "buckets": len(self.buckets), "seconds": round(self.seconds, 2),
                "per_minute": round(self.cases / self.seconds * 60, 2) if self.seconds else None,
                **{f"{kind}_seconds": round(v, 1) for kind, v in self.after_seconds.items()}}


@dataclass
class Summary:
    folder: str
    reason: str
    candidates: int
    active_seconds: float
    tool_seconds: float
    task_seconds: float
    verdicts: dict[str, int]
    families: dict[str, Row]
    backends: dict[str, Row]
    buckets: list[dict[str, Any]]
    timeline: list[float]  # campaign-active seconds at which each bucket was first seen
    set_aside: dict[str, str]
    sessions: int
    messages: list[str] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)
    worker_seconds: dict[str, float] = field(default_factory=dict)  # check / confirm / shrink
    rehit_seconds: float = 0.0  # worker time spent re-hitting saturated buckets
    coverage: dict[str, Any] = field(default_factory=dict)  # campaign.coverage_summary.coverage_summary
    nodes: list[dict[str, Any]] = field(default_factory=list)  # per cluster node (--cluster): tasks, rate
    slow_lanes: list[dict[str, Any]] = field(default_factory=list)  # (family, feature, lane) given less (lanecost)
    discovery: Discovery | None = None  # species-discovery estimates (campaign/discovery.py)
    split: dict[str, float] = field(default_factory=dict)  # worker seconds outside compiler and runtime, by part
    allocation: dict[str, Any] = field(default_factory=dict)  # per cell: time, causes, weight (campaign/allocation.py)

    @property
    def findings(self) -> list[Cause]:
        """Causes judged compiler bugs: the only ones counted as findings."""
        return [c for c in self.causes if c.is_finding]

    @property
    def new_findings(self) -> list[Cause]:
        return [c for c in self.findings if c.new]

    @property
    def set_apart(self) -> dict[str, int]:
        return dict(collections.Counter("awaiting a confirming re-run" if c.awaiting_confirmation else c.triage.value
                                        for c in self.causes if not c.is_finding))

    @property
    def rate_per_min(self) -> float:
        return self.candidates / self.active_seconds * 60 if self.active_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "campaign": self.folder, "stopped": self.reason, "candidates": self.candidates,
            "active_seconds": round(self.active_seconds, 1), "per_minute": round(self.rate_per_min, 2),
            "tool_share": round(self.tool_seconds / self.task_seconds, 4) if self.task_seconds else None,
            "outside_tools": {k: round(v / self.task_seconds, 4) for k, v in outside(self).items()}
            if self.task_seconds else {},
            "findings": len(self.findings), "new_findings": len(self.new_findings),
            "shrunk_findings": sum(c.shrunk for c in self.findings),
            "causes_total": len(self.causes), "set_apart": self.set_apart,
            "worker_seconds": {k: round(v, 1) for k, v in self.worker_seconds.items()},
            "rehit_seconds": round(self.rehit_seconds, 1),
            "verdicts": self.verdicts, "sessions": self.sessions, "causes": [c.to_json() for c in self.causes],
            "families": {k: v.to_json() for k, v in self.families.items()},
            "backends": {k: v.to_json() for k, v in self.backends.items()},
            "buckets": self.buckets, "set_aside": self.set_aside, "messages": self.messages,
            **({"nodes": self.nodes} if self.nodes else {}),
            "slow_lanes": self.slow_lanes,
            "coverage": self.coverage,
            "discovery": self.discovery.to_json() if self.discovery is not None else None,
            "allocation": self.allocation,
        }


def summarize(store: CampaignStore, reason: str = "", messages: list[str] | None = None) -> Summary:
    families: dict[str, Row] = collections.defaultdict(Row)
    backends: dict[str, Row] = collections.defaultdict(Row)
    verdicts: collections.Counter[str] = collections.Counter()
    family_of: dict[str, str] = {}
    tool = task = 0.0
    cost = LaneCost(lane_kin(store))
    sample: set[str] = set()  # the candidates observed: discovery's sample
    for c in store.candidates():
        family_of[c.key] = c.family
        if c.verdict not in UNOBSERVED:
            sample.add(c.key)
        cost.record(c.family, c.features, lane_seconds(c.outcome))
        verdicts[c.verdict.value] += 1
        f = families[c.family]
        f.cases += 1
        f.failures += c.verdict == Verdict.FAIL
        f.seconds += c.task_seconds
        tool += c.tool_seconds
        task += c.task_seconds
        for backend, (status, seconds) in c.outcome.items():
            b = backends[backend]
            b.cases += 1
            b.seconds += seconds
            b.failures += status not in ("ok", "skipped", "unsupported")
            b.unsupported += status == "unsupported"
            f.unsupported += status == "unsupported"
    hits = store.hits()
    for candidate, bucket, backend in hits:
        backends[backend].buckets.add(bucket)
        if candidate in family_of:
            families[family_of[candidate]].buckets.add(bucket)
    for kind in (TaskKind.CONFIRM.value, TaskKind.SHRINK.value):
        for family, seconds in store.worker_time_by_family(kind).items():
            families[family].after_seconds[kind] = seconds
    extra_tool, extra_task = store.extra_time()  # confirming re-runs of new buckets
    split = store.worker_split()
    tool, task = tool + extra_tool, task + extra_task + split.get("start-up", 0.0)  # start-up is no task's
    corpus = _corpus_of(store)
    # each bucket's verdict as its text states it (re-derived on its shrunk reproducer where it was)
    rows = restated(store.buckets(), lambda b: _entry_of(b, corpus))
    sessions = store.sessions()
    session_start = sum(s[1] for s in sessions[:-1])  # active seconds before the latest session
    failing = failing_passes(store)
    causes = _causes(rows, session_start, store, failing)
    cause_of = {sig: c.name for c in causes for sig in c.buckets}
    buckets = [
        {"signature": b.sig, "backend": b.backend, "stage": b.stage.value, "status": b.status.value, "family": b.family,
         "count": b.count, "state": b.state.value, "first_seen": round(b.first_seen, 1), "last_seen": round(b.last_seen, 1),
         "reproducer": b.repro_key, "reproducer_bytes": b.repro_size, "shrunk_bytes": b.shrunk_size,
         "corpus_entry": b.corpus_entry, "cause": cause_of.get(b.sig, ""), "triage": bucket_triage(b).value,
         "evidence": b.evidence, "rehits": b.rehits, "rehit_seconds": round(b.rehit_seconds, 1),
         "shrink": b.shrink, "failing_pass": failing.get(b.sig, "")}
        for b in rows
    ]
    active = sum(s[1] for s in sessions)
    found = sightings(compiler_bug_causes(rows), seen_by(((c, b) for c, b, _ in hits), sample))
    worker = {"check": task - extra_task, "confirm": store.worker_time(TaskKind.CONFIRM.value),
              "shrink": store.worker_time(TaskKind.SHRINK.value)}
    return Summary(str(store.folder), reason, sum(verdicts.values()), active, tool, task, dict(verdicts),
                   dict(sorted(families.items())), dict(sorted(backends.items())), buckets,
                   sorted(b.first_seen for b in rows if b.state != BucketState.FLAKY), store.set_aside_backends(),
                   len(sessions), list(messages or []), causes, worker, sum(b.rehit_seconds for b in rows),
                   coverage=coverage_summary(store),  # by name: `nodes` comes before it
                   slow_lanes=[{"family": g, "feature": kind, "lane": lane, "mean_seconds": round(mean, 1),
                                "checks": n} for g, kind, lane, mean, n in cost.slow_kinds()],
                   discovery=estimate(found, len(sample), sum(verdicts.values()) / active * 60 if active else 0.0),
                   split=split, allocation=allocation_summary(store, bucket_triage))


def _regression(store: CampaignStore, names: list[str], members: list[BucketRow],
                ranges: dict[str, dict], shown: str) -> Regression | None:
    """The range kept under the cause's name (or a name it had before merging), else one taken
    during the campaign under the name its buckets had then; only one taken from an entry the
    cause holds: first one taken on the reproducer its issue shows (`shown`, as it reads now),
    then a finished range before a "no range: ..."; one taken elsewhere says so (`Regression.shown`)."""
    from shapefuzz.recheck.regression import reproducer_digest

    held = {Path(b.corpus_entry).name for b in members}
    found = [r for n in names if (r := regression_of(store, n)) and r.get("entry") in held]
    found += [r for n, r in sorted(ranges.items()) if n not in names and r.get("entry") in held]
    text = entry_reproducer(shown) if shown else None
    digest = reproducer_digest(text) if text is not None else None

    def on_shown(record: dict) -> bool:
        return bool(shown) and record.get("entry") == Path(shown).name and \
            (not record.get("reproducer") or record.get("reproducer") == digest)

    record = next((r for r in found if on_shown(r) and finished(r)), None) or \
        next((r for r in found if on_shown(r)), None) or next((r for r in found if finished(r)), found[0] if found else None)
    regression = Regression.of(record)
    return dataclasses.replace(regression, shown=on_shown(record)) if regression is not None and record else regression


def _causes(rows: list[BucketRow], session_start: float, store: CampaignStore | None = None,
            action_passes: dict[str, str] | None = None) -> list[Cause]:
    """The buckets grouped by cause (a bucket from before causes existed is its own), each with
    its bug fields (campaign.causes.cause_facts), in severity order, new before known."""
    groups: dict[str, list[BucketRow]] = collections.defaultdict(list)
    for b in rows:
        groups[b.cause or b.sig].append(b)
    located = localizations(store, rows)
    groups = merge_by_mechanism(split_as_reported(groups, located))
    corpus = _corpus_of(store) if store is not None else None
    was = {b.sig: name for name, members in groups.items() for b in members}  # the cause before merging
    groups = merge_causes(groups, located, lambda b: entry_reproducer(stored_entry(b.corpus_entry, corpus)),
                          store.hits() if store is not None else (), action_passes,
                          [*crossed(store), *shown_crossed(rows, lambda b: _entry_of(b, corpus))])
    known = reported_entries(corpus) if store is not None else {}
    ranges = regressions(store) if store is not None else {}
    out = []
    for name, members in groups.items():
        triage = cause_triage(members)
        lead = next((b for b in members if bucket_triage(b) == triage), members[0])
        first = min(b.first_seen for b in members)
        # its first entry (the issue text's, the range's): of the lead's kind, the smallest (as
        # campaign.ranging takes it), not an un-shrunk sibling that merged first
        entries = tuple(dict.fromkeys(e for kind in (True, False) for e in smallest_first(dict.fromkeys(
            e for e in (stored_entry(b.corpus_entry, corpus) for b in sorted(
                (b for b in members if ((b.stage, b.status) == (lead.stage, lead.status)) == kind),
                key=lambda b: b.shrunk_size or b.repro_size or 10**12)) if e))))
        # the most exact place its buckets were localized to (a pass, for certain; else a phase; else
        # why not), the shown entry's bucket first: the text shows that IR under its reproducer, and
        # shows none taken on another entry (a torch-mlir cause showed a 7-line unflatten under the IR
        # of its other entry's 40-line conv)
        shown = [b for b in members if entries and stored_entry(b.corpus_entry, corpus) == entries[0]]
        # (a target limit's place is its rule's: a localization run while a bucket was still "suspected
        # driver" would title it a codegen bug)
        order = [sig for sig in dict.fromkeys(b.sig for b in [*shown, lead, *members])
                 if sig in located and triage != Triage.TARGET_LIMIT]
        chosen = next((sig for sig in order if located[sig].certain and located[sig].pass_name),
                      next((sig for sig in order if located[sig].localized), order[0] if order else None))
        if chosen is None or any(b.sig == chosen for b in shown):
            where = None if chosen is None else located[chosen]
        else:  # taken on another entry: without its IR, and saying whose it is (an audit read an unbounded-
            # alloca CPU check's localization under a cause's static CUDA sort, as if of it)
            taken, lane = located[chosen], next(b.backend for b in members if b.sig == chosen)
            said = f"on this cause's {lane} entry, not the one shown: {taken.evidence}" if taken.localized \
                else taken.evidence
            where = dataclasses.replace(taken, ir_before="", ir_after="", dispatch="", evidence=said)
        bug = lead_fields([lead, *[b for b in members if b is not lead]], action_passes or {}, where)
        evidence = lead.evidence
        if triage == Triage.SUSPECTED_DRIVER and (cleared := driver_cleared(where, {b.backend for b in members})):
            triage, evidence = Triage.COMPILER_BUG, cleared  # localization ran it right on the same device
        reported = reported_url(members, bug["identity"], known)
        # a range taken from one of its own entries (a cause split since keeps its old name's)
        regression = _regression(store, [name, *sorted({was[b.sig] for b in members} - {name})], members, ranges,
                                 entries[0] if entries else "") if store is not None else None
        out.append(Cause(
            **bug, reported=reported, known=bool(reported) or first < session_start, regression=regression,
            name=name, triage=triage, evidence=evidence,
            backends=tuple(sorted({b.backend for b in members})), stage=lead.stage.value, status=lead.status.value,
            message=lead.message, buckets=tuple(b.sig for b in members),
            count=sum(b.count for b in members), first_seen=round(first, 1),
            new=first >= session_start and not reported, rehits=sum(b.rehits for b in members),
            rehit_seconds=round(sum(b.rehit_seconds for b in members), 1),
            corpus_entries=entries,
            symptoms=symptoms(members), merged=tuple(sorted({was[b.sig] for b in members} - {name})),
            shrunk=any(b.shrink == ShrinkState.DONE for b in members),  # an example went through the shrinker
            not_shrunk=not_shrunk_why(members) if triage == Triage.COMPILER_BUG else "",
            # the context ops it needs, read as export --format issue reads them: a device ladder's
            # saved verdict, else what its (minimal, once shrunk) reproducer keeps; "": a plain family bug
            chain=entry_chain(entry_meta(entries[0]), entry_reproducer(entries[0]))[0] if entries else "",
            operand=reproducer_operand(entry_reproducer(entries[0])) if entries else "",  # the form it needs
            awaiting_confirmation=triage == Triage.COMPILER_BUG and all(
                b.state == BucketState.PENDING and not b.corpus_entry for b in members),
        ))
    return sorted(out, key=lambda c: (not c.is_finding, c.severity_rank, not c.new, c.first_seen))


# --- buckets over time -------------------------------------------------------------------------
def sparkline(timeline: list[float], total: float, width: int = 40) -> str:
    """Cumulative buckets over the campaign's active time, one character per slice."""
    if total <= 0 or not timeline:
        return ""
    top = len(timeline)
    cells = []
    for i in range(width):
        t = total * (i + 1) / width
        n = sum(1 for x in timeline if x <= t)
        cells.append(_SPARK[min(len(_SPARK) - 1, int(n / top * (len(_SPARK) - 1)))] if n else " ")
    return "".join(cells)


def svg_plot(timeline: list[float], total: float, width: int = 640, height: int = 240) -> str:
    """A step plot of buckets found against campaign-active time, hand-written SVG."""
    pad_l, pad_b, pad_t, pad_r = 48, 32, 16, 16
    w, h = width - pad_l - pad_r, height - pad_t - pad_b
    top = max(1, len(timeline))
    total = max(total, timeline[-1] if timeline else 0.0, 1e-9)
    x = lambda t: pad_l + w * t / total  # noqa: E731
    y = lambda n: pad_t + h - h * n / top  # noqa: E731
    points = [(x(0), y(0))]
    for n, t in enumerate(timeline, 1):
        points += [(x(t), y(n - 1)), (x(t), y(n))]
    points.append((x(total), y(len(timeline))))
    path = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
    ticks = "".join(
        f'<text x="{pad_l - 6}" y="{y(n) + 4:.1f}" text-anchor="end">{n}</text>'
        for n in sorted({0, top // 2, top})
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="11">\n'
        f'<rect width="100%" height="100%" fill="white"/>\n'
        f'<line x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" y2="{pad_t + h}" stroke="black"/>\n'
        f'<line x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + h}" stroke="black"/>\n'
        f'<polyline fill="none" stroke="#c0392b" stroke-width="2" points="{path}"/>\n{ticks}\n'
        f'<text x="{pad_l}" y="{height - 8}">0</text>'
        f'<text x="{pad_l + w}" y="{height - 8}" text-anchor="end">{html.escape(format_duration(total))} active</text>'
        f'<text x="{pad_l + w / 2:.0f}" y="{height - 8}" text-anchor="middle">buckets found over time</text>\n'
        "</svg>\n"
    )


# --- renderings --------------------------------------------------------------------------------
def _table(title: str, rows: dict[str, Row]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [(title, "cases", "failures", "unsupported", "buckets", "per min")]
    for name, r in rows.items():
        rate = f"{r.cases / r.seconds * 60:.1f}" if r.seconds else "-"
        out.append((name, str(r.cases), str(r.failures), str(r.unsupported), str(len(r.buckets)), rate))
    return out


def text_lines(s: Summary) -> list[str]:
    lines = [
        f"campaign {s.folder}: {s.reason or 'stopped'}",
        f"{s.candidates} candidates in {format_duration(s.active_seconds)} active "
        f"({s.rate_per_min:.1f}/min over {s.sessions} session(s)); "
        + ", ".join(f"{k} {v}" for k, v in sorted(s.verdicts.items())),
    ]
    lines.append(headline(s))
    if shrunk_line(s):
        lines.append(shrunk_line(s))
    lines += discovery_lines(s.discovery)
    if s.task_seconds:
        lines.append(tool_line(s))
    if shares(s):
        lines.append(shares(s))
    lines += node_lines(s)
    if judge_line(s):
        lines.append(judge_line(s))
    for title, rows in (("family", s.families), ("backend", s.backends)):
        table = _table(title, rows)
        widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
        for row in table:
            lines.append("  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)))
    real = [b for b in s.buckets if b["state"] != "flaky"]
    lines.append(f"buckets: {len(real)}" + (f" (+{len(s.buckets) - len(real)} flaky)" if len(real) != len(s.buckets) else ""))
    spark = sparkline(s.timeline, s.active_seconds)
    if spark:
        lines.append(f"  over time: |{spark}|")
    for c in s.causes:
        lines.append(f"  {c.verdict_label}: {c.name} on {', '.join(c.backends)} ({c.count} hits"
                     + (f", {c.rehits} re-hits costing {c.rehit_seconds:.0f}s" if c.rehits else "") + ")"
                     + ("" if c.new else " [known" + (f": {c.reported}" if c.reported else "") + "]"))
        lines.append(f"    {c.severity.label}; {c.component}" + (f"; fails in {c.failing_place}" if c.failing_pass else "")
                     + f"; {c.scope}" + (f"; {c.regression_text}" if c.regression else ""))
        if c.chain:  # the context ops its minimal reproducer keeps; none: a plain family bug
            lines.append(f"    inside a chain: {c.chain}")
        if c.operand:  # the root-operand form its minimal reproducer keeps
            lines.append(f"    {c.operand}")
        if c.not_shrunk:
            lines.append(f"    not shrunk: {c.not_shrunk}")
        if c.one_bug_seen_several_ways:
            lines.append(f"    one bug: {c.lanes_text()}")
        for sig in c.buckets:
            b = next((x for x in s.buckets if x["signature"] == sig), None)
            if b is None:  # met after this summary's bucket list was read: the next report shows it
                continue
            mark = " [flaky]" if b["state"] == "flaky" else " [unconfirmed]" if b["state"] in ("pending", "unconfirmed") else ""
            lines.append(f"    {b['count']:>5}x {b['signature']}{mark}")
            if b["corpus_entry"]:
                lines.append(f"           -> {b['corpus_entry']}")
            if b.get("failing_pass"):
                lines.append(f"           failing pass: {b['failing_pass']}")
        if not c.is_finding and c.evidence:
            lines.append(f"    why: {c.evidence}")
    for backend, why in s.set_aside.items():
        lines.append(f"set aside: {backend}: {why}")
    lines += slow_lane_lines(s)
    lines += allocation_lines(s.allocation)
    lines += environment_lines(s)
    return lines + coverage_lines(s.coverage)


def slow_lane_lines(s: Summary) -> list[str]:
    """Lanes that compile a family so slowly that they were given its candidates less often."""
    return [f"slow: {r['lane']} for {r['family']}" + (f" with {r['feature']}" if r["feature"] else "")
            + f" (mean {r['mean_seconds']:.0f} s over {r['checks']} checks; given 1 in {round(1 / KEEP)} of its slots)"
            for r in s.slow_lanes]


def coverage_lines(c: dict[str, Any]) -> list[str]:
    """The coverage section of the text summary ([] when nothing was instrumented)."""
    if not c:
        return []
    lines = [f"compiler coverage: {sum(c['instrumented'].values())} instrumented compile(s); {c['passes']} passes, "
             f"{c['pass_patterns']} (pass, pattern) pairs, {c['patterns']} patterns"]
    for what, series in c["over_time"].items():
        for name, points in series.items():
            lines.append(f"  {what} {name}: " + " ".join(f"{n}@{format_duration(t)}" for t, n in points))
    for what, passes in c["of_interest"].items():
        if passes and what not in c["never_reached"]:
            lines.append(f"  reached {what}: " + ", ".join(
                f"{p} (ran on {len(lanes)} lane(s), {patterns} pattern(s) fired)" for p, (lanes, patterns) in passes.items()))
    for what, passes in c["never_reached"].items():
        lines.append(f"  never reached: {what} (no pattern fired in {', '.join(passes)})")
    return lines


def environment_lines(s: Summary) -> list[str]:
    """What our own environment did to the campaign (a full TMPDIR, an I/O error): never findings,
    said once each."""
    return list(dict.fromkeys(m for m in s.messages if m.startswith(("our environment", "our environment failed"))))


def node_lines(s: Summary) -> list[str]:
    """A cluster campaign's nodes: what each checked, and how fast."""
    return [f"node {n['node']}: refused: {n['refused']}" if n.get("refused") else
            f"node {n['node']}{'' if n['alive'] else ' (left)'}: {n['checks']} candidates, {n['tasks']} tasks, "
            f"{n['per_minute']:.1f}/min" for n in s.nodes]


def headline(s: Summary) -> str:
    """Only compiler bugs count as findings; the rest are listed apart."""
    apart = ", ".join(f"{n} {t}" for t, n in sorted(s.set_apart.items()))
    return (f"findings: {len(s.findings)} compiler-bug cause(s)"
            + (f" ({len(s.new_findings)} new)" if s.sessions > 1 else "")
            + f"; {len(s.causes)} cause(s) in {len(s.buckets)} bucket(s)" + (f"; set apart: {apart}" if apart else ""))


def shrunk_line(s: Summary) -> str:
    """How many compiler-bug causes have an example that went through the shrinker."""
    if not s.findings:
        return ""
    shrunk = sum(c.shrunk for c in s.findings)
    return f"shrunk: {shrunk} of {len(s.findings)} compiler-bug causes"


def judge_line(s: Summary) -> str:
    """How often a second judge (ONNX's reference; XLA for StableHLO cases) judged a candidate and
    disagreed with the NumPy reference: one sentence per judge that ran, joined by "; "."""
    from shapefuzz.judge.onnx_judge import JUDGE_LANE
    from shapefuzz.judge.xla_judge import JUDGE_LANE as XLA_LANE

    parts = []
    for lane, name in ((JUDGE_LANE, "onnx.reference"), (XLA_LANE, "XLA")):
        row = s.backends.get(lane)
        if row is not None:
            parts.append(f"second judge ({name}): {row.cases - row.unsupported} candidate(s) judged, {row.failures} "
                         f"disagreement(s) with the NumPy reference (triaged ours), {row.unsupported} it could not run")
    return "; ".join(parts)


def outside(s: Summary) -> dict[str, float]:
    """Worker seconds outside compiler and runtime by part, the untimed rest as "other" (a
    campaign from before the parts were timed: all of it)."""
    parts = {part: s.split[part] for part in (*PARTS, *sorted(set(s.split) - set(PARTS))) if part in s.split}
    return {**parts, "other": max(0.0, s.task_seconds - s.tool_seconds - sum(parts.values()))}


def tool_line(s: Summary) -> str:
    """The share of worker time inside compiler and runtime, and where the rest went."""
    rest = ", ".join(f"{part} {seconds / s.task_seconds:.1%}" for part, seconds in outside(s).items())
    return f"time in compiler and runtime: {s.tool_seconds / s.task_seconds:.1%} of worker time (outside: {rest})"


def shares(s: Summary) -> str:
    total = sum(s.worker_seconds.values())
    if not total:
        return ""
    parts = ", ".join(f"{k} {v / total:.0%}" for k, v in s.worker_seconds.items())
    return f"worker time: {parts}; re-hitting saturated buckets: {s.rehit_seconds:.0f}s"


def markdown(s: Summary) -> str:
    """report.md; every value from the store goes through `markup` (compiler text is never HTML,
    a `|` in a pass name never shifts a column)."""
    out = ["# shapefuzz campaign report", "", f"- folder: {code(s.folder)}", f"- stopped: {text(s.reason or '-')}",
           f"- candidates: {s.candidates} in {format_duration(s.active_seconds)} of active time "
           f"({s.rate_per_min:.1f}/min, {s.sessions} session(s))",
           "- verdicts: " + text(", ".join(f"{k} {v}" for k, v in sorted(s.verdicts.items()))),
           f"- {text(headline(s))}"] + ([f"- {text(shrunk_line(s))}"] if shrunk_line(s) else [])
    out += [f"- {line}" for line in discovery_lines(s.discovery)]
    if shares(s):
        out.append(f"- {text(shares(s))}")
    if judge_line(s):
        out.append(f"- {text(judge_line(s))}")
    if s.task_seconds:
        out.append(f"- {text(tool_line(s))}")
    for backend, why in s.set_aside.items():
        out.append(f"- set aside: {code(backend)}: {text(why)}")
    out += [f"- {text(line)}" for line in (*slow_lane_lines(s), *environment_lines(s), *node_lines(s))]
    for title, rows in (("Per family", s.families), ("Per backend", s.backends)):
        table = _table(title.split()[1], rows)
        out += ["", f"## {title}", "", "| " + " | ".join(table[0]) + " |", "|" + "---|" * len(table[0])]
        out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in table[1:]]
    out += ["", "## Buckets found over time", "", f"![buckets over time]({PLOT_SVG})", "",
            code(f"|{sparkline(s.timeline, s.active_seconds)}|"), "", *discovery_section(s), "## Causes", "",
            "Buckets with the same stage, status and message on several backends, hit by the same candidates, "
            "are one cause. Only compiler bugs are findings; the rest are listed apart with their evidence.", "",
            "Causes are in severity order (wrong values, miscompiled shapes at run time, runtime crashes, compiler "
            "crashes, compiler hangs, sizing bugs, compile errors, resource limits), new before known; the scope "
            "says whether a non-default flag is needed.", "",
            "| cause | triage | severity | component | failing pass | scope | regression | known | backends | hits "
            "| re-hits (cost) | buckets | evidence |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in s.causes:
        known = "new" if c.new else (c.reported or "known")
        out.append("| " + " | ".join([
            code_cell(c.name), *(cell(v) for v in (
                c.verdict_label, c.severity.label, c.component, c.where,
                c.scope + (f"; inside a chain: {c.chain}" if c.chain else "") + (f"; {c.operand}" if c.operand else ""),
                c.regression_text or "-", known,
                c.lanes_text(), c.count, f"{c.rehits} ({c.rehit_seconds:.0f}s)", len(c.buckets),
                c.evidence + (f"; not shrunk: {c.not_shrunk}" if c.not_shrunk else "")))]) + " |")
    out += allocation_markdown(s.allocation)
    lines = coverage_lines(s.coverage)
    if lines:
        out += ["", "## Compiler coverage", "", "Distinct passes and (pass, pattern) pairs first reached by the "
                "instrumented compiles, counted at six points of active time (`N@time`), per lane and per family "
                "of the candidate that reached them first; the lowerings of interest no compile reached.", "",
                *fenced("\n".join(lines))]
    out += ["", "## Buckets", "",
            "| count | re-hits (cost) | state | triage | cause | backend | stage | status | family | reproducer bytes "
            "| corpus entry | failing pass | signature |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for b in s.buckets:
        entry = code_cell(Path(b["corpus_entry"]).name) if b["corpus_entry"] else "-"
        out.append("| " + " | ".join([
            *(cell(v) for v in (b["count"], f"{b['rehits']} ({b['rehit_seconds']:.0f}s)", b["state"], b["triage"])),
            code_cell(b["cause"]), *(cell(v) for v in (b["backend"], b["stage"], b["status"], b["family"],
                                                       b["reproducer_bytes"])),
            entry, cell(b.get("failing_pass") or "-"), cell(b["signature"])]) + " |")
    return "\n".join(out) + "\n"


def discovery_section(s: Summary) -> list[str]:
    """report.md's "Is more time worth it?" section ([] before the first candidate)."""
    text = discovery_lines(s.discovery)
    if not text:
        return []
    return ["## Is more time worth it?", "", *[f"- {line}" for line in text], "",
            "A sighting of a cause is a checked candidate that hit one of its buckets (re-hits count, a candidate "
            "counts once per cause); the estimates follow STADS (Böhme, TOSEM 2018). `fuzz --until-saturated P` "
            "stops a campaign once the first chance stays below P.", ""]


def write_report(s: Summary, folder: Path) -> Path:
    """report.md and buckets.svg in the campaign folder, each written atomically (a link in the
    way, or planted as a fixed temporary name, is replaced, never written through)."""
    for name, body in ((PLOT_SVG, svg_plot(s.timeline, s.active_seconds)), (REPORT_MD, markdown(s))):
        atomic_write(folder / name, body.encode())
    return folder / REPORT_MD


def json_text(s: Summary) -> str:
    return json.dumps(s.to_json(), indent=2)
