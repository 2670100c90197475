"""What runs on a cluster node (`shapefuzz fuzz --cluster`): the node's own toolchain, found and
probed there; the probe the head gathers once per node; and one campaign task, run against the
node's toolchain. Nothing here writes a file the head needs: every result goes back as a value.

Imports no Ray at module level, so the head can import it without `--cluster`."""

from __future__ import annotations

import functools
import os
import platform
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any

from shapefuzz.campaign.outcomes import EnvironmentCondition, SplitShrinkTarget, TaskKind, perform
from shapefuzz.errors import EnvironmentFault, ShapefuzzError


@dataclass(frozen=True)
class ToolchainSpec:
    """Which toolchain every node uses: the one named on the head's command line (a folder that
    must exist on every node, or a release each node installs into its own cache), else the
    node's own default (its $SHAPEFUZZ_IREE_BIN, else its pinned wheels)."""

    iree_bin: str | None = None
    iree_version: str | None = None

    def describe(self) -> str:
        if self.iree_version:
            return f"--iree-version {self.iree_version}"
        return f"--iree-bin {self.iree_bin}" if self.iree_bin else "the node's own toolchain"


@functools.cache
def node_toolchain(spec: ToolchainSpec):
    """The toolchain on this node (cached per worker process; the probe is cached per binary)."""
    if spec.iree_version:
        from shapefuzz.iree.releases import release_toolchain

        return release_toolchain(spec.iree_version)
    from shapefuzz.iree.toolchain import find_toolchain

    return find_toolchain(spec.iree_bin)


@dataclass(frozen=True)
class NodeReport:
    """One node's answer to the probe: its toolchain's probe (as JSON), or why it has none."""

    node_id: str
    host: str
    probe: dict | None = None  # ToolchainProbe.to_json()
    source: str = ""  # where its toolchain came from
    error: str = ""


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def probe_node(spec: ToolchainSpec) -> NodeReport:
    """Run on each node once, when a campaign starts (or when a node joins)."""
    node, host = _node_id(), platform.node()
    try:
        toolchain = node_toolchain(spec)
        return NodeReport(node, host, toolchain.probe.to_json(), toolchain.source)
    except (ShapefuzzError, OSError) as error:
        return NodeReport(node, host, error=" ".join(str(error).split())[:300])


@dataclass(frozen=True)
class TaskResult:
    value: Any
    seconds: float
    error: str  # a traceback: our bug on one candidate
    node_id: str
    pid: int
    environment: EnvironmentCondition | None = None  # the node's machine failed the task (pool.Done's)


def run_task(target: Any, spec: ToolchainSpec, kind: str, candidate: Any, argument: Any) -> TaskResult:
    """One campaign task on this node, with the node's toolchain in place of the head's;
    `argument` is the task's lanes, or a shrink's `ShrinkJob`. A shrink is run here without writing
    the corpus (the head saves what it returns); a target without that split shrinks as it does locally."""
    start = time.perf_counter()
    environment = None
    try:
        if hasattr(target, "toolchain"):
            target = replace(target, toolchain=node_toolchain(spec))
        if TaskKind(kind) == TaskKind.SHRINK and isinstance(target, SplitShrinkTarget):
            value, error = target.shrink_only(candidate, argument), ""
        else:
            value, error = perform(target, kind, candidate, argument), ""
    except EnvironmentFault as fault:  # the node's machine, not the candidate: retried by the head
        value, error, environment = None, traceback.format_exc(limit=8), EnvironmentCondition.of(fault)
    except Exception:  # noqa: BLE001 - our bug on one candidate: reported, the node keeps working
        value, error = None, traceback.format_exc(limit=8)
    return TaskResult(value, time.perf_counter() - start, error, _node_id(), os.getpid(), environment)


__all__ = ["NodeReport", "TaskResult", "ToolchainSpec", "node_toolchain", "probe_node", "run_task"]
