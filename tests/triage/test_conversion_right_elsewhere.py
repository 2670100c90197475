"""A wrong value blamed on a frontend conversion because shapefuzz's own linalg spelling computes right
is cleared when the conversion's own output, compiled by an older cached release, computes right (issue
#43, hand audit of a fresh campaign: cause-04d2b5a9ae, a torch max_pool2d with ceil_mode on a `?` width,
was addressed to torch-mlir; its `--compile-to=input` output is the same in 3.6.0, which computes 26.75:
the bug was IREE's FoldUnitExtentDims)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from shapefuzz.judge import frontend_probe
from shapefuzz.judge.frontend_probe import conversion_right_elsewhere
from shapefuzz.triage.localize_types import Values

MAX_POOL = """func.func @main(%input: !torch.vtensor<[1,1,1,?],f32>) -> !torch.vtensor<[1,1,1,?],f32> {
  %int5 = torch.constant.int 5
  %int1 = torch.constant.int 1
  %int2 = torch.constant.int 2
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %list1 = torch.prim.ListConstruct %int5, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %list2 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %list3 = torch.prim.ListConstruct %int2, %int0 : (!torch.int, !torch.int) -> !torch.list<int>
  %list4 = torch.prim.ListConstruct %int1, %int1 : (!torch.int, !torch.int) -> !torch.list<int>
  %pool5 = torch.aten.max_pool2d %input, %list1, %list2, %list3, %list4, %true : !torch.vtensor<[1,1,1,?],f32>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.list<int>, !torch.bool -> !torch.vtensor<[1,1,1,?],f32>
  return %pool5 : !torch.vtensor<[1,1,1,?],f32>
}
"""


class _Probe:
    """An IreeProbe stand-in: the conversion's output is a fixed text; only `right` computes it right."""

    right = "3.6.0"
    asked: list[str] = []

    def __init__(self, text, lane, inputs, expected, toolchain, workdir, compare=None, extra=()):
        self.toolchain = toolchain

    def phase_ir(self, phase):
        return "converted" if phase == "input" else None

    def finish(self, ir, phase, lane):
        _Probe.asked.append(self.toolchain)
        return Values.RIGHT if self.toolchain == self.right else Values.WRONG


def test_the_newest_older_release_that_computes_it_right_is_named(monkeypatch):
    toolchain = SimpleNamespace(probe=SimpleNamespace(version="3.13.0rc20261016"))
    monkeypatch.setattr(frontend_probe, "IreeProbe", _Probe)
    monkeypatch.setattr("shapefuzz.iree.releases.cached_versions",
                        lambda say=None: ["3.0.0", "3.6.0", "3.12.0", "3.13.0"])
    monkeypatch.setattr("shapefuzz.iree.releases.install", lambda version: version)
    _Probe.asked = []
    assert conversion_right_elsewhere("x", "llvm-cpu", [], [], toolchain) == "3.6.0"  # type: ignore[arg-type]
    assert _Probe.asked == ["3.12.0", "3.6.0"]  # newest first; the current release never
    _Probe.right = "none"
    assert conversion_right_elsewhere("x", "llvm-cpu", [], [], toolchain) == ""  # type: ignore[arg-type]


@pytest.mark.iree
def test_the_audited_max_pool_is_cleared_by_3_6_0(toolchain):
    from shapefuzz.iree.releases import cached_versions

    if "3.6.0" not in cached_versions():
        pytest.skip("IREE 3.6.0 is not in the toolchain cache (a campaign fetches it for its ranges)")
    got = conversion_right_elsewhere(MAX_POOL, "llvm-cpu", [np.full((1, 1, 1, 1), 26.75, np.float32)],
                                     [np.full((1, 1, 1, 1), 26.75, np.float32)], toolchain)
    assert got == "3.6.0", got
