"""Each compiler-bug cause on a host-CPU lane re-run for other CPUs (`recheck.cpus`), so its issue text
says whether the bug depends on the machine ("fails for host (znver4) and x86-64-v3, passes for
sapphirerapids"). After the wrap-up shrinks, with the shown reproducers' re-checks (`campaign.shown_runs`),
within at most a minute; the record goes into the shown entry's meta.json `cpus`. A cause the time did
not reach, or reached only in part, says so in its record ("not tried: ... (time is up)") and is taken
again by `shapefuzz triage CAMPAIGN --localize`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.triage.cpus import CpuSpread, cpu_spread_of
from shapefuzz.triage.shown import BLOW_UPS, reproducer_digest

DEFAULT_SPREAD_SECONDS = 60.0  # the whole step
AGAIN = "time is up (`shapefuzz triage CAMPAIGN --localize` tries them)"

Spread = Callable[..., CpuSpread | None]  # (entry, toolchain, seconds) -> the record, None: not a host-CPU lane


def spread_causes(causes: Iterable[Cause], toolchain, seconds: float, say: Callable[[str], None] = lambda text: None,
                  spread: Spread | None = None) -> int:
    """Records each compiler-bug cause's CPU spread (module doc) within `seconds` in all; returns how many."""
    from shapefuzz.corpus import load_entry, update_meta
    from shapefuzz.judge.cpu_probe import uses_host
    from shapefuzz.recheck.cpus import DEFAULT_CPU_SECONDS, cpu_spread, other_cpus
    from shapefuzz.iree.host_cpu import host_cpu
    from shapefuzz.triage.component import target_independent

    spread = spread or cpu_spread
    end = time.monotonic() + seconds
    done = 0
    for cause in causes:
        if cause.triage != Triage.COMPILER_BUG or not cause.corpus_entries:
            continue
        if target_independent(cause.component):  # placed before codegen: no CPU is part of it (audit D)
            continue
        try:
            entry = load_entry(Path(cause.corpus_entries[0]))
        except Exception:  # noqa: BLE001 - an entry that does not load shows nothing
            continue
        if entry.signature.status in BLOW_UPS:
            continue  # each CPU would cost the whole cap or time limit
        lane = entry.signature.backend
        known = cpu_spread_of(entry.meta, entry.mlir)
        if (known is not None and not known.left) or not uses_host(lane, toolchain):
            continue
        left = end - time.monotonic()
        if left <= 1.0:  # said in the entry's record, so its text says it too
            host = host_cpu(toolchain)
            record: CpuSpread | None = CpuSpread(reproducer_digest(entry.mlir), lane, host, (),
                                                 tuple(other_cpus(host)), AGAIN)
        else:
            record = spread(entry, toolchain, min(DEFAULT_CPU_SECONDS, left))
        if record is None:
            continue
        update_meta(entry.path, cpus=record.to_json())
        done += 1
        say(f"CPUs for {entry.id} ({cause.name}): {record.text}")
    return done


__all__ = ["DEFAULT_SPREAD_SECONDS", "spread_causes"]
