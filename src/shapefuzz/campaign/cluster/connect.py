"""A campaign's view of a Ray cluster (`--cluster ADDRESS`), from the head process: connect, probe
every node's toolchain and devices once (the same probe `shapefuzz backends` shows), refuse the
nodes that cannot take part (another IREE version, no toolchain), and say where a lane executes.

Ray does the scheduling: a task carries a label selector naming the nodes it may run on (Ray's
built-in `ray.io/node-id` label), and Ray places it, retries it elsewhere when its node dies, and
replaces a worker process that died. Nothing here is a scheduler or a node registry of our own.
Ray is imported only when a cluster is asked for."""

from __future__ import annotations

import functools
import logging
import re
import signal
import socket
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from shapefuzz.process import interrupts
from shapefuzz.campaign.cluster.node import NodeReport, ToolchainSpec, probe_node
from shapefuzz.errors import ClusterLost, UsageError
from shapefuzz.iree.toolchain import Toolchain, ToolchainProbe

RAY_VERSION = "2.60.0"  # the version the `ray` extra pins
NODE_LABEL = "ray.io/node-id"  # a label Ray sets on every node
PROBE_SECONDS = 1800.0  # a node may install a release (--iree-version) before it probes
HEAD_SECONDS = 5.0  # the head's GCS port must take a connection within this
LISTING_SECONDS = 20.0  # and answer a node listing within this (Ray itself waits a minute, then ends us)


def import_ray():
    try:
        import ray
    except ImportError:
        raise UsageError(f"--cluster needs Ray, which is not installed: pip install 'shapefuzz[ray]' "
                         f"(ray[client]=={RAY_VERSION})") from None
    return ray


@functools.cache
def remote(function: Callable) -> Any:
    """`function` as a Ray remote function (defined once per process)."""
    return import_ray().remote(function)


_HOST = re.compile(r"[A-Za-z0-9._-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]")
_PORT = re.compile(r"[0-9]{1,5}")


LOCAL = "local"  # a cluster this process starts itself (cluster/local.py), loopback only by default


def check_address(address: str) -> tuple[str, int] | None:
    """'auto' or 'local' (None), or the (host, port) of HOST:PORT or ray://HOST:PORT, port 1 to
    65535; anything else is one line (a 5,000-digit port once exited 70)."""
    if address in ("auto", LOCAL):
        return None
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not _HOST.fullmatch(host) or not _PORT.fullmatch(port) or not 0 < int(port) < 65536:
        shown = address if len(address) <= 80 else address[:60] + f"... ({len(address)} characters)"
        raise UsageError(f"--cluster {shown}: give 'auto', 'local', HOST:PORT of the head (6379 by default) or "
                         "ray://HOST:PORT (Ray client, 10001 by default), the port from 1 to 65535")
    return host.strip("[]"), int(port)


def _reachable(address: str) -> None:
    """host:port or ray://host:port must accept a connection (Ray itself retries for a minute)."""
    hostport = address.removeprefix("ray://")
    host, port = check_address(address) or ("", 0)
    try:
        socket.create_connection((host, port), timeout=5.0).close()
    except OSError as error:
        raise UsageError(f"--cluster {address}: no Ray cluster answers there ({error.strerror or error})") from None
    try:  # Ray speaks gRPC there; anything else would keep ray.init retrying for minutes
        import grpc
    except ImportError:
        return
    channel = grpc.insecure_channel(hostport)
    try:
        grpc.channel_ready_future(channel).result(timeout=10.0)
    except grpc.FutureTimeoutError:
        raise UsageError(f"--cluster {address}: something answers there, but not a Ray cluster") from None
    finally:
        channel.close()


def connect(address: str, cpus: int | None = None, bind: str | None = None,
            say: Callable[[str], None] = lambda line: None) -> bool:
    """Connect this process to the cluster; False when it was connected already (tests).
    'local': start one on this machine first, of `cpus` CPUs (default: the cores), its servers
    bound to `bind` (default 127.0.0.1: no other machine reaches it; `local.start_local`)."""
    if address == LOCAL:
        from shapefuzz.campaign.cluster.local import is_loopback, keep_on_this_machine

        if is_loopback(bind):
            keep_on_this_machine()  # before Ray is imported: it reads the mode then
    ray = import_ray()
    if ray.is_initialized():
        return False
    if address not in ("auto", LOCAL):
        _reachable(address)
    ours = {sig: signal.getsignal(sig) for sig in interrupts.SIGNALS}
    try:
        target = address
        if address == LOCAL:
            target = _start_local(cpus, bind, say)
        ray.init(address=target, logging_level=logging.ERROR, log_to_driver=False,
                 configure_logging=True, namespace="shapefuzz")
    except (ConnectionError, RuntimeError, ValueError) as error:
        if address == LOCAL:
            from shapefuzz.campaign.cluster.local import stop_local

            stop_local()
        if address == "auto" and isinstance(error, ConnectionError):
            raise UsageError("--cluster auto: no running Ray cluster on this machine; start one with "
                             "`ray start --head`, or give the head's HOST:PORT") from None
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        raise UsageError(f"--cluster {address}: cannot connect to a Ray cluster "
                         f"({(lines[0] if lines else type(error).__name__)[:200]})") from None
    finally:  # ray.init puts its own SIGTERM handler (a bare exit, Ray's stack dump) over ours
        for sig, handler in ours.items():
            if handler is not None:
                signal.signal(sig, handler)
    return True


def _start_local(cpus: int | None, bind: str | None, say: Callable[[str], None]) -> str:
    from shapefuzz.campaign.cluster.local import is_loopback, start_local
    from shapefuzz.campaign.config import default_jobs

    cpus = cpus or default_jobs()
    address = start_local(cpus, bind)
    reach = "only this machine can reach it" if is_loopback(bind) else \
        f"other machines may join with `ray start --address={address}`"
    say(f"cluster local: started a Ray head of {cpus} CPU(s) at {address} ({reach})")
    return address


def disconnect() -> None:
    """Leave the cluster, and stop the one `--cluster local` started."""
    import ray

    from shapefuzz.campaign.cluster.local import stop_local

    ray.shutdown()
    stop_local()


@dataclass
class Node:
    report: NodeReport
    cpus: float
    alive: bool = True
    refused: str = ""  # why it gets no work; "" when it takes part
    probe: ToolchainProbe | None = None

    @property
    def node_id(self) -> str:
        return self.report.node_id

    @property
    def name(self) -> str:
        return f"{self.report.host} ({self.node_id[:8]})"


@dataclass(frozen=True)
class ClusterToolchain(Toolchain):
    """The head's toolchain, with a probe that says what the cluster can do: a lane executes
    where some node executes it. The head uses it to file findings (compile flags, triage);
    each node checks with its own toolchain."""

    merged: ToolchainProbe | None = None

    @property
    def probe(self) -> ToolchainProbe:
        assert self.merged is not None
        return self.merged


def merged_probe(head: ToolchainProbe, probes: list[ToolchainProbe]) -> ToolchainProbe:
    """What the cluster can do: the head's compiler, every node's devices and GPU trials."""
    every = [head, *probes]
    cuda = [p for p in probes if p.cuda_runs or p.cuda_note]
    return replace(
        head, devices=tuple(dict.fromkeys(d for p in every for d in p.devices)),
        cuda_arch=next((p.cuda_arch for p in cuda if p.cuda_arch), head.cuda_arch),
        cuda_runs=tuple(dict.fromkeys(t for p in every for t in p.cuda_runs)),
        cuda_note="; ".join(dict.fromkeys(p.cuda_note for p in cuda)) or head.cuda_note,
        hip_runs=tuple(dict.fromkeys(t for p in every for t in p.hip_runs)),
        hip_note="; ".join(dict.fromkeys(p.hip_note for p in every if p.hip_note)))


@dataclass
class Cluster:
    """The nodes of a connected cluster, as probed. `placement(lanes)` names the nodes a task
    with those lanes may run on; `refresh()` follows nodes that die or join."""

    spec: ToolchainSpec
    head: ToolchainProbe
    say: Callable[[str], None] = lambda line: None
    nodes: dict[str, Node] = field(default_factory=dict)
    head_address: tuple[str, int] | None = None  # the head's GCS (host, port): is it still there?
    lost: bool = False  # the head went away: no further Ray call (each would block for a minute)
    _pending: dict[Any, str] = field(default_factory=dict)  # probe ref -> node id, for nodes that joined

    # --- probing ------------------------------------------------------------------------------
    def _probe_ref(self, node_id: str):
        return remote(probe_node).options(
            num_cpus=0, max_retries=1, name="shapefuzz-probe", label_selector={NODE_LABEL: node_id}).remote(self.spec)

    def probe_all(self, timeout: float = PROBE_SECONDS) -> None:
        """Probe every live node at once; a node that does not answer in time is refused."""
        ray = import_ray()
        alive = {n["NodeID"]: n for n in ray.nodes() if n.get("Alive")}
        refs = {self._probe_ref(node_id): node_id for node_id in alive}
        if not refs:
            return
        ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=timeout)
        for ref in ready:
            self._admit(_get_report(ray, ref, refs[ref]), alive[refs[ref]])
        for ref in late:
            ray.cancel(ref, force=True)
            info = alive[refs[ref]]
            report = NodeReport(refs[ref], info.get("NodeManagerHostname") or info.get("NodeManagerAddress", "?"),
                                error=f"did not answer the toolchain probe within {timeout:.0f}s")
            self._admit(report, info)

    def _admit(self, report: NodeReport, info: dict) -> None:
        node = Node(report, float(info.get("Resources", {}).get("CPU", 0.0)))
        if report.error:
            node.refused = report.error
        else:
            node.probe = ToolchainProbe.from_json(report.probe or {})
            if node.probe.version != self.head.version:
                node.refused = (f"IREE {node.probe.version} there, {self.head.version} on the head "
                                f"({self.spec.describe()})")
        if node.refused:
            self.say(f"node {node.name} refused, it gets no work: {node.refused}")
        self.nodes[node.node_id] = node

    def refresh(self) -> list[str]:
        """Follow the cluster: nodes that died leave the placement, nodes that joined are probed
        (they take work once their probe is back). Returns the ids of nodes found dead."""
        ray = import_ray()
        listed = {n["NodeID"]: n for n in self._list_nodes()}
        died = []
        for node_id, node in self.nodes.items():
            alive = bool(listed.get(node_id, {}).get("Alive"))
            if node.alive and not alive:
                died.append(node_id)
                if not node.refused:
                    self.say(f"node {node.name} left the cluster; its tasks run again elsewhere")
            node.alive = alive
        waiting = set(self._pending.values())
        for node_id, info in listed.items():
            if info.get("Alive") and node_id not in self.nodes and node_id not in waiting:
                self._pending[self._probe_ref(node_id)] = node_id
        if self._pending:
            ready, _ = ray.wait(list(self._pending), num_returns=len(self._pending), timeout=0)
            for ref in ready:
                node_id = self._pending.pop(ref)
                self._admit(_get_report(ray, ref, node_id), listed.get(node_id, {}))
                if not self.nodes[node_id].refused:
                    self.say(f"node {self.nodes[node_id].name} joined the campaign")
        return died

    def _list_nodes(self) -> list[dict]:
        """`ray.nodes()`, or ClusterLost within seconds when the head is gone (Ray would block the
        campaign for a minute, then end the process with no report)."""
        if not self.head_alive():
            self.lost = True
            raise ClusterLost("the Ray head went away")
        box: dict[str, Any] = {}

        def ask() -> None:
            try:
                box["nodes"] = import_ray().nodes()
            except Exception as error:  # noqa: BLE001 - told below, in the main thread
                box["error"] = error

        asking = threading.Thread(target=ask, name="ray-nodes", daemon=True)  # left behind if it hangs
        asking.start()
        asking.join(LISTING_SECONDS)
        if "error" in box:
            raise box["error"]
        if "nodes" not in box:
            self.lost = True
            raise ClusterLost(f"the Ray head did not answer within {LISTING_SECONDS:.0f}s")
        return box["nodes"]

    def head_alive(self) -> bool:
        """The head's GCS port takes a connection (asked twice, a second apart, before it is
        declared gone: a busy network is not a lost head)."""
        if self.head_address is None:
            return True
        for attempt in range(2):
            try:
                socket.create_connection(self.head_address, timeout=HEAD_SECONDS).close()
                return True
            except OSError:
                time.sleep(1.0 if attempt == 0 else 0.0)
        return False

    def cancel_probes(self) -> None:
        if self.lost:
            return
        ray = import_ray()
        for ref in self._pending:
            ray.cancel(ref, force=True)
        self._pending.clear()

    # --- what the head asks -----------------------------------------------------------------------
    def working(self) -> list[Node]:
        """The live nodes that take part."""
        return [n for n in self.nodes.values() if n.alive and not n.refused]

    @property
    def cpus(self) -> int:
        return max(1, int(sum(n.cpus for n in self.working())))

    def executes(self, lane: str) -> set[str]:
        from shapefuzz.iree.backends import BACKENDS

        backend = BACKENDS.get(lane)
        return {n.node_id for n in self.working()
                if backend is not None and n.probe is not None and backend.executes(n.probe)}

    def placement(self, lanes: tuple[str, ...]) -> list[str]:
        """The nodes where every lane of a task that executes somewhere executes; when no node
        has them all, the nodes of the rarest ones (the rest compile only there). A lane that
        executes nowhere compiles anywhere."""
        chosen = {n.node_id for n in self.working()}
        for where in sorted((self.executes(lane) for lane in lanes), key=len):
            if where and chosen & where:
                chosen &= where
        return sorted(chosen)

    def toolchain(self, head: Toolchain) -> ClusterToolchain:
        probes = [n.probe for n in self.working() if n.probe is not None]
        return ClusterToolchain(head.compile_bin, head.opt_bin, head.run_bin, head.source,
                                merged_probe(self.head, probes))

    def check_usable(self, address: str, reference: str) -> None:
        """One line and exit 2 when the campaign cannot run here."""
        refused = [n for n in self.nodes.values() if n.refused]
        why = "; ".join(f"node {n.name}: {n.refused}" for n in refused[:3])
        if self.spec.iree_bin and any("--iree-bin" in n.refused for n in refused):
            lacking = [n for n in refused if "--iree-bin" in n.refused]
            raise UsageError(f"--iree-bin {self.spec.iree_bin} must exist on every node; "
                             + "; ".join(f"node {n.name} lacks it ({n.refused})" for n in lacking[:3]))
        if not self.nodes:
            raise UsageError(f"--cluster {address}: the cluster has no live node")
        if not self.executes(reference):
            raise UsageError(f"--cluster {address}: no node can run the reference backend {reference}"
                             + (f" ({why})" if why else ""))


def describe_nodes(cluster: Cluster) -> list[dict[str, Any]]:
    """Per node, what `shapefuzz backends --cluster` shows: its toolchain and devices, and which
    backends execute, only compile, or are unavailable there."""
    from shapefuzz.iree.backends import BACKENDS

    rows = []
    for node in sorted(cluster.nodes.values(), key=lambda n: (n.report.host, n.node_id)):
        row: dict[str, Any] = {"node": node.name, "node_id": node.node_id, "host": node.report.host,
                               "cpus": node.cpus, "alive": node.alive, "refused": node.refused or None}
        if node.probe is not None:
            probe = node.probe
            row.update({
                "toolchain": node.report.source, "version": probe.version, "devices": list(probe.devices),
                "cuda": probe.cuda_note or None, "hip": probe.hip_note or None,
                "executes": [n for n, b in BACKENDS.items() if b.executes(probe)],
                "compile_only": [n for n, b in BACKENDS.items() if b.compiles(probe) and not b.executes(probe)],
                "unavailable": [n for n, b in BACKENDS.items() if not b.compiles(probe)],
            })
        rows.append(row)
    return rows


def _gcs_address(address: str) -> tuple[str, int] | None:
    """Where the connected head listens (the Ray client's address for ray://)."""
    if address.startswith("ray://"):
        return check_address(address)
    try:
        return check_address(import_ray().get_runtime_context().gcs_address)
    except (UsageError, AttributeError, TypeError):
        return None


def _get_report(ray, ref, node_id: str) -> NodeReport:
    try:
        return ray.get(ref)
    except Exception as error:  # noqa: BLE001 - a node that cannot run our code is refused, not fatal
        text = " ".join(str(error).split())
        return NodeReport(node_id, "?", error=f"cannot run shapefuzz there: {type(error).__name__}: {text[:200]}")


def open_cluster(address: str, spec: ToolchainSpec, head: Toolchain, reference: str | None,
                 say: Callable[[str], None]) -> Cluster:
    """Probe every node of the connected cluster; one line and exit 2 when it cannot take a
    campaign whose reference backend is `reference` (None: only look)."""
    start = time.monotonic()
    cluster = Cluster(spec, head.probe, say, head_address=_gcs_address(address))
    cluster.probe_all()
    if reference is None:
        return cluster
    cluster.check_usable(address, reference)
    say(f"cluster {address}: {len(cluster.working())} node(s), {cluster.cpus} CPU(s); probed in "
        f"{time.monotonic() - start:.1f}s")
    return cluster


__all__ = ["Cluster", "ClusterToolchain", "Node", "check_address", "connect", "describe_nodes", "disconnect", "import_ray",
           "open_cluster", "remote"]
