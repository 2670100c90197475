"""`shapefuzz fuzz --cluster ADDRESS`: what `run_campaign` needs from a cluster, in one object:
the head's toolchain with the cluster's probe, the number of CPUs, a pool factory for the engine,
and the per-node figures for the report. The campaign itself stays in the head process."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from shapefuzz.campaign.cluster.connect import Cluster, ClusterToolchain, connect, disconnect, open_cluster
from shapefuzz.campaign.cluster.node import ToolchainSpec
from shapefuzz.campaign.outcomes import SplitShrinkTarget
from shapefuzz.iree.toolchain import ENV_IREE_BIN, Toolchain


def toolchain_spec(iree_bin: str | None, iree_version: str | None) -> ToolchainSpec:
    """The toolchain the head was told to use is the one every node must use ($SHAPEFUZZ_IREE_BIN
    on the head counts as --iree-bin)."""
    if iree_version:
        return ToolchainSpec(iree_version=iree_version)
    folder = iree_bin or os.environ.get(ENV_IREE_BIN) or None
    return ToolchainSpec(iree_bin=str(os.path.abspath(folder)) if folder else None)


@dataclass
class ClusterRun:
    address: str
    cluster: Cluster
    spec: ToolchainSpec
    toolchain: ClusterToolchain
    owned: bool  # this process connected (and so disconnects)
    pool: Any = None

    @property
    def cpus(self) -> int:
        return self.cluster.cpus

    def pool_factory(self, target: Any, jobs: int) -> Any:
        from shapefuzz.campaign.cluster.ray_pool import RayPool

        head_finish = target.save_shrunk if isinstance(target, SplitShrinkTarget) else None
        self.pool = RayPool(self.cluster, target, jobs, self.spec, head_finish)
        return self.pool

    def node_rates(self) -> list[dict[str, Any]]:
        return self.pool.node_rates() if self.pool is not None else []

    def close(self) -> None:
        if self.owned and not self.cluster.lost:  # (Ray's goodbye to a lost head waits for it)
            disconnect()


def start_cluster(address: str, spec: ToolchainSpec, head: Toolchain, reference: str,
                  say: Callable[[str], None], cpus: int | None = None, bind: str | None = None) -> ClusterRun:
    """Connect (for 'local', start the cluster first: `cpus` CPUs, bound to `bind`) and probe;
    one line and exit 2 when the cluster cannot take the campaign."""
    owned = connect(address, cpus, bind, say)
    try:
        cluster = open_cluster(address, spec, head, reference, say)
    except BaseException:
        if owned:
            disconnect()
        raise
    return ClusterRun(address, cluster, spec, cluster.toolchain(head), owned)


__all__ = ["ClusterRun", "start_cluster", "toolchain_spec"]
