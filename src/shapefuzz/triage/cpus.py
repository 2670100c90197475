"""Whether a bug on a host-CPU lane depends on the CPU: the record of its reproducer compiled for other
CPUs (meta.json `cpus`, made by `recheck.cpus`) and the sentence an issue text says of it, "fails for host
(znver4) and x86-64-v3, passes for sapphirerapids" or "fails for every CPU tried (...)". The record names
the reproducer it is of (`triage.shown.reproducer_digest`): a later shrink makes it another's. Runs nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from shapefuzz.triage.shown import one_line, reproducer_digest

FAILS, PASSES, OTHER, NOT_JUDGED = "fails", "passes", "fails another way", "not judged"
_VERDICTS = (FAILS, PASSES, OTHER, NOT_JUDGED)


@dataclass(frozen=True)
class CpuVerdict:
    cpu: str
    verdict: str  # one of _VERDICTS
    what: str = ""  # how it failed another way, or why it was not judged


@dataclass(frozen=True)
class CpuSpread:
    """The reproducer (`digest`) on `lane`, compiled for the host (`host`: the name LLVM gives it) and
    for each CPU of `verdicts`; `left`: CPUs chosen but not tried, and why."""

    digest: str
    lane: str
    host: str
    verdicts: tuple[CpuVerdict, ...]
    left: tuple[str, ...] = ()
    why_left: str = ""

    def _named(self, verdict: str) -> list[str]:
        return [v.cpu for v in self.verdicts if v.verdict == verdict]

    @property
    def fails_everywhere(self) -> bool:
        """Every CPU tried besides the host fails the same way (and at least one was tried)."""
        return bool(self.verdicts) and all(v.verdict == FAILS for v in self.verdicts)

    @property
    def text(self) -> str:
        """One sentence: which CPUs fail the same way and which pass (the host counts among those that
        fail: the reproducer was saved failing there), then what could not be judged or tried."""
        host = f"host ({self.host})" if self.host else "host"
        fails, passes, other = [host, *self._named(FAILS)], self._named(PASSES), self._named(OTHER)
        if not passes and not other and len(fails) > 1:
            said = f"fails for every CPU tried ({_and(fails)})"
        else:
            said = f"fails for {_and(fails)}" + (f", passes for {_and(passes)}" if passes else "")
        said += "".join(f"; fails another way for {v.cpu} ({v.what})" for v in self.verdicts if v.verdict == OTHER)
        said += "".join(f"; not judged for {v.cpu} ({v.what})" for v in self.verdicts if v.verdict == NOT_JUDGED)
        if self.left:
            said += f"; not tried: {', '.join(self.left)} ({self.why_left or 'time is up'})"
        return said

    def to_json(self) -> dict[str, Any]:
        return {"reproducer": self.digest, "lane": self.lane, "host": self.host,
                "verdicts": [{"cpu": v.cpu, "verdict": v.verdict, "what": one_line(v.what, 300)} for v in self.verdicts],
                "left": list(self.left), "why_left": one_line(self.why_left, 300), "text": one_line(self.text, 2000)}

    @staticmethod
    def from_json(data: Any) -> "CpuSpread | None":
        if not isinstance(data, Mapping) or not isinstance(data.get("reproducer"), str):
            return None
        verdicts = tuple(CpuVerdict(str(v.get("cpu", "")), str(v["verdict"]), str(v.get("what", "")))
                         for v in data.get("verdicts") or () if isinstance(v, Mapping) and v.get("verdict") in _VERDICTS)
        return CpuSpread(data["reproducer"], str(data.get("lane") or ""), str(data.get("host") or ""), verdicts,
                         tuple(str(x) for x in data.get("left") or () if isinstance(x, str)),
                         str(data.get("why_left") or ""))


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def cpu_spread_of(meta: Mapping[str, Any], mlir: str) -> CpuSpread | None:
    """meta.json's CPU record, only when it is of `mlir`."""
    record = CpuSpread.from_json(meta.get("cpus"))
    return record if record is not None and record.digest == reproducer_digest(mlir) else None


__all__ = ["CpuSpread", "CpuVerdict", "FAILS", "NOT_JUDGED", "OTHER", "PASSES", "cpu_spread_of"]
