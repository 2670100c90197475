"""`shapefuzz bundle --from-corpus CORPUS`: a corpus's entries of the bundle's lane, each with its
ladder when its case has a producer/consumer chain: the root alone and the chain with one context
op dropped, the rungs the shrinker itself would try first (the family's `shrink_candidates`, whose
context steps are `context.chain.outermost_drops` and `inner_drops`: any op whose neighbours
still fit without it goes alone; a whole side dropped at once is no rung). Run on the device, the
rungs say which context ops a device-only failure needs where no shrinker can run;
`ladder_verdicts` reads that back for `bundle-judge`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from shapefuzz.bundle.layout import AS_IS, ROOT, WITHOUT, CaseEntry, LadderRung
from shapefuzz.campaign.outcomes import Candidate
from shapefuzz.errors import UsageError

if TYPE_CHECKING:
    from shapefuzz.campaign.iree import IreeTarget


@dataclass(frozen=True)
class Rung:
    entry: str  # the corpus entry's id
    rung: str  # "as-is", "root" or "without"
    dropped: int | None  # the index of the dropped context op in the entry's chain (a "without" rung)
    op: str  # that op's name, "" for the others
    candidate: Candidate

    @property
    def label(self) -> str:
        return rung_label(self.rung, self.dropped, self.op)

    @property
    def id_suffix(self) -> str:
        """What its case id in the bundle ends with: -as-is, -root or -drop<k>."""
        return f"-{self.rung}" if self.rung in (AS_IS, ROOT) else f"-drop{self.dropped}"

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "rung": self.rung, "dropped": self.dropped, "op": self.op}


def rung_label(rung: str, dropped: int | None, op: str) -> str:
    return f"without {op} (op {dropped})" if rung == WITHOUT else rung


def ladder(entry_id: str, candidate: Candidate, target: "IreeTarget") -> list[Rung]:
    """The entry's case as it is, then (when it has a chain) the root alone and each chain with one
    context op dropped that the family accepts, as the shrinker proposes them."""
    from shapefuzz.campaign.iree import load_family
    from shapefuzz.case import Case

    family = load_family(candidate.group)
    params = family.load(Case(candidate.group, candidate.payload).params)
    rungs = [Rung(entry_id, AS_IS, None, "", candidate)]
    chain = tuple(params.context or ())
    if not chain:
        return rungs
    root = params.replace(context=())
    for proposal in family.shrink_candidates(params):
        if proposal.replace(context=()) != root:
            continue  # a smaller root, not a context step
        kept = tuple(proposal.context or ())
        if kept:
            dropped = next((i for i in range(len(chain)) if chain[:i] + chain[i + 1:] == kept), None)
            if dropped is None:
                continue
            rung, op = WITHOUT, chain[dropped].op
        else:
            rung, dropped, op = ROOT, None, ""
        payload = Case.make(candidate.group, proposal).params_json
        made = target.from_payload(candidate.group, candidate.seed, payload)
        rungs.append(Rung(entry_id, rung, dropped, op, made))
    return sorted(rungs, key=lambda r: ({AS_IS: 0, ROOT: 1}.get(r.rung, 2), r.dropped or 0))


def corpus_rungs(corpus: Path, lane: str, target: "IreeTarget", say: Callable[[str], None]) -> list[Rung]:
    """Every rung of every entry of `lane` in the corpus (an entry of another lane skipped with a
    line); UsageError for a folder that is not a corpus, an unreadable entry, or one of the lane
    without a case header."""
    from shapefuzz.corpus import UnreadableEntry, iter_entries
    from shapefuzz.errors import CorpusError

    if not corpus.is_dir():
        raise UsageError(f"--from-corpus {corpus}: not a folder")
    try:
        entries = list(iter_entries(corpus))
    except CorpusError as error:
        raise UsageError(f"--from-corpus {corpus}: {error}") from None
    if not entries:
        raise UsageError(f"--from-corpus {corpus}: not a corpus (no entry folders)")
    rungs: list[Rung] = []
    for entry in entries:
        if isinstance(entry, UnreadableEntry):
            raise UsageError(f"--from-corpus: entry {entry.path.name}: {entry.reason}")
        if entry.signature.backend != lane:
            say(f"{entry.id}: skipped (lane {entry.signature.backend}, the bundle's is {lane})")
            continue
        case = entry.case
        if case is None:
            raise UsageError(f"--from-corpus: entry {entry.id} has no shapefuzz-case header (nothing to re-render)")
        try:
            rungs += ladder(entry.id, target.from_payload(case.family, entry.seed, case.params_json), target)
        except (ValueError, TypeError, KeyError) as error:
            raise UsageError(f"--from-corpus: entry {entry.id}: its case does not render ({str(error)[:120]})") from None
    if not rungs:
        raise UsageError(f"--from-corpus {corpus}: no entry of lane {lane}")
    return rungs


# ----------------------------------------------------------------------------- read back (bundle-judge)

FAILS, PASSES, FLAKY, UNKNOWN = "fails", "passes", "flaky", "unknown"


@dataclass(frozen=True)
class Verdict:
    entry: str
    family: str
    failing: tuple[str, ...]  # the rungs that still fail on the device (and pass on llvm-cpu)
    verdict: str
    chain: str | None  # the context ops the failure needs, as triage spells a chain ("": a plain bug; None: undecided)

    def line(self) -> str:
        return f"{self.entry}: fails on the device: {', '.join(self.failing) or 'none'}; {self.verdict}"

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "family": self.family, "failing": list(self.failing), "verdict": self.verdict,
                "chain": self.chain}


def _state(row: Any) -> str:
    from shapefuzz.bundle import judge

    if row.conclusion == judge.DEVICE_FINDING:
        return FAILS
    if row.conclusion == judge.FLAKY:
        return FLAKY
    return PASSES if row.device == "ok" and not row.conclusion else UNKNOWN


def verdicts(folder: Path, cases: Sequence[CaseEntry], rows: list[Any]) -> list[Verdict]:
    """Per entry of a ladder bundle, the rungs that fail on the device and what they say (`cases`:
    the manifest's, each rung checked by `layout.read_manifest`)."""
    from shapefuzz.bundle.judge import read_case_mlir
    from shapefuzz.schema import SchemaError
    from shapefuzz.triage.issue import chain_text

    by_id = {row.id: row for row in rows}
    entries: dict[str, list[tuple[LadderRung, Any]]] = {}
    for line in cases:
        if line.ladder is not None and line.id in by_id:
            entries.setdefault(line.ladder.entry, []).append((line.ladder, by_id[line.id]))
    out = []
    for entry, rungs in entries.items():
        states = {(r.rung, r.dropped): (_state(row), r, row) for r, row in rungs}
        failing = tuple(rung_label(r.rung, r.dropped, r.op) for r, row in rungs if _state(row) == FAILS)
        as_is = states.get((AS_IS, None))
        root = states.get((ROOT, None))
        family = as_is[2].family if as_is else rungs[0][1].family
        chain: str | None = None
        if as_is is None or as_is[0] == UNKNOWN:
            text = f"undecided: as-is {as_is[2].conclusion or as_is[2].device if as_is else 'is not in the bundle'}"
        elif as_is[0] == FLAKY or (root is not None and root[0] == FLAKY):
            text = "flaky"
        elif as_is[0] == PASSES:
            text = "as-is passes now"
        elif root is None:  # an entry with no chain is its own root
            text, chain = f"no chain: a plain {family} bug", ""
        elif root[0] == FAILS:
            text, chain = f"root alone fails: a plain {family} bug", ""
        elif root[0] == UNKNOWN:
            text = f"undecided: the root alone is {root[2].conclusion or root[2].device}"
        else:
            try:
                _, case = read_case_mlir(folder, as_is[2].id)
            except SchemaError as error:
                raise UsageError(str(error)) from None
            context = case.params.get("context")  # (the family checked it when the case was judged)
            ops = [op for op in context if isinstance(op, dict)] if isinstance(context, list) else []
            drops = {r.dropped: state for (rung, _), (state, r, _row) in states.items()
                     if rung == WITHOUT and r.dropped is not None}  # (a checked WITHOUT rung has one)
            if len(ops) == 1:  # its one op dropped is the root alone, which passes
                drops = {0: PASSES}
            needed = [i for i, state in drops.items() if state == PASSES]
            kept = [op for i, op in enumerate(ops) if drops.get(i) != FAILS]
            chain = chain_text(family, {"context": kept})
            said = ", ".join(str(ops[i].get("op")) for i in sorted(needed) if i < len(ops))
            text = (f"needs the chain; dropping {said} makes it pass, so kept: {chain}" if said else
                    f"needs the chain; no single drop makes it pass, so kept: {chain}")
            untried = [str(op.get("op")) for i, op in enumerate(ops) if i not in drops]
            if untried:
                text += f" ({', '.join(untried)} not tried alone: without it the chain no longer fits)"
            if any(state in (UNKNOWN, FLAKY) for state in drops.values()):
                text += " (a rung was undecided: its op is kept)"
        out.append(Verdict(entry, family, failing, text, chain))
    return out


def save_verdicts(corpus: Path, found: list[Verdict], bundle_id: str) -> int:
    """Each decided verdict into its entry's meta.json `bug` (`chain`: the context ops it needs, as
    triage reads a cause's chain; `ladder`: the verdict and its evidence), atomically, entry by
    entry; every entry is found before any is written, each an entry folder of `corpus` itself
    (`files.child`: the manifest names it, and a bundle comes from elsewhere). How many were written."""
    from shapefuzz.corpus import load_entry, update_meta
    from shapefuzz.errors import CorpusError
    from shapefuzz.files import child

    folders = {}
    for v in found:
        try:
            folders[v.entry] = load_entry(child(corpus, v.entry, "ladder entry")).path
        except CorpusError as error:  # (UnsafeName is one)
            raise UsageError(f"--save {corpus}: entry {v.entry[:60]!r}: {error}") from None
    for v in found:
        bug = dict(load_entry(folders[v.entry]).meta.get("bug") or {})
        bug["ladder"] = {"verdict": v.verdict[:1900], "failing": ", ".join(v.failing)[:1900], "bundle": bundle_id}
        if v.chain is not None:
            bug["chain"] = v.chain
        update_meta(folders[v.entry], bug=bug)
    return len(found)
