"""What an issue text may say of the reproducer it shows: only what was run on that very reproducer.

A campaign decides a verdict on the candidate it drew, and shrinks it later: the verdict's evidence
("the module holds a 33xi8", "the top 323 of 1,025") and the cause's lanes (where any candidate of the
cause failed) describe other modules than the shrunk one the text shows. So each fact carries the
digest of the reproducer it is of, and the text keeps a fact only for the reproducer it shows:

- `triage_evidence_of` (meta.json): the digest of the module the triage evidence was computed on
  (written with the evidence, `corpus.save_finding`); an entry without it (older, or evidence written by
  hand) is quoted as recorded;
- `shown` (meta.json, `ShownRuns`): the reproducer's own runs on the lanes the cause claims, each
  lane's verdict, the lanes left unchecked and why, and the verdict re-derived from those runs (the
  campaign's step after its budget, `campaign.shown_runs`; `export --format issue` re-checks itself).

Runs nothing: the records are made by the layers above."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from shapefuzz.model import Signature, Status

SAME, OTHER, PASSES, COMPILES, UNSUPPORTED = "same", "other", "passes", "compiles", "unsupported"
VERDICTS = (SAME, OTHER, PASSES, COMPILES, UNSUPPORTED)
_CASE_HEADER = "// shapefuzz-case:"
# failures whose reproducer is not run again for a record: each run costs the whole memory cap or time limit
BLOW_UPS = (Status.OOM, Status.TIMEOUT)


def one_line(text: str, limit: int) -> str:
    """`text` as one line of at most `limit` characters (control characters become spaces)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:limit]


def reproducer_digest(mlir: str) -> str:
    """Which program a fact is of: the reproducer without shapefuzz's header line (16 hex digits)."""
    body = "".join(line for line in mlir.splitlines(keepends=True) if not line.startswith(_CASE_HEADER))
    return hashlib.sha256(body.strip().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class LaneRun:
    """One lane's verdict on the shown reproducer: `verdict` one of VERDICTS, `what` one line."""

    lane: str
    verdict: str
    what: str = ""
    # the bug identity of its failure where that says where the compiler failed (a strong one), else "":
    # a lane where the reproducer gives another cause's very identity ties the two (`shown_crossings`)
    identity: str = ""


@dataclass(frozen=True)
class ShownRuns:
    """The shown reproducer's own runs (`digest` names it), the lanes claimed but not run and why,
    and the triage verdict re-derived from these runs ("" where none was)."""

    digest: str
    runs: tuple[LaneRun, ...]
    left: tuple[str, ...] = ()
    why_left: str = ""
    triage: str = ""
    evidence: str = ""

    def lanes(self, verdict: str) -> list[str]:
        return [r.lane for r in self.runs if r.verdict == verdict]

    def to_json(self) -> dict[str, Any]:
        """One-line texts throughout (meta.json's rule for its records)."""
        return {"reproducer": self.digest,
                "runs": [{"lane": r.lane, "verdict": r.verdict, "what": one_line(r.what, 300),
                          **({"identity": one_line(r.identity, 1000)} if r.identity else {})} for r in self.runs],
                "left": list(self.left), "why_left": one_line(self.why_left, 300), "triage": self.triage,
                "evidence": one_line(self.evidence, 2000)}

    @staticmethod
    def from_json(data: Any) -> "ShownRuns | None":
        """The record as meta.json keeps it; None for anything else (an older or damaged one)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("reproducer"), str):
            return None
        runs = tuple(LaneRun(str(r.get("lane", "")), str(r.get("verdict", "")), str(r.get("what", "")),
                             str(r.get("identity") or ""))
                     for r in data.get("runs") or () if isinstance(r, Mapping) and r.get("verdict") in VERDICTS)
        left = tuple(str(x) for x in data.get("left") or () if isinstance(x, str))
        return ShownRuns(data["reproducer"], runs, left, str(data.get("why_left") or ""),
                         str(data.get("triage") or ""), str(data.get("evidence") or ""))


def same_failure(signature: Signature, identity: str, entry_signature: Signature, entry_identity: str) -> bool:
    """Whether a lane's failure is the one the issue is about: the same stage, status and message on
    another lane, or the same bug identity (a failing pass's message in another target's words)."""
    same = (signature.stage, signature.status, signature.message) == \
        (entry_signature.stage, entry_signature.status, entry_signature.message)
    return same or bool(identity and identity == entry_identity)


def shown_runs_of(meta: Mapping[str, Any], mlir: str) -> ShownRuns | None:
    """meta.json's record of the shown reproducer's runs, only when it is of `mlir` (a later shrink
    makes it stale)."""
    record = ShownRuns.from_json(meta.get("shown"))
    return record if record is not None and record.digest == reproducer_digest(mlir) else None


def claimed_lanes(meta: Mapping[str, Any], entry_backend: str) -> list[str]:
    """The lanes the cause says it reproduces on (its buckets'), the entry's own first."""
    bug = meta.get("bug") if isinstance(meta.get("bug"), Mapping) else {}
    assert isinstance(bug, Mapping)
    return list(dict.fromkeys([entry_backend, *(str(x) for x in bug.get("lanes") or [] if isinstance(x, str))]))


def reproduces_on(meta: Mapping[str, Any], entry_backend: str, shown: ShownRuns | None) -> tuple[list[str], list[str]]:
    """(the lanes where the shown reproducer fails the way this issue says, the lanes the cause claims
    that were not run with it). The entry's own lane always holds: its reproducer was saved, and
    shrunk, failing there with this signature; without a record nothing else is known of it."""
    ran = {r.lane for r in shown.runs} if shown is not None else set()
    same = shown.lanes(SAME) if shown is not None else []
    if shown is not None and entry_backend in ran and entry_backend not in same:
        own: list[str] = []  # re-checked, and its own lane no longer fails this way (said by the runs)
    else:
        own = [entry_backend]
    holds = list(dict.fromkeys([*own, *same]))
    unchecked = [lane for lane in claimed_lanes(meta, entry_backend) if lane not in ran and lane not in holds]
    return holds, unchecked


def component_said(meta: Mapping[str, Any], entry_backend: str, shown: ShownRuns | None) -> str:
    """The cause's component with its target list cut to what the shown reproducer bears out: only the
    lanes it was seen failing on this way (audit C of a fresh campaign: "codegen for ..., vmvx, ..." over
    a reproducer vmvx compiles and runs right; audit D of the next: "llvm-cpu" from an O3 lane the
    shown reproducer was never run on, which llvm-cpu compiles). The lanes it was not re-checked on
    are the text's "Not re-checked" line."""
    from shapefuzz.triage.component import target_list

    bug = meta.get("bug") if isinstance(meta.get("bug"), Mapping) else {}
    assert isinstance(bug, Mapping)
    component = str(bug.get("component") or "")
    claimed = claimed_lanes(meta, entry_backend)
    if shown is None or not component or len(claimed) < 2:
        return component
    holds, _ = reproduces_on(meta, entry_backend, shown)
    kept = [lane for lane in claimed if lane in holds] or [entry_backend]
    before, after = target_list(claimed), target_list(kept)
    return component.replace(before, after, 1) if before in component else component


def scope_said(meta: Mapping[str, Any], entry_backend: str, shown: ShownRuns | None) -> str:
    """The pipeline the issue text says it needs, as the shown reproducer's own runs bear it out: "default
    pipeline" when a plain lane reproduces it; "only with <flags>" only when each variant lane's plain lane ran
    this reproducer and passed (for a wrong value, ran it and matched) or failed another way, said with what it
    did (and, for variant lanes whose plain lane was not run, "not tried without them on <lane>"); else
    "seen with <flags>; not tried on the plain lane (<lane>)" (audit B and C: an O3-only claim for
    a slow compile the plain lane shares, inferred from the one lane the campaign ran)."""
    from shapefuzz.triage.component import plain_lanes, scope_of

    bug = meta.get("bug") if isinstance(meta.get("bug"), Mapping) else {}
    assert isinstance(bug, Mapping)
    holds, _ = reproduces_on(meta, entry_backend, shown)
    claimed = scope_of(holds, str(bug.get("component") or ""))
    if claimed == "default pipeline":
        return claimed
    executed = str(meta.get("stage") or "") in ("run", "compare")  # compiling says nothing of values
    runs = {r.lane: r for r in shown.runs} if shown is not None else {}
    told, untried = [], []
    for plain in plain_lanes(holds):
        run = runs.get(plain)
        if run is not None and (run.verdict in (PASSES, OTHER) or run.verdict == COMPILES and not executed):
            told.append(f"{plain} without them {run.what or run.verdict}")
        else:
            untried.append(plain)
    if not untried:
        return f"{claimed}: {'; '.join(told)}"
    if told:  # (an audit read "not tried on the plain lane (cuda-sm80)" under a llvm-cpu lead whose plain lane was run)
        return f"{claimed}: {'; '.join(told)}; not tried without them on {', '.join(untried)}"
    return f"seen {claimed.removeprefix('only ')}; not tried on the plain lane ({', '.join(untried)})"


def evidence_is_of(meta: Mapping[str, Any], mlir: str) -> bool:
    """Whether the triage evidence describes this reproducer: written with the digest of the module it
    was computed on (an entry without one, from before, or written by hand, is taken as recorded)."""
    of = meta.get("triage_evidence_of")
    return not isinstance(of, str) or not of or of == reproducer_digest(mlir)


def stated_triage(meta: Mapping[str, Any], mlir: str, shown: ShownRuns | None) -> dict[str, Any]:
    """`meta` with the triage verdict and evidence the text states of the shown reproducer (as
    `triage_text` says it): where the recorded evidence is of another module and this reproducer's own
    runs re-derived a verdict, that one. The route (`tracker_of`) reads it, so the text's header never
    contradicts its own Triage line (a "suspected driver" header over a re-derived "target limit")."""
    if not meta.get("triage") or evidence_is_of(meta, mlir) or shown is None or not shown.triage:
        return dict(meta)
    return {**meta, "triage": shown.triage, "triage_evidence": shown.evidence, "triage_evidence_of": shown.digest}


def triage_text(meta: Mapping[str, Any], mlir: str, shown: ShownRuns | None) -> str:
    """The triage verdict as the issue text may say it of the shown reproducer (plain text, "" for none):
    its evidence where it was computed on this reproducer; else the verdict re-derived from this
    reproducer's own runs; else the verdict alone, said to be the candidate's, with what this
    reproducer's runs show."""
    verdict = str(meta.get("triage") or "")
    evidence = str(meta.get("triage_evidence") or "")
    if not verdict:
        return ""
    if evidence_is_of(meta, mlir):
        return verdict + (f" ({evidence})" if evidence else "")
    if shown is not None and shown.triage:
        return f"{shown.triage}, re-derived from this reproducer's own runs" + (
            f" ({shown.evidence})" if shown.evidence else "")
    runs = "; ".join(f"{r.lane} {r.what or r.verdict}" for r in shown.runs) if shown is not None else ""
    return (f"{verdict}, decided on the larger candidate the campaign found before shrinking (its evidence "
            "describes that module, not this reproducer" + (f"; this reproducer's own runs: {runs}" if runs else
                                                             "; this reproducer was not re-checked on other lanes")
            + ")")


__all__ = ["BLOW_UPS", "COMPILES", "LaneRun", "OTHER", "PASSES", "SAME", "ShownRuns", "UNSUPPORTED", "VERDICTS", "claimed_lanes", "component_said",
           "evidence_is_of", "one_line", "reproducer_digest", "reproduces_on", "same_failure", "scope_said", "shown_runs_of",
           "stated_triage", "triage_text"]
