"""Causes: buckets that are one bug seen on several backends (no IREE). Two buckets belong to one
cause when their identities are equal and either the identity is strong (it names the failing
pass or crash frames) or at least one candidate hit both; and whatever their identities, when one
candidate's runs on one lane failed both ways (a bug's two faces: `faces`). A cause is named by a
short hash of what they share; when the same message makes two causes that no candidate has tied
together yet, the later one gets a suffix ("-2"), and takes the first's name once a candidate ties them."""

from __future__ import annotations

import collections
import hashlib
from typing import Callable, Iterable

from shapefuzz.campaign.database import BucketRow
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.triage.identity import mechanism_identity, mechanism_of


def cause_key(fields: dict[str, str], evidence: str = "") -> str:
    """What the buckets of one cause share: for a wrong value or run failure whose triage
    `evidence` names its mechanism, that mechanism on that kind of lane (triage.identity); else the
    bug identity the target computed (failing pass, crash frames, folded message), else the
    signature without the backend (older stores)."""
    mechanism = mechanism_key(fields, evidence)
    if mechanism:
        return mechanism
    if fields.get("identity"):
        return fields["identity"]
    return f"{fields.get('stage', '')}/{fields.get('status', '')}: {fields.get('message', '')}"


def is_strong(fields: dict[str, str], evidence: str = "") -> bool:
    """The identity says where the compiler failed (or how the values go wrong): equal ones are one
    cause without a tie."""
    return bool(mechanism_key(fields, evidence)) or (bool(fields.get("identity")) and bool(fields.get("strong")))


def mechanism_key(fields: dict[str, str], evidence: str) -> str:
    """The key of the mechanism a wrong value's or run failure's verdict `evidence` names, on its kind of
    lane ("" where it names none, or the compiler named a place)."""
    if fields.get("strong") or fields.get("stage") not in ("compare", "run") or not evidence:
        return ""  # a place the compiler named stays the identity
    mechanism = mechanism_of(evidence)
    if not mechanism:
        return ""
    lane = str(fields.get("backend", ""))
    backend = BACKENDS.get(lane)
    kind = backend.driver if backend is not None and backend.driver else lane
    return mechanism_identity(str(fields["stage"]), str(fields.get("status", "")), mechanism, kind).key


class Causes:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.key: dict[str, str] = {}
        self.order: dict[str, int] = {}  # bucket -> when it was first seen (earliest names its cause)
        self.strong: dict[str, str] = {}  # strong identity -> its first bucket
        # members() and name_of() as last computed, until a bucket is added or causes merge: the
        # progress line asks every half second, and a long campaign holds thousands of buckets
        self._named: tuple[dict[str, list[str]], dict[str, str]] | None = None

    def add(self, bucket: str, fields: dict[str, str], evidence: str = "") -> None:
        """A bucket (its fields as stored; `evidence`: its triage verdict's, see `cause_key`)."""
        if bucket not in self.parent:
            self._named = None
            self.parent[bucket] = bucket
            self.key[bucket] = cause_key(fields, evidence)
            self.order[bucket] = len(self.order)
            if is_strong(fields, evidence):  # the same failing pass and message: one bug, whatever the lane
                first = self.strong.setdefault(self.key[bucket], bucket)
                if first != bucket:
                    self.parent[bucket] = self._root(first)

    def _root(self, bucket: str) -> str:
        while self.parent[bucket] != bucket:
            self.parent[bucket] = self.parent[self.parent[bucket]]
            bucket = self.parent[bucket]
        return bucket

    def tie(self, buckets: Iterable[str]) -> bool:
        """One candidate hit all these buckets: those sharing a key become one cause. True when
        two causes merged."""
        by_key: dict[str, list[str]] = collections.defaultdict(list)
        for b in buckets:
            if b in self.parent:
                by_key[self.key[b]].append(b)
        merged = False
        for group in by_key.values():
            roots = sorted({self._root(b) for b in group}, key=self.order.__getitem__)
            for other in roots[1:]:
                self.parent[other] = roots[0]
                merged = True
        if merged:
            self._named = None
        return merged

    def join(self, buckets: Iterable[str]) -> bool:
        """These buckets are one bug whatever their keys: the same input on the same lane failed
        each way on its runs (a crash whose re-run gives a verifier error: its other face). True
        when two causes merged."""
        roots = sorted({self._root(b) for b in buckets if b in self.parent}, key=self.order.__getitem__)
        for other in roots[1:]:
            self.parent[other] = roots[0]
        if len(roots) > 1:
            self._named = None
        return len(roots) > 1

    def members(self) -> dict[str, list[str]]:
        """cause name -> its buckets (in the order first seen); shared, not to be changed."""
        if self._named is None:
            members = self._members()
            self._named = members, {b: name for name, buckets in members.items() for b in buckets}
        return self._named[0]

    def _members(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = collections.defaultdict(list)
        for b in sorted(self.parent, key=self.order.__getitem__):
            groups[self._root(b)].append(b)
        names: dict[str, list[str]] = {}
        seen: collections.Counter[str] = collections.Counter()
        for root in sorted(groups, key=self.order.__getitem__):
            digest = hashlib.sha256(self.key[root].encode()).hexdigest()[:10]
            seen[digest] += 1
            names[f"cause-{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else "")] = groups[root]
        return names

    def name_of(self) -> dict[str, str]:
        """bucket -> its cause's name; shared, not to be changed."""
        self.members()
        assert self._named is not None  # members() fills it
        return self._named[1]


def faces(hits: Iterable[tuple[str, str, str]]) -> list[list[str]]:
    """From a store's hits (candidate, bucket, lane): the buckets one candidate hit on one lane, where
    there are several. One run of a lane gives one failure, so several are its runs failing in
    several ways (a check and its confirming re-runs): one bug's faces (`Causes.join`)."""
    seen: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for candidate, bucket, lane in hits:
        if bucket not in seen[(candidate, lane)]:
            seen[(candidate, lane)].append(bucket)
    return [buckets for buckets in seen.values() if len(buckets) > 1]


def split_cause(name: str, members: list[BucketRow], key_of: Callable[[BucketRow], str],
                suffix: Callable[[int, str], str]) -> dict[str, list[BucketRow]]:
    """One cause's buckets as one cause per key (`key_of`; "" for a bucket that says none): the
    first key keeps the name and takes the keyless buckets, the i-th other becomes
    `name + suffix(i, key)`; each keeps its buckets' order."""
    keyed: dict[str, list[BucketRow]] = {}
    for b in members:
        keyed.setdefault(key_of(b), []).append(b)
    keys = [k for k in keyed if k]
    if len(keys) <= 1:
        return {name: members}
    keyed[keys[0]] = keyed.pop("", []) + keyed[keys[0]]
    return {name if i == 0 else f"{name}{suffix(i, key)}": sorted(keyed[key], key=members.index)
            for i, key in enumerate(keys)}


__all__ = ["Causes", "cause_key", "faces", "is_strong", "mechanism_key", "split_cause"]
