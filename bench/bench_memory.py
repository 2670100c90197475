"""How much memory real candidates need from iree-compile: the figure the campaign's memory cap
is chosen from (issue "Campaigns that spend their time on new bugs").

Draws N candidates the way a default campaign does (same families, same seeds scheme), compiles
each for the given backends under the sandbox's full 8 GiB address-space cap, and records per
compile the peak resident set (wait4's ru_maxrss) and the peak address space (VmPeak, polled
from /proc: the cap is an address-space limit, RLIMIT_AS, so this is the number that matters).
Prints percentiles and how many compiles a 1.5/2/3/4 GiB cap would have cut short.

    .venv/bin/python bench/bench_memory.py --count 25
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS
from shapefuzz.campaign.engine import derive_seed
from shapefuzz.campaign.iree import CAMPAIGN_MEMORY_CAP, KNOWN_FAMILIES, IreeTarget
from shapefuzz.iree.toolchain import find_toolchain

GIB = 1 << 30
CAPS = (1.5, 2.0, 3.0, 4.0)


def _vm_peak(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def measure(argv: list[str], cap: int = 8 * GIB, timeout: float = 300.0) -> dict:
    """Peak RSS and peak address space of one child, under an address-space cap."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=limit)
    peak_vm = 0
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        peak_vm = max(peak_vm, _vm_peak(proc.pid))
        if time.perf_counter() - start > timeout:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"rss": usage.ru_maxrss * 1024, "vm": peak_vm, "ok": proc.returncode == 0,
            "seconds": time.perf_counter() - start}


def _pct(values: list[int], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / GIB if ordered else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--count", type=int, default=25, help="candidates to draw")
    parser.add_argument("--ops", default=",".join(KNOWN_FAMILIES))
    parser.add_argument("--backends", default=",".join(DEFAULT_BACKENDS))
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        report.details = measure_all(args, report.figures)
    return 0


def measure_all(args, figures: harness.Figures) -> dict:
    toolchain = find_toolchain()
    target = IreeTarget(toolchain, Path(tempfile.gettempdir()))
    families = args.ops.split(",")
    backends = [b for b in args.backends.split(",") if BACKENDS[b].compiles(toolchain.probe)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        for i in range(args.count):
            family = families[i % len(families)]
            candidate = target.generate(family, derive_seed(args.seed, i, 0))
            mlir = os.path.join(tmp, "c.mlir")
            Path(mlir).write_text(candidate.text)
            for name in backends:
                flags = BACKENDS[name].compile_flags(toolchain.probe) or ()
                got = measure([str(toolchain.compile_bin), mlir, *flags, "-o", os.path.join(tmp, "m.vmfb")])
                rows.append({"family": family, "backend": name, **got})
                print(f"{family:15} {name:14} rss {got['rss'] / GIB:5.2f} GiB  vm {got['vm'] / GIB:5.2f} GiB  "
                      f"{got['seconds']:6.1f}s {'ok' if got['ok'] else 'failed'}", file=sys.stderr)
    rss = [r["rss"] for r in rows]
    vm = [r["vm"] for r in rows if r["vm"]]
    ok = [r for r in rows if r["ok"]]
    summary = {
        "compiles": len(rows), "ok": len(ok),
        "rss_gib": {"p50": _pct(rss, 0.5), "p90": _pct(rss, 0.9), "p99": _pct(rss, 0.99), "max": max(rss) / GIB},
        "vm_gib": {"p50": _pct(vm, 0.5), "p90": _pct(vm, 0.9), "p99": _pct(vm, 0.99), "max": max(vm) / GIB},
        "cut_by_cap": {f"{c}GiB": sum(r["vm"] > c * GIB for r in ok) for c in CAPS},
    }
    print(f"{len(rows)} compiles of {args.count} candidates ({args.ops} on {','.join(backends)}), {len(ok)} ok")
    figures.add("compiles", len(rows))
    figures.add("compiles that succeeded", len(ok))
    for key, label in (("rss_gib", "peak RSS"), ("vm_gib", "peak address space")):
        for q in ("p50", "p90", "p99", "max"):
            figures.add(f"{label} {q}", summary[key][q], "GiB")
    for cap, cut in summary["cut_by_cap"].items():
        # the campaign's cap must cut no compile that succeeds under the full 8 GiB
        goal = "<= 0" if float(cap[:-3]) * GIB == CAMPAIGN_MEMORY_CAP else ""
        figures.add(f"successful compiles a {cap} cap would cut short", cut, "", goal)
    return {"summary": summary, "rows": rows}


if __name__ == "__main__":
    sys.exit(main())
