"""Fault handling with fake compilers: each misbehaviour is classified, nothing is left running."""

import time

import pytest

from shapefuzz.invoke.execute import Budget
from shapefuzz.model import Stage, Status
from shapefuzz.judge.oracle import check_module
from shapefuzz.process.sandbox import GIB, Limits
from shapefuzz.iree.toolchain import find_toolchain
from support.fakes import make_fake_toolchain, process_alive

from pathlib import Path
from support.faults import faulty_check  # noqa: F401

HANG_BUDGET = Budget(compile=Limits(timeout=3.0, memory_bytes=GIB // 2))


@pytest.mark.parametrize(
    "behaviour, stage, status, message",
    [
        ("segfault", Stage.COMPILE, Status.CRASH, "SIGSEGV"),
        ("fatal", Stage.COMPILE, Status.CRASH, "LLVM ERROR: Building op `arith.constant` but it isn't known in this MLIRContext"),
        ("memory", Stage.COMPILE, Status.OOM, "out of memory"),
        ("garbage", Stage.COMPILE, Status.ERROR, None),
        ("garbage-output", Stage.RUN, Status.ERROR, None),
    ],
)
def test_misbehaving_compiler_is_classified(tmp_path, monkeypatch, behaviour, stage, status, message):
    result = faulty_check(tmp_path, monkeypatch, behaviour)
    assert (result.stage, result.status) == (stage, status), result.detail[:300]
    assert result.signature is not None and result.signature.backend == "llvm-cpu"
    if message is not None:
        assert result.signature.message == message
    assert len(result.signature.message) <= 240


def test_hanging_compiler_times_out_and_leaves_nothing_running(tmp_path, monkeypatch):
    start = time.monotonic()
    result = faulty_check(tmp_path, monkeypatch, "hang", HANG_BUDGET)
    assert (result.stage, result.status) == (Stage.COMPILE, Status.TIMEOUT)
    assert time.monotonic() - start < 20
    time.sleep(0.2)
    for pid in map(int, (tmp_path / "pids").read_text().split()):
        assert not process_alive(pid)
