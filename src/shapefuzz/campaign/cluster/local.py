"""A Ray cluster shapefuzz starts itself (`--cluster local`; the tests' and the bench's clusters):
a head on this machine whose servers listen on 127.0.0.1 only, unless `--cluster-bind` names
another address of this machine.

Ray binds every server of a node (GCS, raylet, object manager, runtime-env agent, and the Ray
client server where one is asked for) to the node's IP address, and left alone it takes the host's
outward address. Ray has no authentication by default, so such a cluster runs the tasks (any
code) of whoever reaches its ports. On Linux, Ray 2.60 also turns a loopback address it is given
back into the outward one (`services.resolve_ip_for_localhost`: `ray start
--node-ip-address=127.0.0.1`, `ray.init(_node_ip_address=...)`, and a driver's
`ray.init(address="127.0.0.1:PORT")`, which then cannot reach a loopback head), except when it runs
as a one-machine Ray, as it does on macOS and Windows (`RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`,
`keep_on_this_machine`). So a loopback cluster is started in that mode, each node with its address
given to its own parameters (`node_args`, `ray.cluster_utils.Cluster`, which starts no Ray client
server). Ray is imported only when a cluster is started."""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys
from typing import Any

from shapefuzz.errors import UsageError

LOOPBACK = "127.0.0.1"
ONE_MACHINE_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"  # "0": Ray keeps loopback addresses as given
OBJECT_STORE_BYTES = 200 << 20  # a campaign's task values are small (outcomes, shrunk reproducers)


def check_bind(text: str) -> str:
    """`--cluster-bind`: one IP address of this machine (where other machines would reach the head);
    anything else is one line."""
    shown = text if len(text) <= 60 else text[:40] + f"... ({len(text)} characters)"
    try:
        ip = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        raise UsageError(f"--cluster-bind {shown!r}: give an IP address of this machine, e.g. {LOOPBACK} (the "
                         "default: only this machine can reach the cluster)") from None
    if ip.is_unspecified or ip.is_multicast:
        raise UsageError(f"--cluster-bind {ip}: give one address of this machine (a node is reached at its "
                         "address; Ray cannot listen on every address at once)")
    try:
        with socket.socket(socket.AF_INET6 if ip.version == 6 else socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((str(ip), 0))
    except OSError as error:
        raise UsageError(f"--cluster-bind {ip}: not an address of this machine ({error.strerror or error})") from None
    return str(ip)


def is_loopback(address: str | None) -> bool:
    return ipaddress.ip_address(address or LOOPBACK).is_loopback


def keep_on_this_machine() -> None:
    """Ray in this process, and in the processes it starts (they inherit the environment), as a
    one-machine Ray that leaves 127.0.0.1 as it is. Ray reads this when it is imported: once it
    was imported without it, a loopback cluster cannot be reached from here (one line)."""
    os.environ[ONE_MACHINE_ENV] = "0"
    constants = sys.modules.get("ray._private.ray_constants")  # loaded with Ray; looked up, not imported
    if constants is not None and getattr(constants, "ENABLE_RAY_CLUSTER", False):
        raise UsageError("--cluster local: Ray was imported in this process before it could be kept on 127.0.0.1; "
                         f"set {ONE_MACHINE_ENV}=0 before Ray is imported, or give --cluster-bind")


def node_args(bind: str | None = None, **extra: Any) -> dict[str, Any]:
    """A node's arguments for `ray.cluster_utils.Cluster` (head or `add_node`): its servers bound to
    `bind` (default 127.0.0.1), no dashboard; `extra` (num_cpus, env_vars...) as Ray takes them."""
    return {"num_cpus": 1, "object_store_memory": OBJECT_STORE_BYTES, "include_dashboard": False, **extra,
            "node_ip_address": bind or LOOPBACK}


_started: list[Any] = []  # the cluster `--cluster local` started in this process (a ray.cluster_utils.Cluster)


def start_local(cpus: int, bind: str | None = None) -> str:
    """`--cluster local`: a head of `cpus` CPUs on this machine, bound as `node_args` binds it,
    until `stop_local`; returns its GCS address, HOST:PORT (what `ray.init` takes)."""
    if is_loopback(bind):
        keep_on_this_machine()
    try:
        from ray.cluster_utils import Cluster

        logging.getLogger("ray").setLevel(logging.ERROR)  # as `ray.init(logging_level=ERROR)`: no INFO lines
        cluster = Cluster(initialize_head=True, head_node_args=node_args(bind, num_cpus=cpus))
    except Exception as error:  # noqa: BLE001 - whatever Ray raises while starting is one line
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        raise UsageError(f"--cluster local: Ray cannot start a head here "
                         f"({(lines[0] if lines else type(error).__name__)[:200]})") from None
    _started.append(cluster)
    return cluster.address


def stop_local() -> None:
    while _started:
        _started.pop().shutdown()


__all__ = ["LOOPBACK", "ONE_MACHINE_ENV", "check_bind", "is_loopback", "keep_on_this_machine", "node_args",
           "start_local", "stop_local"]
