"""A bug on a host-CPU lane (`--iree-llvmcpu-target-cpu=host`) re-run for other CPUs, so its report says
whether it depends on the machine: the entry's reproducer compiled for each of a few CPUs chosen by what
they differ in from the host (`CHOICES`), within a time bound; a compile failure on each, a wrong value or
run-time failure only on those whose code runs here (`judge.cpu_probe`). The result is a
`triage.cpus.CpuSpread` ("fails for host (znver4) and x86-64-v3, passes for sapphirerapids").

Measured on 3.13 (a Zen 4 host, `host` = znver4): `arith.maxnumf` on 1 x f16 becomes an `fmaxf` libcall the
embedded linker cannot resolve ("undefined symbol: fmaxf") for host, znver4, x86-64, x86-64-v2/v3/v4 and
skylake-avx512, and compiles for sapphirerapids (AVX512-FP16 has the instruction)."""

from __future__ import annotations

import platform
import time
from typing import Sequence

from shapefuzz.corpus import CorpusEntry
from shapefuzz.iree.host_cpu import host_cpu
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.judge.cpu_probe import runs_here, try_cpu, uses_host
from shapefuzz.model import BackendResult, Stage, Status
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.recheck.regression import Failure, recorded_failure
from shapefuzz.recheck.replay import budget_with, entry_expectation
from shapefuzz.triage.cpus import FAILS, NOT_JUDGED, OTHER, PASSES, CpuSpread, CpuVerdict
from shapefuzz.triage.failing_pass import failing_pass
from shapefuzz.triage.shown import reproducer_digest

# By what they differ in from most hosts: AVX2 without AVX-512 (x86-64-v3), AVX-512 with FP16, BF16 and
# AMX (sapphirerapids), the baseline without AVX (x86-64). The host's own name is left out.
CHOICES: dict[str, tuple[str, ...]] = {"x86_64": ("x86-64-v3", "sapphirerapids", "x86-64")}
DEFAULT_CPU_SECONDS = 30.0  # one entry's CPUs, all together
COMPILE_SECONDS = 30.0  # one compile: a reproducer worth this compiles in seconds
TIME_IS_UP = "time is up"


def other_cpus(host: str, machine: str | None = None) -> list[str]:
    """The CPUs to try besides the host on this machine's architecture ([] for one none are known of)."""
    return [cpu for cpu in CHOICES.get(machine or platform.machine(), ()) if cpu != host]


def verdict_of(cpu: str, result: BackendResult, want: Failure, values: bool) -> CpuVerdict:
    """One CPU's verdict: the same failure as the entry's (stage, status and, where both name one, the
    failing pass), another, a pass, or no verdict (`values`: the entry's failure shows only when run)."""
    if result.failed:
        got = Failure(result.stage.value, result.status.value, failing_pass(result.detail) or "")
        return CpuVerdict(cpu, FAILS) if got.same_as(want) else \
            CpuVerdict(cpu, OTHER, str(result.signature) if result.signature else str(got))
    if result.status == Status.OK and (not values or result.stage == Stage.COMPARE):
        return CpuVerdict(cpu, PASSES)
    return CpuVerdict(cpu, NOT_JUDGED, (result.detail.strip().splitlines() or [result.status.value])[0][:160])


def cpu_spread(entry: CorpusEntry, toolchain: Toolchain, seconds: float = DEFAULT_CPU_SECONDS,
               cpus: Sequence[str] | None = None) -> CpuSpread | None:
    """The entry's reproducer on its lane for each CPU of `cpus` (default: `other_cpus`), within
    `seconds`; None when its lane does not compile for the host CPU."""
    lane = entry.signature.backend
    if not uses_host(lane, toolchain):
        return None
    host = host_cpu(toolchain)
    chosen = list(cpus if cpus is not None else other_cpus(host))
    values = entry.signature.stage in (Stage.RUN, Stage.COMPARE)
    expectation = entry_expectation(entry) if values else None
    want = recorded_failure(entry)
    digest = reproducer_digest(entry.mlir)
    verdicts: list[CpuVerdict] = []
    end = time.monotonic() + seconds
    for i, cpu in enumerate(chosen):
        if values and not runs_here(lane, cpu, toolchain):
            verdicts.append(CpuVerdict(cpu, NOT_JUDGED, "its code cannot run on this machine"))
            continue
        left = end - time.monotonic()
        if left <= 1.0:
            return CpuSpread(digest, lane, host, tuple(verdicts), tuple(chosen[i:]), TIME_IS_UP)
        with time_bound(left) as bound:
            result = try_cpu(entry.mlir, lane, cpu, expectation, toolchain, budget_with(COMPILE_SECONDS))
        if bound.ran_out:
            return CpuSpread(digest, lane, host, tuple(verdicts), tuple(chosen[i:]), TIME_IS_UP)
        verdicts.append(verdict_of(cpu, result, want, values))
    return CpuSpread(digest, lane, host, tuple(verdicts))


__all__ = ["CHOICES", "DEFAULT_CPU_SECONDS", "cpu_spread", "other_cpus", "verdict_of"]
