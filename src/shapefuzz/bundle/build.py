"""`shapefuzz bundle`: N candidates drawn as a campaign draws them (its `IreeTarget.generate`:
families in turn, swarm, producer/consumer chains, forms this release parses), verified, compiled
here for the bundle's target as a check compiles them (`oracle.compile_only`), and written with
their inputs, NumPy reference and comparison rule for `bundle-run` on the machine with the device.
A compile failure is listed in the manifest with its signature, as a campaign would bucket it.

The bundle is built in a hidden folder beside `--out` and renamed into place once whole: a bundle
folder always has its manifest and every file the manifest names."""

from __future__ import annotations

import re
import shutil
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from shapefuzz import __version__
from shapefuzz.iree.backends import BACKENDS, VARIANTS, Backend, cuda_lane
from shapefuzz.bundle import layout
from shapefuzz.campaign.drawing import derive_seed
from shapefuzz.campaign.iree import CONTEXT_SHARE, KNOWN_FAMILIES, IreeTarget, available_families
from shapefuzz.campaign.outcomes import Candidate
from shapefuzz.case import Case
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.errors import UsageError
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget, compile_command
from shapefuzz.files import atomic_write, fsync_dir
from shapefuzz.model import Status
from shapefuzz.schema import npy_bytes
from shapefuzz.iree.toolchain import Toolchain

TARGETS = ("cuda", "llvm-cpu")
DEFAULT_ARCH = "sm_80"  # 3.13 builds no sm_90/sm_100 code ("missing GPU target"); sm_80's PTX is JIT-compiled there
_ATTEMPTS = 16  # draws of one slot before it is left empty (duplicates, a family failing to generate)
# The largest tensor a bundled case may declare (its `?` dims at their sizes). The campaign's small
# regime now and then draws a big case (a conv meant for shared-memory limits: seed 7's 150 cases
# held one with a 121 MB output, 97% of the bundle's bytes); a bundle carried to a GPU box draws
# again instead. At 1 MiB, 150 cases are about 5 MiB.
MAX_TENSOR_BYTES = 1 << 20


@dataclass(frozen=True)
class BundleRequest:
    target: str
    arch: str | None
    count: int
    out: Path
    seed: int = 0
    ops: str | None = None
    context_share: float | None = None
    jobs: int = 1
    compile_timeout: float | None = None
    max_tensor_bytes: int = MAX_TENSOR_BYTES
    variant: str | None = None  # a pipeline variant of the target's lane ("o3": cuda-sm80-o3)
    from_corpus: Path | None = None  # bundle this corpus's entries of the lane and their ladders (bundle/ladder.py)


@dataclass(frozen=True)
class Built:
    folder: Path
    states: dict[str, int]  # cases per state (compiled, compile-failed, ...)
    bytes: int
    seconds: float


def lane_for(target: str, arch: str | None, variant: str | None = None) -> Backend:
    if target == "cuda":
        lane = cuda_lane(arch or DEFAULT_ARCH)
    elif target not in TARGETS:
        raise UsageError(f"--target {target[:40]!r}: choose from {', '.join(TARGETS)}")
    elif arch is not None:
        raise UsageError("--arch is for --target cuda")
    else:
        lane = BACKENDS[target]
    return lane if variant is None else _variant_of(lane, variant)


def lane_named(name: str) -> tuple[str, str | None, str | None]:
    """(target, arch, variant) of a lane's name (`--lane cuda-sm80-o3`), a lane this command builds for."""
    lane = BACKENDS.get(name)
    base = (lane.variant_of or name) if lane is not None else ""
    target = "cuda" if base.startswith("cuda-sm") else base if base in TARGETS else ""
    if lane is None or not target:
        known = [n for n, b in BACKENDS.items()
                 if (b.variant_of or n).startswith("cuda-sm") or (b.variant_of or n) in TARGETS]
        raise UsageError(f"--lane {name[:40]!r}: choose from {', '.join(known)}")
    arch = f"sm_{base[len('cuda-sm'):]}" if target == "cuda" else None
    return target, arch, name[len(base) + 1:] if lane.variant_of else None


def _variant_of(lane: Backend, suffix: str) -> Backend:
    """The lane's pipeline variant `suffix` (a registered one; for a CUDA arch other than sm_80,
    sm_80's variant with that arch's target flags)."""
    base = lane.name if lane.name in VARIANTS else "cuda-sm80" if lane.driver == "cuda" else lane.name
    choices = [name[len(base) + 1:] for name in VARIANTS.get(base, ())]
    if suffix not in choices:
        raise UsageError(f"--variant {suffix[:40]!r}: {lane.name} has "
                         + (f"these: {', '.join(choices)}" if choices else "none"))
    registered = BACKENDS[f"{base}-{suffix}"]
    if base == lane.name:
        return registered
    return replace(registered, name=f"{lane.name}-{suffix}", flags=lane.flags, variant_of=lane.name)


def _check_out(out: Path) -> None:
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"--out {out}: not a folder")
    if out.is_dir() and any(out.iterdir()):
        raise UsageError(f"--out {out}: the folder is not empty; give a new one")


def _families(request: BundleRequest, toolchain: Toolchain, say: Callable[[str], None]):
    from shapefuzz.campaign.config import resolve_names
    from shapefuzz.families import DEFAULT_FAMILIES
    from shapefuzz.families.gates import release_gates

    wanted = resolve_names(request.ops, KNOWN_FAMILIES, "op family", "--ops") or tuple(DEFAULT_FAMILIES)
    families, warnings = available_families(wanted)
    for line in warnings:
        say(line)
    gated = release_gates(toolchain, families)
    for line in gated.lines():
        say(line)
    families = tuple(f for f in families if gated.family_off(f) is None)
    if not families:
        raise UsageError(f"none of the chosen op families is parsed by IREE {toolchain.probe.version}")
    return families, gated


def largest_tensor(candidate: Candidate) -> int:
    """Bytes of the largest tensor the candidate's module declares, its `?` dims at their sizes."""
    from shapefuzz.campaign.iree import load_family
    from shapefuzz.iree.mlirinfo import declared_tensor_types

    types = declared_tensor_types(candidate.text)
    try:
        types += load_family(candidate.group).sized_tensor_types(Case(candidate.group, candidate.payload).params)
    except Exception:  # noqa: BLE001 - a family whose static form differs: the declared sizes stand (validate_params)
        pass
    return max((int(np.prod(shape, dtype=object)) * dtype.itemsize for shape, dtype in types), default=0)


def draw(target: IreeTarget, families: tuple[str, ...], count: int, seed: int,
         max_tensor_bytes: int = MAX_TENSOR_BYTES) -> tuple[list[Candidate], int]:
    """`count` distinct candidates, the families taken in turn, each seed derived from (seed, slot,
    attempt) as the campaign derives them, a case with a tensor over `max_tensor_bytes` drawn
    again; (the candidates, how many were drawn again for their size)."""
    drawn: list[Candidate] = []
    keys: set[str] = set()
    too_large = 0
    for index in range(count):
        group = families[index % len(families)]
        for attempt in range(_ATTEMPTS):
            try:
                candidate = target.generate(group, derive_seed(seed, index, attempt))
                large = largest_tensor(candidate) > max_tensor_bytes
            except Exception:  # noqa: BLE001 - a family failing to generate one seed: the next seed
                continue
            if large:
                too_large += 1
                continue
            if candidate.key not in keys:
                keys.add(candidate.key)
                drawn.append(candidate)
                break
    return drawn, too_large


def _smoke(lane: Backend, toolchain: Toolchain) -> bytes:
    """The one-dispatch module compiled for the lane: the compiler must build code for it at all."""
    from shapefuzz.judge.oracle import compile_only

    with temp_dir("bundle") as work:
        result, vmfb = compile_only(layout.SMOKE_MODULE, lane, work, toolchain)
        if result.status == Status.OK:
            return Path(vmfb).read_bytes()
        said = re.search(r"^target limit \(([^)]+)\)", result.detail) or re.search(r"error: ([^\n]+)", result.detail)
        first = said.group(1) if said else result.detail.strip()[:200]
        hint = f"; use --arch {DEFAULT_ARCH} (PTX the driver JIT-compiles for newer GPUs)" \
            if lane.driver == "cuda" and lane.name != cuda_lane(DEFAULT_ARCH).name else ""
        raise UsageError(f"iree-compile {toolchain.probe.version} cannot build code for {lane.name}: "
                         f"{first.strip()[:200]}{hint}")


def _one(candidate: Candidate, case_id: str, lane: Backend, toolchain: Toolchain, budget: Budget, verified: str | None,
         staging: Path) -> dict:
    """Compile one candidate and write its folder; its manifest line."""
    from shapefuzz.export.plan import case_rule
    from shapefuzz.iree.mlirinfo import function_info
    from shapefuzz.judge.oracle import case_expectation, compile_only

    folder = staging / layout.CASES / case_id
    folder.mkdir(parents=True)
    atomic_write(folder / layout.MLIR, candidate.text.encode())
    line = {"id": case_id, "family": candidate.group, "draw_seed": candidate.seed, "input_seed": candidate.input_seed,
            "key": candidate.key, "features": list(candidate.features), "detail": "", "signature": ""}
    if verified is not None:  # our bug, never a finding: listed, nothing compiled
        return {**line, "state": layout.INVALID, "detail": verified[:2000]}
    with temp_dir("bundle") as work:
        result, vmfb = compile_only(candidate.text, lane, work, toolchain, budget)
        line["compile_seconds"] = round(result.compile_seconds, 3)
        if result.status == Status.UNSUPPORTED:
            return {**line, "state": layout.UNSUPPORTED, "detail": result.detail[:2000]}
        if result.status != Status.OK:
            return {**line, "state": layout.COMPILE_FAILED, "detail": result.detail[:4000],
                    "signature": str(result.signature or "")}
        case = Case(candidate.group, candidate.payload)
        try:
            expectation = case_expectation(case, candidate.input_seed)
        except UsageError as error:  # the family's inputs or reference failed on its own draw: ours
            return {**line, "state": layout.INVALID, "detail": f"no reference: {error}"[:2000]}
        atomic_write(folder / layout.VMFB, Path(vmfb).read_bytes())
    assert expectation.expected is not None
    for i, array in enumerate(expectation.inputs):
        atomic_write(folder / layout.input_name(i), npy_bytes(array))
    for i, array in enumerate(expectation.expected):
        atomic_write(folder / layout.expected_name(i), npy_bytes(array))
    record = {"function": function_info(candidate.text).name, "inputs": len(expectation.inputs),
              "results": len(expectation.expected), "rule": case_rule(case.family, case.params, expectation.inputs),
              "family": case.family, "input_seed": candidate.input_seed,
              "check": f"shapefuzz check {layout.MLIR} --seed {candidate.input_seed} --backends "
                       + ",".join(dict.fromkeys(("llvm-cpu", lane.name)))}
    atomic_write(folder / layout.CASE_JSON, layout.json_bytes(record))
    return {**line, "state": layout.COMPILED}


def build_bundle(request: BundleRequest, toolchain: Toolchain, say: Callable[[str], None] = print) -> Built:
    from shapefuzz.invoke.execute import verify_many
    from shapefuzz.process.parallel import run_parallel
    from shapefuzz.process.sandbox import Limits

    from shapefuzz.campaign.config import check_fraction

    started = time.monotonic()
    check_fraction(request.context_share, "--context-share", low_open=False)  # nan and inf too
    lane = lane_for(request.target, request.arch, request.variant)
    if request.count < 1 and request.from_corpus is None:
        raise UsageError(f"--n {request.count}: give at least 1")
    missing = lane.unavailable(toolchain.probe)
    if missing is not None:
        raise UsageError(f"{lane.name}: {missing} ({toolchain.probe.version})")
    out = request.out
    _check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.partial-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        atomic_write(staging / layout.SMOKE, _smoke(lane, toolchain))
        rungs: list = []
        if request.from_corpus is not None:  # the corpus's entries and their ladders, not draws
            from shapefuzz.bundle.ladder import corpus_rungs

            target = IreeTarget(toolchain, staging)
            rungs = corpus_rungs(request.from_corpus, lane.name, target, say)
            candidates, too_large = [r.candidate for r in rungs], 0
            families = tuple(dict.fromkeys(c.group for c in candidates))
            say(f"{len({r.entry for r in rungs})} entries of {request.from_corpus} as {len(rungs)} rungs "
                f"(as-is, root alone, one context op dropped); compiling for {lane.name}")
        else:
            families, gated = _families(request, toolchain, say)
            target = IreeTarget(toolchain, staging, gated=gated, context_share=request.context_share)
            candidates, too_large = draw(target, families, request.count, request.seed, request.max_tensor_bytes)
            say(f"drew {len(candidates)} cases from {', '.join(families)} ({too_large} drawn again: a tensor over "
                f"{request.max_tensor_bytes} bytes); compiling for {lane.name}")
        errors = verify_many([c.text for c in candidates], toolchain)
        ids = [f"{i:03d}-{c.group.replace('_', '-')}" + (rungs[i].id_suffix if rungs else "")
               for i, c in enumerate(candidates)]
        budget = DEFAULT_BUDGET if request.compile_timeout is None else \
            Budget(DEFAULT_BUDGET.verify, Limits(timeout=request.compile_timeout), DEFAULT_BUDGET.run)

        def job(i: int) -> dict:
            line = _one(candidates[i], ids[i], lane, toolchain, budget, errors[i], staging)
            return {**line, "ladder": rungs[i].to_json()} if rungs else line

        def seen(line: dict) -> None:
            say(f"{line['id']:<22} {line['state']}" + (f"  {line['signature'][:100]}" if line["signature"] else ""))

        finished = run_parallel(job, range(len(candidates)), request.jobs, seen)
        if finished.stopped is not None:
            raise finished.stopped
        lines = sorted(finished.results, key=lambda line: line["id"])
        flags = list(lane.compile_flags(toolchain.probe) or ())
        manifest = {
            "format": layout.FORMAT, "bundle_id": uuid.uuid4().hex, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "shapefuzz": __version__, "iree_version": toolchain.probe.version, "target": request.target,
            "arch": request.arch or (DEFAULT_ARCH if request.target == "cuda" else None), "backend": lane.name,
            "device": lane.driver, "flags": flags,
            "compile_command": " ".join(compile_command(toolchain, lane, layout.MLIR, layout.VMFB)),
            "seed": request.seed, "n": len(candidates) if rungs else request.count, "ops": list(families),
            "context_share": CONTEXT_SHARE if request.context_share is None else request.context_share, "max_tensor_bytes": request.max_tensor_bytes,
            "drawn_again_for_size": too_large, "smoke": layout.SMOKE, "cases": lines,
        } | ({"from_corpus": str(request.from_corpus)} if request.from_corpus is not None else {})
        atomic_write(staging / layout.MANIFEST, layout.json_bytes(manifest))
        fsync_dir(staging)
        if out.is_dir():
            out.rmdir()  # empty (checked above)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    states = {state: sum(line["state"] == state for line in lines) for state in layout.STATES}
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return Built(out, states, size, time.monotonic() - started)
