"""A cause as a value: one bug the campaign found (its buckets tied by identity, split by
localization, merged by what they are), with its triage verdict and its bug fields. Built in one
place (`report._causes`), read by the report (text, Markdown, JSON), the dashboard, the issue
texts, the corpus records (`bugs.annotate_corpus`) and `triage --json`. Strings and plain dicts
only at the JSON boundary (`to_json`: the keys and order `report --json` printed when a cause was a dict)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from shapefuzz.campaign.outcomes import Triage
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.severity import Severity


@dataclass(frozen=True, kw_only=True)
class Symptom:
    """One way a cause shows (stage, status, message) and the lanes that showed it."""

    stage: str
    status: str
    message: str
    lanes: tuple[str, ...]
    severity: str  # its severity's label
    note: str = ""  # a second defect it shows beside the cause's bug (a size that wrapped on its way), or ""

    @property
    def text(self) -> str:
        """"wrong values on llvm-cpu, vmvx"."""
        return f"{self.severity} on {', '.join(self.lanes)}"

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "status": self.status, "message": self.message, "lanes": list(self.lanes),
                "severity": self.severity} | ({"note": self.note} if self.note else {})


@dataclass(frozen=True)
class Regression:
    """A cause's regression range as the store keeps it: `recheck.regression.regression_range`'s
    record, or the "no range: <why>" a phase that could not take it left (`unfinished`). Its text
    ("fails since X, passes in Y"), the corpus entry it was taken from; the record itself is kept
    whole (`to_json`) for what is written from it: `report --json`, meta.json's `bug`."""

    text: str
    entry: str
    unfinished: bool
    record: tuple[tuple[str, Any], ...] = field(default=(), compare=False, repr=False)
    shown: bool = True  # taken on the reproducer the cause's issue shows, as it reads now (else retaken)

    @staticmethod
    def of(record: Mapping[str, Any] | None) -> "Regression | None":
        """The range a stored record holds; None for none (or an empty one)."""
        if not record:
            return None
        return Regression(str(record.get("text", "")), str(record.get("entry") or ""), bool(record.get("unfinished")),
                          tuple(record.items()))

    @property
    def taken(self) -> bool:
        """A range that was taken (not a "no range: ..." left by a phase that could not finish)."""
        return not self.unfinished

    def to_json(self) -> dict[str, Any]:
        return dict(self.record)


@dataclass(frozen=True, kw_only=True)
class Cause:
    name: str  # "cause-<hash>", the engine's name for it (JSON: "cause")
    triage: Triage
    evidence: str  # why that verdict
    # the bug fields (campaign.causes.cause_facts.lead_fields)
    identity: str
    failing_pass: str
    component: str
    scope: str
    lanes: tuple[str, ...]
    severity: Severity  # how bad (triage.severity): its label in what is written
    localized: Localization | None
    # whether it is known, and since when it fails
    reported: str  # the URL of an entry of it marked reported upstream, or ""
    known: bool  # reported, or seen in an earlier session
    regression: Regression | None  # the range kept in the store
    # what the campaign saw
    backends: tuple[str, ...]
    stage: str
    status: str
    message: str
    buckets: tuple[str, ...]  # the signatures of its buckets, lead first
    count: int
    first_seen: float
    new: bool
    rehits: int
    rehit_seconds: float
    corpus_entries: tuple[str, ...]  # entry folders inside the campaign's corpus
    symptoms: tuple[Symptom, ...]
    merged: tuple[str, ...]  # the causes merged into it (campaign.causes.merging)
    shrunk: bool  # an example of it went through the shrinker
    chain: str = ""  # the context ops its reproducer keeps around the root ("pad(operand 0) → conv"); "": none
    not_shrunk: str = ""  # a compiler bug with no shrunk example: why (shrinkorder.not_shrunk_why); else ""
    # the root-operand form its reproducer uses ("operand: const (a dense non-splat constant)",
    # families/operands.describe); "": the plain operands
    operand: str = ""
    # every bucket still awaits its confirming re-run (the campaign stopped while it was queued or in
    # flight: a compile timeout's re-run costs the full cap per lane), so nothing of it was saved to
    # file: listed apart until a resume confirms it
    awaiting_confirmation: bool = False

    @property
    def severity_rank(self) -> int:
        """Lower is more severe."""
        return int(self.severity)

    @property
    def range_taken(self) -> bool:
        """Whether its regression range was taken (not absent, not a "no range: ...")."""
        return self.regression is not None and self.regression.taken

    @property
    def is_finding(self) -> bool:
        """Only compiler bugs count as findings, once confirmed (a cause with no saved reproducer
        has nothing to file)."""
        return self.triage == Triage.COMPILER_BUG and not self.awaiting_confirmation

    @property
    def verdict_label(self) -> str:
        """Its triage verdict as the report's tables say it."""
        return f"{self.triage.value}, awaiting its confirming re-run" if self.awaiting_confirmation else self.triage.value

    @property
    def one_bug_seen_several_ways(self) -> bool:
        return len(self.symptoms) > 1 or bool(self.merged)

    @property
    def where(self) -> str:
        """The failing pass, or where a wrong value was localized ("FoldUnitExtentDimsPass
        (global-optimization)", "codegen"), or why it was not."""
        loc = self.localized
        if loc is not None and loc.phase:
            return loc.where
        if loc is not None and loc.evidence:
            return loc.evidence.split(":", 1)[0]  # "not localized"
        return self.failing_pass or "-"

    @property
    def failing_place(self) -> str:
        """The failing pass, with its phase when it is a pass that runs in every phase and was placed
        ("canonicalize (abi, inside inline)"); else the failing pass as read."""
        loc = self.localized
        if self.failing_pass and loc is not None and loc.certain and loc.phase and self.stage == "compile":
            return loc.where
        return self.failing_pass

    @property
    def regression_text(self) -> str:
        """"fails since X, passes in Y" / "fails in every release tried (...)", or ""."""
        return self.regression.text if self.regression else ""

    def lanes_text(self) -> str:
        """Its lanes; for one bug seen several ways, each symptom with its lanes and the causes
        merged into it ("llvm-cpu, vmvx (wrong values on llvm-cpu; compile error on vmvx; merged: cause-x)")."""
        lanes = ", ".join(self.backends)
        parts = [s.text for s in self.symptoms] if len(self.symptoms) > 1 else []
        if self.merged:
            parts.append("merged: " + ", ".join(self.merged))
        return f"{lanes} ({'; '.join(parts)})" if parts else lanes

    def to_json(self) -> dict[str, Any]:
        """As `report --json` and `triage --json` print it (the keys and their order unchanged)."""
        return {
            "identity": self.identity, "failing_pass": self.failing_pass, "component": self.component,
            "scope": self.scope, "lanes": list(self.lanes), "severity": self.severity.label,
            "severity_rank": self.severity_rank,
            "localized": self.localized.to_json() if self.localized is not None else None,
            "reported": self.reported, "known": self.known,
            "regression": self.regression.to_json() if self.regression is not None else None,
            "cause": self.name, "triage": self.triage.value, "evidence": self.evidence,
            **({"awaiting_confirmation": True} if self.awaiting_confirmation else {}),
            "backends": list(self.backends), "stage": self.stage, "status": self.status, "message": self.message,
            "buckets": list(self.buckets), "count": self.count, "first_seen": self.first_seen, "new": self.new,
            "rehits": self.rehits, "rehit_seconds": self.rehit_seconds, "corpus_entries": list(self.corpus_entries),
            "symptoms": [s.to_json() for s in self.symptoms], "merged": list(self.merged), "shrunk": self.shrunk,
        } | ({"chain": self.chain} if self.chain else {}) | ({"operand": self.operand} if self.operand else {}) \
            | ({"not_shrunk": self.not_shrunk} if self.not_shrunk else {})  # keys only when said: as before otherwise


__all__ = ["Cause", "Regression", "Symptom"]
