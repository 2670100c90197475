"""A Ray cluster shapefuzz starts itself listens on 127.0.0.1 only (issue #47). Ray binds a node's
servers to the node's address, by default the host's outward one, and runs the code of whoever
reaches them; `ray start --node-ip-address=127.0.0.1` and `ray.init(_node_ip_address=...)` turn
loopback back into that address. `--cluster local` (and the tests' and bench's clusters) start
their nodes with `cluster.local.node_args`, bound to 127.0.0.1 unless `--cluster-bind` names
another address of this machine. Without Ray: the arguments built; with Ray (`ray` mark): the
addresses a real `--cluster local` head listens on."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import types
from pathlib import Path

import pytest

from shapefuzz.campaign.cluster import connect as connect_module
from shapefuzz.campaign.cluster.connect import check_address, connect, disconnect
from shapefuzz.campaign.cluster.local import LOOPBACK, ONE_MACHINE_ENV, check_bind, node_args
from shapefuzz.campaign.run import FuzzRequest, build_config
from shapefuzz.errors import UsageError


def test_nodes_are_bound_to_loopback_unless_told_otherwise():
    assert node_args()["node_ip_address"] == LOOPBACK
    assert node_args(num_cpus=3, env_vars={"A": "1"}) == {
        "num_cpus": 3, "object_store_memory": 200 << 20, "include_dashboard": False, "env_vars": {"A": "1"},
        "node_ip_address": LOOPBACK}
    assert node_args("10.1.2.3")["node_ip_address"] == "10.1.2.3"
    assert node_args(node_ip_address="10.9.9.9")["node_ip_address"] == LOOPBACK  # only `bind` moves it


class _FakeRay(types.ModuleType):
    """`ray` and `ray.cluster_utils` as far as `connect('local')` uses them, recording the calls."""

    def __init__(self) -> None:
        super().__init__("ray")
        self.calls: list[tuple] = []
        self.initialized = False
        fake = self

        class Cluster:
            def __init__(self, initialize_head: bool = False, head_node_args: dict | None = None, **kw) -> None:
                fake.calls.append(("Cluster", initialize_head, dict(head_node_args or {})))
                self.address = f"{(head_node_args or {}).get('node_ip_address')}:6380"

            def shutdown(self) -> None:
                fake.calls.append(("shutdown cluster",))

        self.cluster_utils = types.ModuleType("ray.cluster_utils")
        self.cluster_utils.Cluster = Cluster

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, address=None, **kw) -> None:
        self.calls.append(("init", address))
        self.initialized = True

    def shutdown(self) -> None:
        self.calls.append(("shutdown",))
        self.initialized = False


@pytest.fixture()
def fake_ray(monkeypatch):
    monkeypatch.setenv(ONE_MACHINE_ENV, "1")  # and put back after: keep_on_this_machine sets it
    fake = _FakeRay()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.cluster_utils", fake.cluster_utils)
    return fake


def test_cluster_local_starts_a_head_on_loopback_and_stops_it(fake_ray):
    said: list[str] = []
    assert connect("local", cpus=3, say=said.append) is True
    assert fake_ray.calls[0] == ("Cluster", True, {**node_args(num_cpus=3)})
    assert fake_ray.calls[1] == ("init", "127.0.0.1:6380")  # the head it started, not 'auto' or a guess
    assert said == ["cluster local: started a Ray head of 3 CPU(s) at 127.0.0.1:6380 (only this machine can reach it)"]
    assert os.environ[ONE_MACHINE_ENV] == "0"  # Ray then leaves 127.0.0.1 as it is (cluster/local.py)
    disconnect()
    assert fake_ray.calls[2:] == [("shutdown",), ("shutdown cluster",)]


def test_an_explicit_bind_address_is_respected_and_said(fake_ray):
    said: list[str] = []
    connect("local", cpus=2, bind="10.1.2.3", say=said.append)
    assert fake_ray.calls[0][2]["node_ip_address"] == "10.1.2.3" and fake_ray.calls[1] == ("init", "10.1.2.3:6380")
    assert "other machines may join with `ray start --address=10.1.2.3:6380`" in said[0]
    assert os.environ[ONE_MACHINE_ENV] == "1"  # a cluster for other machines too: Ray's own mode
    disconnect()


def test_a_head_ray_cannot_start_is_one_line_and_nothing_is_left(fake_ray):
    def broken(*args, **kw):
        raise RuntimeError("Failed to start GCS\nmore detail")

    fake_ray.cluster_utils.Cluster = broken
    with pytest.raises(UsageError, match=r"^--cluster local: Ray cannot start a head here \(Failed to start GCS\)$"):
        connect("local", cpus=1)
    assert not fake_ray.initialized and connect_module.import_ray() is fake_ray


def test_local_is_an_address_and_bind_goes_only_with_it(tmp_path):
    assert check_address("local") is None
    req = dict(campaign=str(tmp_path / "c"), corpus=str(tmp_path / "corpus"))
    assert build_config(FuzzRequest(cluster="local", **req), None).cluster_bind is None
    assert build_config(FuzzRequest(cluster="local", cluster_bind="127.0.0.1", **req), None).cluster_bind == LOOPBACK
    for cluster in (None, "auto", "10.0.0.1:6379"):
        with pytest.raises(UsageError, match=r"^--cluster-bind: only with --cluster local"):
            build_config(FuzzRequest(cluster=cluster, cluster_bind="127.0.0.1", **req), None)


@pytest.mark.parametrize("text, why", [
    ("nonsense", "give an IP address of this machine"), ("0.0.0.0", "give one address of this machine"),
    ("::", "give one address of this machine"), ("224.0.0.1", "give one address of this machine"),
    ("203.0.113.9", "not an address of this machine"), ("1" * 5000, "give an IP address")])
def test_a_bind_address_that_is_not_one_of_this_machine_is_one_line(text, why):
    with pytest.raises(UsageError) as refused:
        check_bind(text)
    assert why in str(refused.value) and len(str(refused.value)) < 300 and "\n" not in str(refused.value)


def test_the_cli_refuses_a_bad_bind_before_anything_starts(tmp_path):
    result = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", "--cluster", "local", "--cluster-bind",
                             "0.0.0.0", "--count", "1", "--campaign", str(tmp_path / "c")],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shapefuzz: error: --cluster-bind 0.0.0.0:"), lines
    assert not (tmp_path / "c").exists()


# --- a real head ------------------------------------------------------------------------------------
def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _listening(pids: set[int]) -> list[str]:
    """The local addresses of the TCP sockets those processes listen on (/proc/net/tcp{,6})."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            hexaddr = fields[1].split(":")[0]
            raw = b"".join(bytes.fromhex(hexaddr[i:i + 8])[::-1] for i in range(0, len(hexaddr), 8))
            found.append(socket.inet_ntop(family, raw))
    return found


@pytest.mark.ray
def test_a_real_local_head_listens_on_loopback_only(tmp_path):
    pytest.importorskip("ray", reason="the ray extra (pip install 'shapefuzz[ray]') is not installed")
    code = ("import faulthandler, sys; faulthandler.dump_traceback_later(150, exit=True); "  # never a hung test
            "from shapefuzz.campaign.cluster.connect import connect, disconnect; "
            "connect('local', cpus=1, say=print); print('READY', flush=True); sys.stdin.readline(); disconnect()")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        lines = []
        while not lines or lines[-1] != "READY":
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            lines.append(line.strip())
        assert "at 127.0.0.1:" in lines[0] and "only this machine" in lines[0], lines
        addresses = _listening(_descendants(proc.pid) | {proc.pid})
        assert len(addresses) >= 2, addresses  # the GCS and the raylet at least
        assert all(a in ("127.0.0.1", "::ffff:127.0.0.1", "::1") for a in addresses), addresses
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
