"""Causes merged by what they are, after localization (report `_causes`, after
`split_by_localization`): never by message text alone.

- **One reproducer**: two causes holding buckets of the same stage and status whose saved reproducers
  (the corpus entry's, shrunk where it was) are byte-identical once shapefuzz's `// shapefuzz-case:`
  header is dropped are one bug, whatever their messages (a truncated backtrace made two of one
  torch-mlir crash), unless the two say they break in different places.
- **One program but for its sizes**: two compile failures in one pass whose saved reproducers are the
  same program once their static sizes are folded (`sizes_folded`; a `?` stays) are one bug: a minimal
  `trunci` of 1024 and of 64 i64s failing emulate-i64 on two vector ops, a concat-into-topk at two widths
  failing the forall tiling with two messages.
- **One pass, several symptoms**: a cause localized for certain to a pass (a wrong value or a
  run-time failure, `triage.localize`) and a cause that is localized to or fails in the same pass
  (a compile error's or crash's failing pass) are one bug when one's reproducer (the candidate it
  was saved from) hit the other's bucket (it cross-triggers: run on that lane, it gave that
  failure) or both are of the same op family (one FoldUnitExtentDims bug gave wrong values when a
  dim was dynamic and a verifier error inside the pass when it was static). Two compile errors are
  never merged here by their pass alone (their identities already say where and what), nor are
  causes whose buckets name different places.
- **Cross-triggering**: two causes that name one pass, whatever their symptoms (two compile errors
  too), are one bug when one's minimized reproducer, run on the other's lane, gave the other's
  failure or failed in that pass on the same kind of op (`crossed`, from campaign.causes.crosstrigger,
  which runs them: `cross_pairs` says which). Two compile errors of one message shape in different
  passes (one tiling bug trips the forall pass on one lane, GPUApplyTilingLevel on another) are run
  too, and one bug when one's reproducer gave the other's very failure.

- **One bound**: sizing bugs whose output names a size made from IREE's bound for a dynamic dim
  without a better one (2^53 - 1, or a small multiple: `triage.severity.from_dynamic_dim_bound`), and
  failures that name no size but were placed at the pass that made such a buffer (a run out of memory:
  `triage.culprit.made_from_bound`), are one bug wherever they fail (a CPU stack allocation "overflows
  64 bits", "exceeded stack allocation limit", "unbounded", a GPU's shared memory, an HSACO value out
  of range): the size says where it
  comes from, whatever pass refuses it. A cause that holds both such sizes and real ones (the
  same limit's message, its sizes folded) is split first: the real sizes are a limit of their own.

Before these merges, causes are split where one message hid two bugs: sizes from the bound beside real
ones (`split_real_limits`), and a diagnostic on the whole function, which names no op, over dispatches
that compute different things (`split_by_dispatch_kind`).

A merged cause keeps the name of the earliest; its buckets are listed most severe symptom first, so
its lead (and its title) is the worst thing the bug does. `symptoms` lists each symptom with its lanes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Callable, Iterable

from shapefuzz.campaign.causes.cause import Symptom
from shapefuzz.campaign.causes.cause_ties import split_cause
from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.limits_apart import apart_by_limit
from shapefuzz.model import Stage, Status
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.triage.identity import fold_message, identity_of
from shapefuzz.triage.issue import without_header
from shapefuzz.triage.localize import CODEGEN, PHASES, Localization
from shapefuzz.recheck.regression import pass_key
from shapefuzz.triage.severity import Severity, from_dynamic_dim_bound, overflow_note, severity_of

LOCALIZED_STAGES = (Stage.COMPARE, Stage.RUN)
# where a bucket localized to a phase only breaks ("codegen": each target's own): never one pass
_PHASE_KEYS = frozenset(pass_key(p) for p in (*PHASES, CODEGEN))
FAILING_STAGES = (Stage.COMPILE, Stage.VERIFY)


def entry_reproducer(entry: str) -> str | None:
    """A corpus entry's reproducer text (None when there is none, or it is not a plain file)."""
    from shapefuzz.corpus.entry import REPRODUCER

    path = Path(entry) / REPRODUCER if entry else None
    if path is None or path.is_symlink() or not path.is_file():
        return None
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def entry_meta(entry: str) -> dict:
    """A corpus entry's meta.json as an object ({} when there is none, it is not a plain file or
    not a JSON object): read alone, without the entry's arrays."""
    import json

    from shapefuzz.corpus.entry import META

    path = Path(entry) / META if entry else None
    if path is None or path.is_symlink() or not path.is_file():
        return {}
    try:
        meta = json.loads(path.read_text(errors="replace"))
    except (OSError, ValueError, RecursionError):
        return {}
    return meta if isinstance(meta, dict) else {}


def reproducer_digest(text: str | None) -> str:
    """What two reproducers share when they are the same program ("" for none)."""
    return hashlib.sha256(without_header(text).encode()).hexdigest() if text else ""


def merge_causes(groups: dict[str, list[BucketRow]], located: dict[str, Localization],
                 reproducer: Callable[[BucketRow], str | None], hits: Iterable[tuple[str, str, str]] = (),
                 action_passes: dict[str, str] | None = None,
                 crossed: Iterable[tuple[str, str]] = ()) -> dict[str, list[BucketRow]]:
    """`groups` (cause -> buckets) with the causes that are one bug merged (module doc): by one
    reproducer (`reproducer(bucket)` its text), then by one pass. `hits`: (candidate, bucket, lane);
    `crossed`: (bucket, bucket) whose minimized reproducer, run on the other's lane, cross-triggered
    (campaign.causes.crosstrigger)."""
    every = [b for members in groups.values() for b in members]
    texts = {b.sig: reproducer(b) if _own_entry(b) else None for b in every}  # each read once
    digest = {sig: reproducer_digest(text) for sig, text in texts.items()}
    place = {b.sig: _place(b, located, action_passes or {}) for b in every}
    hit_by: dict[str, set[str]] = {}
    for candidate, bucket, _lane in hits:
        hit_by.setdefault(candidate, set()).add(bucket)
    crossed = list(crossed)
    crossings = {frozenset(pair) for pair in crossed}

    bound = {b.sig for b in every if _from_bound(b) or _placed_at_bound(located.get(b.sig))}
    # a sizing bug that names no size, whose reproducer gave the bound's failure on its lane (crosstrigger,
    # `bound_pairs`): the run's source, never its target (a bound member's reproducer failing as a static
    # sort does says nothing of the sort), and only a program with a dynamic dim (a static one has no bound
    # to size from: the audit's static CUDA sort was shown as the bound family's reproducer)
    by_sig = {b.sig: b for b in every}
    bound |= {source for source, target in crossed if target in bound and source in by_sig
              and _unsized(by_sig[source]) and has_dynamic_dim(texts.get(source) or by_sig[source].repro_text)}

    def apart(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
        return _apart(xs, ys, place)

    def alike_sized(x: BucketRow, y: BucketRow) -> bool:
        # a size from the dynamic-dim bound and one that is not are two mechanisms, whatever ties them (one
        # shrunk sort failing on rocm-gfx942-o3 at 2^58 bytes and on rocm-gfx942 at a real 196,500, a
        # message whose folded words match): no tie but the bound's own joins them to the bound's family
        return (x.sig in bound) == (y.sig in bound)

    def one_program(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
        return not apart(xs, ys) and any(digest[x.sig] and digest[x.sig] == digest[y.sig] and alike_sized(x, y)
                                         and (x.stage, x.status) == (y.stage, y.status) for x in xs for y in ys)

    sized = {b.sig: reproducer_digest(sizes_folded(text)) if (text := texts[b.sig]) else ""
             for b in every if b.stage in FAILING_STAGES}

    def one_program_sized(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
        # the same minimal program but for its static sizes, failing in one pass: one bug (audit: a
        # `trunci` of 1024 and of 64 i64s failed emulate-i64 on two vector ops; one concat-into-topk at
        # two widths failed the forall tiling with two messages)
        return not apart(xs, ys) and any(
            sized.get(x.sig) and sized.get(x.sig) == sized.get(y.sig) and (x.stage, x.status) == (y.stage, y.status)
            and place[x.sig] and place[x.sig] == place[y.sig] and alike_sized(x, y) for x in xs for y in ys)

    def one_pass(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
        shared = _cause_passes(xs, place) & _cause_passes(ys, place)
        if apart(xs, ys) or not shared:
            return False
        if shared - _PHASE_KEYS and any(frozenset((x.sig, y.sig)) in crossings and alike_sized(x, y)
                                        for x in xs for y in ys):
            return True  # their minimized reproducers cross-trigger in one pass: one bug, compile errors included
        if not (_localized(xs, located) or _localized(ys, located)):
            return False  # two compile errors or crashes: their identities already say where and what
        cross = any(y.sig in hit_by.get(x.repro_key, ()) or x.sig in hit_by.get(y.repro_key, ())
                    for x in xs for y in ys)
        return cross or bool({x.family for x in xs} & {y.family for y in ys})

    def one_bound(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
        return any(x.sig in bound for x in xs) and any(y.sig in bound for y in ys)

    def one_failure(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
        # one message shape in two places, and one's reproducer gave the other's very failure there:
        # one root cause tripping a different pass by shape or lane (never a limit with a bug; the folded
        # words of "incorrect number of dynamic sizes, has N, expected N" matched a dynamic sort's missing
        # sizes with a conv's overflowed static one, and carried the sort's GPU bug into the bound's family)
        return not apart_by_limit(xs, ys) and any(
            _shape(x) and _shape(x) == _shape(y) and frozenset((x.sig, y.sig)) in crossings
            and alike_sized(x, y) for x in xs for y in ys)

    merged = _union(_union(_union(_union(_union(groups, one_program), one_program_sized), one_pass), one_failure),
                    one_bound)
    return {name: members if members is groups.get(name) else _most_severe_first(members)
            for name, members in merged.items()}


_DYNAMIC_DIM = re.compile(r"(?:tensor|memref)<[^>]*\?|vtensor<\[[^\]]*\?")


def has_dynamic_dim(text: str | None) -> bool:
    """Whether a reproducer's shaped types hold a `?` dim (`tensor<?x4xf32>`, `!torch.vtensor<[?,4],f32>`)."""
    return bool(text) and bool(_DYNAMIC_DIM.search(text or ""))


_SIZED_TYPE = re.compile(r"(?:tensor|memref|vector)<(?:(?:\d+|\?|\[\d+\])x)+|!torch\.vtensor<\[[^\]]*\]")


def sizes_folded(text: str) -> str:
    """`text` with every static size in its shaped types as N (`tensor<1x8x1xf32>` -> `tensor<NxNxNxf32>`,
    `!torch.vtensor<[1,851],f16>` -> `!torch.vtensor<[N,N],f16>`); a `?` stays: dynamic is part of the program."""
    return _SIZED_TYPE.sub(lambda m: re.sub(r"\d+", "N", m.group(0)), text)


def _union(groups: dict[str, list[BucketRow]],
           same: Callable[[list[BucketRow], list[BucketRow]], bool]) -> dict[str, list[BucketRow]]:
    """Causes merged wherever `same(one's buckets, the other's)` holds, asked of the causes as merged
    so far (so a merge can never join two that are apart); the earliest name is kept. A cause
    merged with none keeps its own list."""
    out = dict(groups)
    changed = True
    while changed:  # until no two causes as merged so far are one bug
        changed = False
        names = list(out)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if a in out and b in out and same(out[a], out[b]):
                    keep, drop = (a, b) if _first(out[a]) <= _first(out[b]) else (b, a)
                    out[keep] = [*out[keep], *out.pop(drop)] if keep == a else [*out.pop(a), *out[b]]
                    changed = True
    return out


def cross_pairs(groups: dict[str, list[BucketRow]], located: dict[str, Localization],
                action_passes: dict[str, str] | None = None,
                ) -> list[tuple[list[BucketRow], list[BucketRow], frozenset[str]]]:
    """Two causes whose minimized reproducers are worth running on each other's lanes
    (campaign.causes.crosstrigger): causes that name one pass and are not apart, each as its buckets
    that break there, and that pass's names; then causes whose compile errors say one message shape
    in different places (`_shape`), each as those buckets, with no pass (only the other's very
    failure ties them)."""
    every = [b for members in groups.values() for b in members]
    place = {b.sig: _place(b, located, action_passes or {}) for b in every}
    names = list(groups)
    out: list[tuple[list[BucketRow], list[BucketRow], frozenset[str]]] = []
    later: list[tuple[list[BucketRow], list[BucketRow], frozenset[str]]] = []
    for i, a in enumerate(names):
        for c in names[i + 1:]:
            xs, ys = groups[a], groups[c]
            shared = _cause_passes(xs, place) & _cause_passes(ys, place) - _PHASE_KEYS  # a pass, not a phase
            if shared and not _apart(xs, ys, place):
                out.append(([b for b in xs if place[b.sig] & shared], [b for b in ys if place[b.sig] & shared], shared))
            elif (alike := _shapes(xs) & _shapes(ys)) and not apart_by_limit(xs, ys):
                later.append((_alike_first([b for b in xs if _shape(b) in alike], ys),
                              _alike_first([b for b in ys if _shape(b) in alike], xs), frozenset()))
    return out + later  # after the pairs at one pass: the step's time goes to those first


def _shape(b: BucketRow) -> str:
    """A compile error's message as its shape (folded, the op it is attached to dropped), "" for
    anything else: one root cause tripping different passes says it alike ("inferred input/output
    operand #N has shape's dimension #N to be greater than or equal to N, but found N")."""
    return fold_message(b.message, True) if b.stage in FAILING_STAGES and b.status == Status.ERROR else ""


def _shapes(members: list[BucketRow]) -> set[str]:
    return {_shape(b) for b in members} - {""}


def _alike_first(members: list[BucketRow], others: list[BucketRow]) -> list[BucketRow]:
    """`members` with those on a lane of the same runtime driver as one of `others` first: the run
    goes to the first one's lane (one tiling bug trips the forall pass on rocm-gfx942 and
    GPUApplyTilingLevel on its single-dispatch variant)."""
    drivers = {getattr(BACKENDS.get(b.backend), "driver", None) for b in others} - {None}
    return sorted(members, key=lambda b: getattr(BACKENDS.get(b.backend), "driver", None) not in drivers)


def bound_pairs(groups: dict[str, list[BucketRow]]) -> list[tuple[list[BucketRow], list[BucketRow]]]:
    """A sizing bug that names no size (a run-time out-of-memory on a small module) and a cause whose
    size comes from the dynamic-dim bound: worth running the first's reproducer on the second's lane
    (campaign.causes.crosstrigger): if it gives a size from the bound there, they are one bug."""
    bound = [members for members in groups.values() if any(_from_bound(b) for b in members)]
    out = []
    for members in groups.values():
        unsized = [b for b in members if _unsized(b)]
        if unsized and not any(_from_bound(b) for b in members):
            out += [(unsized, [b for b in other if _from_bound(b)]) for other in bound]
    return out


def _unsized(b: BucketRow) -> bool:
    """A sizing failure that names no size: a run out of memory."""
    return b.status == Status.OOM and b.stage == Stage.RUN


def _apart(xs: list[BucketRow], ys: list[BucketRow], place: dict[str, frozenset[str]]) -> bool:
    # one program failing two ways (wrong values from a pass on one lane, from codegen on another)
    # is two bugs: buckets that say where they break must name one place; a target's documented gap
    # is never one bug with anything else (campaign.limits_apart)
    return apart_by_limit(xs, ys) or any(place[x.sig] and place[y.sig] and not place[x.sig] & place[y.sig] for x in xs for y in ys)


def split_real_limits(groups: dict[str, list[BucketRow]]) -> dict[str, list[BucketRow]]:
    """A cause whose buckets share a limit's message (its sizes folded) but where some sizes come
    from the dynamic-dim bound and others are real (a 2^55-byte stack beside a 53,248-byte one, a
    2^58-byte workgroup copy beside a 262,160-byte sort) is two bugs: the real limits become a
    cause of their own (`<name>.limit`). Before `merge_causes`."""
    bound = {b.sig for members in groups.values() for b in members if _from_bound(b)}
    out: dict[str, list[BucketRow]] = {}
    for name, members in groups.items():
        real = [b for b in members if b.sig not in bound and severity_of(
            b.stage, b.status, b.message, b.detail) == Severity.RESOURCE_LIMIT]
        if real and len(real) < len(members) and any(b.sig in bound for b in members):
            out[name] = [b for b in members if b not in real]
            out[f"{name}.limit"] = real
        else:
            out[name] = members
    return out


def _own_entry(b: BucketRow) -> bool:
    """Whether the bucket's corpus entry holds its own reproducer: past a cause's few entries, a
    bucket names one of the cause's (a sort's bucket named a conv's entry), which says nothing of
    its program."""
    from shapefuzz.corpus.entry import entry_id

    try:
        return bool(b.corpus_entry) and Path(b.corpus_entry).name == entry_id(b.failure.signature)
    except (KeyError, ValueError):
        return False


# a diagnostic on the whole function names no op ("'func.func' op failed to distribute", "function 'x'
# uses N bytes of shared memory; exceeded the limit"); the dispatch's name says what it computes
_FUNCTION_LEVEL = re.compile(r"^(?:'func\.func' op |function ')")
_DISPATCH_KIND = re.compile(r"_dispatch_\d+_((?:[a-z]+_)*?[a-z]+)(?=_(?:\d|D|[fi]\d|bf\d))")


def split_by_dispatch_kind(groups: dict[str, list[BucketRow]]) -> dict[str, list[BucketRow]]:
    """A cause whose buckets fail on a function-level diagnostic is split by what the failing
    dispatch computes, read from its name (`main_dispatch_0_matmul_like_96x65x...`, `..._topk_Dx16xi8`):
    an argmax and an attention that "failed to distribute", a conv tile and a top-k past shared
    memory, are different bugs. Buckets whose output names no dispatch stay with the first kind;
    the others become `<name>.<kind>`. Before `merge_causes` (the dynamic-dim bound joins its
    sizes again, whatever computes them)."""
    out: dict[str, list[BucketRow]] = {}
    for name, members in groups.items():
        out.update(split_cause(name, members, lambda b: dispatch_kind(b.message, b.detail),
                               lambda i, key: f".{key}"))
    return out


def dispatch_kind(message: str, detail: str) -> str:
    """For a diagnostic on the whole function (it names no op), what the failing dispatch computes,
    read from its name in the output ("arg_compare", "topk", "matmul_like"); else ""."""
    found = _DISPATCH_KIND.search(detail) if _FUNCTION_LEVEL.match(message) else None
    return found.group(1) if found else ""


def _first(members: list[BucketRow]) -> float:
    return min(b.first_seen for b in members)


def _from_bound(b: BucketRow) -> bool:
    """A sizing bug whose output names a size made from the dynamic-dim bound (module doc)."""
    message = b.message
    return severity_of(b.stage, b.status, message, b.detail) == Severity.SIZING_BUG and \
        from_dynamic_dim_bound(f"{message}\n{b.detail}")


def _placed_at_bound(loc: Localization | None) -> bool:
    """A failure that names no size (a run out of memory) placed for certain at the pass that sized a
    buffer from the bound (`judge.localize_probe.place_run_oom`): one bug with the sizes that name it."""
    from shapefuzz.triage.culprit import made_from_bound

    return loc is not None and loc.certain and made_from_bound(loc.evidence)


def _place(b: BucketRow, located: dict[str, Localization], action_passes: dict[str, str]) -> frozenset[str]:
    """Where a bucket breaks, as far as it says: the pass it is localized to for certain, or its
    phase ("codegen"); else the pass its compile fails in; else nothing. A pass is named by its
    spelling-free key (`pass_key`: its argument and its class name are one place, and so are a pass
    and its function-by-function form, `...-for-func`)."""
    loc = located.get(b.sig)
    if b.stage in LOCALIZED_STAGES:
        if loc is None or not loc.localized:
            return frozenset()
        if not loc.certain:
            return frozenset([loc.where])  # "needs X": apart from a certain X, never merged by pass
        names = [pass_key(n) for n in (loc.pass_name.split("{", 1)[0], loc.pass_class) if n]
        return frozenset(names) or frozenset([loc.phase])
    if b.stage in FAILING_STAGES:
        found = identity_of(b.stage, b.status, b.message, b.detail).failing_pass
        found = found or action_passes.get(b.sig, "")
        if found and loc is not None and loc.certain and loc.phase:  # canonicalize placed by its phase
            return frozenset([f"{pass_key(found.split('{', 1)[0])} ({loc.phase})"])
        return frozenset([pass_key(found.split("{", 1)[0])]) if found else frozenset()
    return frozenset()


def _cause_passes(members: list[BucketRow], place: dict[str, frozenset[str]]) -> frozenset[str]:
    """The pass every bucket of a cause that names a place names (empty when none does)."""
    named = [place[b.sig] for b in members if place[b.sig]]
    return frozenset.intersection(*named) if named else frozenset()


def _localized(members: list[BucketRow], located: dict[str, Localization]) -> bool:
    return any(b.stage in LOCALIZED_STAGES and b.sig in located and located[b.sig].certain
               and located[b.sig].pass_name for b in members)


def _most_severe_first(members: list[BucketRow]) -> list[BucketRow]:
    return sorted(members, key=lambda b: (severity_of(b.stage, b.status, b.message),
                                          b.first_seen))


def symptoms(members: list[BucketRow]) -> tuple[Symptom, ...]:
    """Each distinct symptom of a cause (stage, status, message) with the lanes that showed it, most
    severe first."""
    out: dict[tuple[str, str, str], list[str]] = {}
    notes: dict[tuple[str, str, str], str] = {}
    for b in _most_severe_first(members):
        key = (b.stage.value, b.status.value, b.message)
        if b.backend not in out.setdefault(key, []):
            out[key].append(b.backend)
        notes[key] = notes.get(key) or overflow_note(b.detail)
    return tuple(Symptom(stage=s, status=st, message=m, lanes=tuple(lanes), severity=severity_of(s, st, m).label,
                         note=notes[(s, st, m)]) for (s, st, m), lanes in out.items())


__all__ = ["bound_pairs", "dispatch_kind", "split_by_dispatch_kind", "split_real_limits", "cross_pairs", "entry_meta", "entry_reproducer", "merge_causes", "reproducer_digest", "symptoms"]
