"""One module on a host-CPU lane compiled for another CPU: the lane's flags with
`--iree-llvmcpu-target-cpu=X` in place of `host`, judged as a check judges it (a compile failure with
its signature; where X's code runs on this machine, run and compared with the reference).

Code built for a CPU runs here only where this machine has the extensions that CPU's code may use
(`CPU_NEEDS`, /proc/cpuinfo names): a `sapphirerapids` build uses AVX512-FP16 and AMX, which a Zen 4 lacks,
so a wrong value is judged there only on the CPUs this one can stand in for; a compile failure is judged
on every CPU (compiling for a CPU needs none of it)."""

from __future__ import annotations

from dataclasses import replace

from shapefuzz.iree.backends import BACKENDS, HASWELL_CPU_FLAGS, ZNVER4_CPU_FLAGS, Backend
from shapefuzz.iree.host_cpu import HOST_FLAG
from shapefuzz.iree.mlirinfo import function_info
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget, run_module
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.judge.oracle import Expectation, compile_only, default_compare
from shapefuzz.model import BackendResult, Stage, Status
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.triage.excerpt import excerpt
from shapefuzz.triage.signature import classify, signature_for

CPU_FLAG = "--iree-llvmcpu-target-cpu"
_AVX512 = ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
# what code built for each CPU may use of the machine it runs on (x86-64: the baseline needs nothing)
CPU_NEEDS: dict[str, tuple[str, ...]] = {
    "x86-64": (),
    "x86-64-v2": ("sse4_2", "popcnt", "ssse3"),
    "x86-64-v3": HASWELL_CPU_FLAGS,
    "x86-64-v4": HASWELL_CPU_FLAGS + _AVX512,
    "znver4": ZNVER4_CPU_FLAGS,
    "sapphirerapids": HASWELL_CPU_FLAGS + _AVX512 + ("avx512_fp16", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"),
}


def uses_host(lane: str, toolchain: Toolchain) -> bool:
    """Whether `lane` compiles for this machine's CPU (`--iree-llvmcpu-target-cpu=host`)."""
    backend = BACKENDS.get(lane)
    return backend is not None and HOST_FLAG in (backend.compile_flags(toolchain.probe) or ())


def cpu_lane(lane: str, cpu: str) -> Backend:
    """`lane` compiling for `cpu` instead of the host (the same name: its failures keep the lane's
    signatures), executing only where this machine has what `cpu`'s code needs (an unknown name: never)."""
    base = BACKENDS[lane]
    needs = CPU_NEEDS.get(cpu, ("a CPU this shapefuzz knows no extensions of",))
    return replace(base, extra_flags=(*base.extra_flags, f"{CPU_FLAG}={cpu}"), cpu_features=needs)


def runs_here(lane: str, cpu: str, toolchain: Toolchain) -> bool:
    return cpu_lane(lane, cpu).executes(toolchain.probe)


def try_cpu(text: str, lane: str, cpu: str, expectation: Expectation | None, toolchain: Toolchain,
            budget: Budget = DEFAULT_BUDGET) -> BackendResult:
    """`text` on `lane` compiled for `cpu`: the compile's verdict, then, when `expectation` is given and
    `cpu`'s code runs here, the run's and the comparison's."""
    backend = cpu_lane(lane, cpu)
    with temp_dir("cpu") as workdir:
        result, vmfb = compile_only(text, backend, workdir, toolchain, budget)
        if result.status != Status.OK or expectation is None or not backend.executes(toolchain.probe):
            return result
        info = function_info(text)
        ran, outputs = run_module(toolchain, backend, vmfb, expectation.inputs, info.results, workdir, info.name,
                                  budget.run)
    status = classify(ran)
    if status == Status.OK and outputs is None:
        status = Status.ERROR  # exited 0 but wrote no readable output
    if status != Status.OK:
        return BackendResult(lane, Stage.RUN, status, excerpt((ran.stderr + ran.stdout).strip(), 4000),
                             signature_for(lane, Stage.RUN, status, ran), ran.seconds)
    assert outputs is not None
    if expectation.expected is None:
        return BackendResult(lane, Stage.RUN, Status.OK, "ran; no reference to compare with", None, ran.seconds)
    mismatch = (expectation.compare or default_compare)(expectation.expected, outputs)
    if mismatch is not None:
        return BackendResult(lane, Stage.COMPARE, Status.MISMATCH, mismatch.detail,
                             signature_for(lane, Stage.COMPARE, Status.MISMATCH, None, mismatch.kind.value), ran.seconds)
    return BackendResult(lane, Stage.COMPARE, Status.OK, "", None, ran.seconds)


__all__ = ["CPU_FLAG", "CPU_NEEDS", "cpu_lane", "runs_here", "try_cpu", "uses_host"]
