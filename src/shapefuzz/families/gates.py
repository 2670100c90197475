"""Which families and forms a release can parse, so an older release is not handed cases it
cannot read (each would be called a generator bug).

A family declares `RELEASE_GATES` beside its FAMILY: each `ReleaseGate` names a form (or the whole
family) some releases cannot parse, the params it is about, and where one exists the same
computation in a form they do parse. Whether a release is past a gate is decided by the gate's
declared first release (`since`), or else by the toolchain itself: the gate's example case,
rendered, must verify with the release's `iree-opt` (one call for every gate). Measured on the
released wheels: 3.2.0-3.4.0 do not parse `iree_linalg_ext.attention`'s `<indexing_maps = ...>`
syntax nor the gather op as rendered (unknown in 3.2/3.3, a region syntax in 3.4), and 3.2.0 has
no `torch.aten.argsort`.

`release_gates(toolchain, families)` -> `Gated` (which gates are closed and why: picklable, for the
campaign's workers); `Gated.params(family, p)` -> p, the form the release accepts instead, or None;
`Gated.lines()` -> what `shapefuzz backends` and a campaign's first lines say."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any, Callable

from shapefuzz.families.base import ReleaseGate  # the value a family declares (base.py: no import of families)
from shapefuzz.iree.toolchain import Toolchain

Release = tuple[int, int]


@dataclass(frozen=True)
class Closed:
    family: str
    what: str
    why: str  # "3.2.0rc20250206 does not parse iree_linalg_ext.gather as rendered (custom op ... is unknown)"
    instead: bool  # a form the release accepts is drawn instead


@dataclass(frozen=True)
class Gated:
    """The gates a toolchain does not pass, by family (plain values: it pickles to workers)."""

    closed: tuple[Closed, ...] = ()

    def off(self, family: str) -> set[str]:
        return {c.what for c in self.closed if c.family == family}

    def family_off(self, family: str) -> str | None:
        """Why the whole family is off for this release, or None."""
        return next((c.why for c in self.closed if c.family == family and c.what == "family"), None)

    def params(self, family: str, p: Any) -> Any | None:
        """`p` (typed, or its JSON) when the release parses it, else the same computation in a form
        it parses, else None."""
        off = self.off(family)
        return for_release(gates_of(family), _typed(family, p), off) if off else p

    def accepts(self, family: str, p: Any) -> bool:
        """Whether the release should parse `p` (typed, or its JSON): no closed gate applies to it."""
        off = self.off(family)
        return not off or open_gate(gates_of(family), _typed(family, p), off) is None

    def lines(self) -> list[str]:
        """One line per family or form that is off, with why and what is drawn instead."""
        out = []
        for c in self.closed:
            what = f"family {c.family}" if c.what == "family" else f"{c.family} {c.what}"
            instead = "; an equivalent form the release parses is drawn instead" if c.instead else \
                "; not drawn" if c.what != "family" else ""
            out.append(f"{what} off for this release: {c.why}{instead}")
        return out


def _typed(family: str, p: Any) -> Any:
    from shapefuzz.families import get_family

    return get_family(family).load(p)


def gates_of(family: str) -> tuple[ReleaseGate, ...]:
    from shapefuzz.families import get_family

    return get_family(family).release_gates


def open_gate(gates: Iterable[ReleaseGate], p: Any, off: Collection[str]) -> ReleaseGate | None:
    """The first closed gate (by `what` in `off`) that applies to `p`, or None."""
    return next((g for g in gates if g.what in off and g.applies(p)), None)


def for_release(gates: tuple[ReleaseGate, ...], p: Any, off: Collection[str]) -> Any | None:
    """`p`, or through each closed gate's `instead` a form the release parses, or None."""
    for _ in range(len(gates) + 1):
        gate = open_gate(gates, p, off)
        if gate is None:
            return p
        if gate.instead is None:
            return None
        p = gate.instead(p)
    return None


def closed_by_release(gate: ReleaseGate, release: Release) -> bool | None:
    """Decided by the declared release: True/False, or None (no declaration, or a dev build whose
    release is unknown: (0, 0))."""
    if gate.since is None or release == (0, 0):
        return None
    return release < gate.since


@functools.cache
def release_gates(toolchain: Toolchain, families: tuple[str, ...]) -> Gated:
    """Which of the families' gates this toolchain does not pass: by declared release, else by
    verifying each gate's example with it (one iree-opt call)."""
    from shapefuzz.invoke.execute import verify_many
    from shapefuzz.families import get_family

    probe = toolchain.probe
    closed: list[Closed] = []
    to_verify: list[tuple[str, ReleaseGate, str]] = []
    for name in families:
        family = get_family(name)
        for gate in family.release_gates:
            by_release = closed_by_release(gate, probe.release)
            if by_release is None:
                to_verify.append((name, gate, family.render(gate.example())))
            elif by_release:
                closed.append(Closed(name, gate.what, f"{gate.needs} is new in {'.'.join(map(str, gate.since))}",
                                     gate.instead is not None))
    errors = verify_many([text for _, _, text in to_verify], toolchain) if to_verify else []
    for (name, gate, _), error in zip(to_verify, errors):
        if error is not None:
            closed.append(Closed(name, gate.what, f"{probe.version} does not parse {gate.needs} ({_first_error(error)})",
                                 gate.instead is not None))
    return Gated(tuple(closed))


def _first_error(text: str) -> str:
    lines = [line for line in text.splitlines() if "error:" in line] or text.strip().splitlines() or [""]
    return lines[0].split("error:", 1)[-1].strip()[:120]


__all__ = ["Closed", "Gated", "ReleaseGate", "closed_by_release", "for_release", "open_gate", "release_gates"]
