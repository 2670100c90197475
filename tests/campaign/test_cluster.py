"""Campaigns on a Ray cluster (`shapefuzz fuzz --cluster`).

Without Ray: placement and refusal rules on probes built here, bad input, and that nothing
imports Ray without `--cluster`. With Ray (`ray` mark): one local cluster for the module, with
the real compiler on every node:
  A  the head node: this machine's toolchain and devices;
  B  the same toolchain with Vulkan hidden (VK_DRIVER_FILES names no driver), so Vulkan lanes
     execute on A only (the stand-in for a GPU node: no fake runtime, a node without the device);
  C  a fake toolchain that says IREE 3.12.0: refused, it gets no work."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from support.campaign_fakes import make_fake_iree
from shapefuzz.campaign.cluster.connect import Cluster, Node
from shapefuzz.campaign.cluster.local import keep_on_this_machine, node_args
from shapefuzz.campaign.cluster.node import NodeReport, ToolchainSpec
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.errors import UsageError
from shapefuzz.iree.toolchain import ToolchainProbe

SHAPEFUZZ = [sys.executable, "-m", "shapefuzz"]
HEAD = ToolchainProbe("3.13.0", (3, 13), frozenset({"--iree-hal-target-device", "--iree-cuda-target",
                                                    "--iree-hal-local-target-device-backends"}),
                      ("local-task://", "local-sync://"), False)


def _cluster(*nodes: tuple[str, ToolchainProbe | None, str]) -> Cluster:
    cluster = Cluster(ToolchainSpec(), HEAD)
    for node_id, probe, error in nodes:
        cluster._admit(NodeReport(node_id, f"host-{node_id}", probe.to_json() if probe else None, "wheels", error),
                       {"Resources": {"CPU": 2.0}})
    return cluster


# --- without Ray ----------------------------------------------------------------------------------
def test_lanes_go_where_they_execute():
    gpu = replace(HEAD, devices=HEAD.devices + ("cuda://GPU-0",), cuda_runs=("sm_80",))
    amd = replace(HEAD, compile_flags=HEAD.compile_flags | {"--iree-rocm-target"},
                  devices=HEAD.devices + ("hip://GPU-0",), hip_runs=("gfx942",))
    cluster = _cluster(("a", HEAD, ""), ("g", gpu, ""), ("old", replace(HEAD, version="3.12.0"), ""), ("m", amd, ""))
    cluster.head = replace(HEAD, compile_flags=amd.compile_flags)
    assert cluster.nodes["old"].refused.startswith("IREE 3.12.0 there")
    assert cluster.placement(("llvm-cpu", "vmvx")) == ["a", "g", "m"]  # executes everywhere: anywhere
    assert cluster.placement(("llvm-cpu", "cuda-sm80")) == ["g"]  # executes on g only
    assert cluster.placement(("llvm-cpu", "rocm-gfx942")) == ["m"]  # m's HIP device ran gfx942 code
    assert cluster.placement(("llvm-cpu", "rocm-gfx90a")) == ["a", "g", "m"]  # compile-only: anywhere
    assert cluster.placement(("cuda-sm80", "rocm-gfx942")) == ["g"]  # no node has both: the first of the rarest
    assert cluster.cpus == 6  # the refused node's CPUs are not counted
    merged = cluster.toolchain(_toolchain_stub()).probe
    assert {"cuda://GPU-0", "hip://GPU-0"} <= set(merged.devices) and merged.cuda_runs == ("sm_80",)
    assert merged.hip_runs == ("gfx942",) and merged.version == HEAD.version
    cluster.nodes["g"].alive = False  # the GPU node died: its lanes compile anywhere rather than wait
    assert cluster.placement(("llvm-cpu", "cuda-sm80")) == ["a", "m"]


def test_cluster_that_cannot_take_the_campaign_is_one_line():
    old = replace(HEAD, version="3.12.0")
    with pytest.raises(UsageError, match=r"no node can run the reference backend llvm-cpu .*IREE 3.12.0 there"):
        _cluster(("old", old, "")).check_usable("auto", "llvm-cpu")
    cluster = _cluster(("a", HEAD, ""), ("b", None, "--iree-bin /opt/iree: no such folder"))
    cluster.spec = ToolchainSpec(iree_bin="/opt/iree")
    with pytest.raises(UsageError, match=r"must exist on every node; node host-b \(b\) lacks it"):
        cluster.check_usable("auto", "llvm-cpu")
    _cluster(("a", HEAD, "")).check_usable("auto", "llvm-cpu")


def test_jobs_beyond_the_cpus_share_them():
    from shapefuzz.campaign.cluster.ray_pool import RayPool

    pool = RayPool.__new__(RayPool)
    pool.cluster = _cluster(("a", HEAD, ""), ("b", HEAD, ""))  # 4 CPUs
    for jobs, share in ((1, 1.0), (4, 1.0), (5, 0.5), (12, 0.3333)):
        pool.jobs = jobs
        assert pool.cpus_per_task() == share


def _toolchain_stub():
    from shapefuzz.iree.toolchain import Toolchain

    return Toolchain(Path("/x/iree-compile"), None, None, "wheels")


def _one_line_exit_2(result: subprocess.CompletedProcess, needle: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in result.stderr, result.stderr


def test_without_ray_installed_cluster_is_one_line(tmp_path):
    code = ("import sys; sys.modules['ray'] = None; from shapefuzz.cli import main; "
            f"sys.argv = ['shapefuzz', 'fuzz', '--cluster', 'auto', '--count', '1', '--campaign', {str(tmp_path / 'c')!r}]; main()")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    _one_line_exit_2(result, "pip install 'shapefuzz[ray]'")
    assert not (tmp_path / "c").exists()  # refused before the campaign folder is touched


def test_no_ray_import_without_cluster():
    code = ("import sys; import shapefuzz.cli, shapefuzz.campaign.run, shapefuzz.campaign.engine, "
            "shapefuzz.campaign.iree, shapefuzz.campaign.cluster.connect, shapefuzz.campaign.cluster.node; "
            "print('ray' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "False", result.stderr


# --- a real local cluster ---------------------------------------------------------------------------
NODE = {"num_cpus": 1, "object_store_memory": 80 << 20}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    keep_on_this_machine()  # before Ray is imported: every node and driver stays on 127.0.0.1 (cluster/local.py)
    ray = pytest.importorskip("ray", reason="the ray extra (pip install 'shapefuzz[ray]') is not installed")
    from ray.cluster_utils import Cluster as RayCluster

    tmp = tmp_path_factory.mktemp("cluster")
    old = make_fake_iree(tmp / "old-iree")
    compile_script = old / "iree-compile"
    compile_script.write_text(compile_script.read_text().replace("version 3.13.0", "version 3.12.0"))
    rc = RayCluster(initialize_head=True, head_node_args=node_args(**NODE))  # on 127.0.0.1 only
    nodes = {"A": rc.head_node}
    nodes["B"] = rc.add_node(**node_args(**NODE, env_vars={"VK_DRIVER_FILES": str(tmp / "no-such-icd.json"),
                                                           "XDG_CACHE_HOME": str(tmp / "cache-b")}))
    nodes["C"] = rc.add_node(**node_args(**NODE, env_vars={"SHAPEFUZZ_IREE_BIN": str(old),
                                                           "XDG_CACHE_HOME": str(tmp / "cache-c")}))
    ray.init(address=rc.address, logging_level="ERROR", log_to_driver=False)
    yield rc, nodes
    ray.shutdown()
    rc.shutdown()


class _Lines:
    """A progress callback keeping the messages (and calling on_tick with each snapshot)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.on_tick = None

    def __iter__(self):
        return iter(self.lines)

    def __call__(self, kind, value):
        if kind == "message":
            self.lines.append(value)
        elif self.on_tick is not None:
            self.on_tick(value)


def _campaign(tmp: Path, toolchain, address: str | None, progress=None, **kw):
    from shapefuzz.campaign.run import FuzzRequest, run_campaign

    # (the draws these seeds were chosen for are steering's and rotation's, not the allocation's)
    kw.setdefault("allocate", False)
    req = FuzzRequest(campaign=str(tmp), corpus=str(tmp / "corpus"), shrink=False, cluster=address, **kw)
    return run_campaign(req, toolchain, progress or _Lines())


def _store(folder: Path):
    store = CampaignStore(folder)
    try:
        rows = {r.key: (r.idx, r.verdict, r.backends, {k: v[0] for k, v in r.outcome.items()}) for r in store.candidates()}
        buckets = {b.sig: (b.count, b.state, b.triage, Path(b.corpus_entry).name) for b in store.buckets()}
        return rows, buckets, sorted(store.hits())
    finally:
        store.close()


def _rows(summary, letter, nodes):
    node_id = nodes[letter].node_id
    return next(r for r in summary.nodes if node_id[:8] in r["node"])


@pytest.mark.ray
@pytest.mark.iree
def test_cluster_campaign_matches_local_pool(cluster, toolchain, tmp_path):
    """Same seed and count, one task at a time: the same candidates, outcomes, buckets, corpus."""
    rc, nodes = cluster
    args = dict(ops="scatter", backends=("llvm-cpu", "llvm-cpu-single-dispatch"), count=3, jobs=1, seed=1)
    local = _campaign(tmp_path / "local", toolchain, None, **args)
    lines = _Lines()
    remote = _campaign(tmp_path / "ray", toolchain, rc.address, lines, **args)
    assert local.candidates == remote.candidates == 3
    assert _store(tmp_path / "local") == _store(tmp_path / "ray")
    assert remote.buckets, "seed 1 finds a bucket on llvm-cpu-single-dispatch (3.13); pick another seed if not"
    entries = sorted(p.name for p in (tmp_path / "ray" / "corpus").iterdir() if p.is_dir())
    assert entries == sorted(p.name for p in (tmp_path / "local" / "corpus").iterdir() if p.is_dir())
    assert any("refused, it gets no work: IREE 3.12.0 there" in str(line) for line in lines)
    assert _rows(remote, "C", nodes)["refused"] and _rows(remote, "C", nodes)["tasks"] == 0
    assert sum(r["checks"] for r in remote.nodes) == 3
    _shrink_on_a_node(rc.address, toolchain, tmp_path / "ray")


def _shrink_on_a_node(address: str, toolchain, folder: Path) -> None:
    """A bucket's shrink runs on a node, which writes nothing the head needs; the head saves it."""
    from shapefuzz.iree.backends import REFERENCE_BACKEND
    from shapefuzz.campaign.cluster.connect import open_cluster
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.campaign.worker_pool import Task
    from shapefuzz.campaign.cluster.ray_pool import RayPool
    from shapefuzz.campaign.outcomes import ShrinkJob, TaskKind

    store = CampaignStore(folder)
    bucket = store.buckets()[0]
    row = store.candidate(bucket.repro_key)
    store.close()
    cluster = open_cluster(address, ToolchainSpec(), toolchain, REFERENCE_BACKEND, lambda line: None)
    corpus = folder / "shrunk-corpus"
    target = IreeTarget(cluster.toolchain(toolchain), corpus)
    candidate = target.generate(row.family, row.seed)
    assert candidate.key == row.key
    pool = RayPool(cluster, target, 1, ToolchainSpec(), target.save_shrunk)
    # 120 s: on a loaded machine (the suite on two workers) 30 s of shrinking measured no smaller
    # reproducer; a shrink that has nothing left to try ends well before its bound
    pool.submit(Task(1, TaskKind.SHRINK, candidate, (bucket.backend,), 300.0,
                     ShrinkJob(bucket.backend, bucket.failure.signature, 120.0, candidate.input_seed)))
    done = []
    while not done:
        done = pool.wait(1.0)
    pool.close()
    assert not done[0].error and not done[0].lost, done[0].error
    shrunk = done[0].value  # a ShrinkOutcome: the entry's reproducer, the entry, what was met while shrinking
    text, entry = shrunk.text, shrunk.entry
    assert text is not None and entry is not None
    assert target.size(text) < target.size(candidate.text) and Path(entry).parent == corpus and (Path(entry) / "meta.json").exists()


@pytest.mark.ray
@pytest.mark.iree
@pytest.mark.vulkan
def test_lane_runs_only_where_it_executes(cluster, toolchain, has_vulkan, tmp_path):
    if not has_vulkan:
        pytest.skip("no Vulkan device on this machine (Debian's mesa-vulkan-drivers)")
    rc, nodes = cluster
    vulkan = _campaign(tmp_path / "vk", toolchain, rc.address, ops="one_hot", backends=("llvm-cpu", "vulkan-spirv"),
                       count=2, jobs=2, seed=5)
    rows, _, _ = _store(tmp_path / "vk")
    # a candidate the Vulkan lane takes (a case with f16 it cannot store is not given to it) runs
    # where Vulkan executes, node A: it is never skipped, and B checks only the others
    on_vulkan = [statuses for _, _, backends, statuses in rows.values() if "vulkan-spirv" in backends]
    assert on_vulkan and all(statuses["vulkan-spirv"] != "skipped" for statuses in on_vulkan)  # it ran
    assert _rows(vulkan, "A", nodes)["checks"] >= len(on_vulkan)
    assert _rows(vulkan, "B", nodes)["checks"] <= len(rows) - len(on_vulkan)
    cpu = _campaign(tmp_path / "cpu", toolchain, rc.address, ops="one_hot", backends=("llvm-cpu", "vmvx"),
                    count=2, jobs=2, seed=5)
    assert _rows(cpu, "B", nodes)["checks"] > 0  # two at once on 1-CPU nodes: one of them on B


@pytest.mark.ray
@pytest.mark.iree
def test_node_removed_mid_campaign_loses_nothing(cluster, toolchain, tmp_path):
    rc, nodes = cluster
    extra = rc.add_node(**node_args(**NODE))
    lines = _Lines()

    def remove_extra(snapshot):
        if snapshot.done >= 1 and extra in rc.worker_nodes:
            rc.remove_node(extra)  # while it runs a task: jobs = the CPUs, one task per node

    lines.on_tick = remove_extra
    summary = _campaign(tmp_path / "camp", toolchain, rc.address, lines, ops="one_hot",
                        backends=("llvm-cpu", "vmvx"), count=6, jobs=3, seed=9)
    assert extra not in rc.worker_nodes
    rows, buckets, hits = _store(tmp_path / "camp")
    assert len(rows) == summary.candidates == 6
    assert sorted(idx for idx, *_ in rows.values()) == sorted(set(idx for idx, *_ in rows.values()))
    assert all(verdict not in (Verdict.LOST, Verdict.ERROR) for _, verdict, _, _ in rows.values())
    assert all(count == sum(1 for _, sig, _ in hits if sig == s) for s, (count, *_) in buckets.items())
    assert any("left the cluster" in str(line) for line in lines)


@pytest.mark.ray
@pytest.mark.iree
def test_ctrl_c_then_head_kill_then_resume(cluster, tmp_path):
    """Ctrl-C stops the campaign with its store intact; kill -9 of the head leaves no task of it
    running on the cluster; the same command resumes and counts each candidate once."""
    rc, nodes = cluster
    raylets = _raylets(nodes.values())
    camp = tmp_path / "camp"
    cmd = [*SHAPEFUZZ, "fuzz", "--cluster", rc.address, "--ops", "one_hot", "--backends", "llvm-cpu,vmvx",
           "--count", "4", "--jobs", "2", "--seed", "4", "--no-shrink", "--campaign", str(camp),
           "--corpus", str(tmp_path / "corpus")]

    def run_until_candidates(n: int) -> subprocess.Popen:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None and _count(camp) < n:
            time.sleep(0.2)
        assert proc.poll() is None, proc.communicate()
        return proc

    proc = run_until_candidates(1)
    busy = _running_tasks(raylets)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert "interrupted" in out, err
    _gone(busy, raylets, "Ctrl-C left tasks running on the cluster")
    first = _count(camp)
    proc = run_until_candidates(first + 1)
    busy = _running_tasks(raylets)
    assert busy, "the campaign had tasks running on the cluster"
    proc.kill()
    proc.wait()
    _gone(busy, raylets, "tasks of the killed head still run on the cluster")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    rows, _, _ = _store(camp)
    assert len(rows) == 4 and all(v not in (Verdict.LOST, Verdict.ERROR) for _, v, _, _ in rows.values())


def _count(folder: Path) -> int:
    if not (folder / "campaign.sqlite").exists():
        return 0
    con = sqlite3.connect(folder / "campaign.sqlite")
    try:
        return con.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def _gone(pids: set[int], raylets: set[int], why: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and pids & _running_tasks(raylets):
        time.sleep(0.5)
    assert not pids & _running_tasks(raylets), why


def _raylets(nodes) -> set[int]:
    """The pids of these Ray nodes' raylets (each starts its node's workers)."""
    return {info.process.pid for node in nodes for info in node.all_processes.get("raylet", [])}


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _running_tasks(raylets: set[int]) -> set[int]:
    """Pids of this cluster's Ray workers running a shapefuzz check now (Ray titles a busy worker by
    its task). Only workers under these raylets: another cluster on the machine (another test
    process's, or another user's campaign) has busy workers of the same title."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if not (entry / "cmdline").read_bytes().startswith(b"ray::shapefuzz-check"):
                    continue
            except OSError:
                continue
            pid = ancestor = int(entry.name)
            while ancestor > 1 and ancestor not in raylets:
                ancestor = _parent(ancestor)
            if ancestor in raylets:
                pids.add(pid)
    return pids


@pytest.mark.ray
@pytest.mark.iree  # has_vulkan probes the real toolchain
def test_backends_per_node_and_bad_address(cluster, has_vulkan, tmp_path):
    from click.testing import CliRunner

    from shapefuzz.cli import cli

    rc, nodes = cluster
    result = CliRunner().invoke(cli, ["backends", "--cluster", rc.address])
    assert result.exit_code == 0, result.output
    blocks = {}
    for block in result.output.split("\nnode ")[1:]:
        blocks[next(k for k, n in nodes.items() if n.node_id[:8] in block.splitlines()[0])] = block
    assert "refused:      IREE 3.12.0 there" in blocks["C"]
    executes = {k: next(line for line in b.splitlines() if "executes:" in line) for k, b in blocks.items() if k != "C"}
    assert ("vulkan-spirv" in executes["A"]) == has_vulkan  # A has this machine's devices
    assert "vulkan-spirv" not in executes["B"] and "llvm-cpu" in executes["B"]
    bad = subprocess.run([*SHAPEFUZZ, "fuzz", "--cluster", "127.0.0.1:9", "--count", "1",
                          "--campaign", str(tmp_path / "c")], capture_output=True, text=True, timeout=120)
    _one_line_exit_2(bad, "--cluster 127.0.0.1:9: no Ray cluster answers there")
    assert not (tmp_path / "c").exists()

