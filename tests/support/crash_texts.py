"""Shared by the tests (moved out of test_crash_frames_in_issues.py, which other tests imported)."""

from __future__ import annotations

import pytest
from shapefuzz.triage.failing_pass import failing_pass, pass_in_frame
from shapefuzz.triage.issue import TOP_FRAMES, backtrace_lines


SI8_MUL = """func.func @main(%indices: !torch.vtensor<[],si64>) -> !torch.vtensor<[7],si8> {
  %int7 = torch.constant.int 7
  %false = torch.constant.bool false
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %int5 = torch.constant.int 5
  %hot1 = torch.aten.one_hot %indices, %int7 : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[7],si64>
  %hot_c2 = torch.aten.to.dtype %hot1, %int1, %false, %false, %none : !torch.vtensor<[7],si64>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[7],si8>
  %scaled3 = torch.aten.mul.Scalar %hot_c2, %int5 : !torch.vtensor<[7],si8>, !torch.int -> !torch.vtensor<[7],si8>
  return %scaled3 : !torch.vtensor<[7],si8>
}
"""
