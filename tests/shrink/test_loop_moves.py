"""Shrinking across loops (`shrink.loop_moves`): a loop replaced by its first iteration, or by nothing.
An audit cut three shrunk reproducers by hand this way (a `stablehlo.while` around a lone
`shift_right_logical`, an `scf.for` around a lone `math.ctpop`, an i8 `cmpi ult`); the shrinker had no
step across a loop. The real-IREE test shrinks the audited vmvx `math.ctpop` out of its loop."""

from __future__ import annotations

import subprocess

import pytest

from shapefuzz.shrink.loop_moves import unroll_loops

FOR = """func.func @main(%x: tensor<4xi32>, %trips: tensor<i32>) -> tensor<4xi32> {
  %t = tensor.extract %trips[] : tensor<i32>
  %n = arith.index_cast %t : i32 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %result = scf.for %iv = %c0 to %n step %c1 iter_args(%state = %x) -> (tensor<4xi32>) {
    %i = arith.index_cast %iv : index to i32
    %next = math.ctpop %state : tensor<4xi32>
    scf.yield %next : tensor<4xi32>
  }
  return %result : tensor<4xi32>
}
"""

SCF_WHILE = """func.func @main(%x: tensor<4xi32>, %n: i32) -> tensor<4xi32> {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %loop:2 = scf.while (%i0 = %zero, %state0 = %x) : (i32, tensor<4xi32>) -> (i32, tensor<4xi32>) {
    %go = arith.cmpi slt, %i0, %n : i32
    scf.condition(%go) %i0, %state0 : i32, tensor<4xi32>
  } do {
  ^bb0(%i: i32, %state: tensor<4xi32>):
    %next = math.ctpop %state : tensor<4xi32>
    %i1 = arith.addi %i, %one : i32
    scf.yield %i1, %next : i32, tensor<4xi32>
  }
  return %loop#1 : tensor<4xi32>
}
"""

HLO_WHILE = """func.func @main(%x: tensor<1xi64>, %trips: tensor<i32>) -> (tensor<1xi64>) {
  %cst1 = stablehlo.constant dense<0> : tensor<i32>
  %loop2:2 = stablehlo.while(%i = %cst1, %s = %x) : tensor<i32>, tensor<1xi64>
    cond {
      %go = stablehlo.compare LT, %i, %trips, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %ctr = stablehlo.convert %i : (tensor<i32>) -> tensor<i64>
      %splat = stablehlo.broadcast_in_dim %ctr, dims = [] : (tensor<i64>) -> tensor<1xi64>
      %shr = stablehlo.shift_right_logical %s, %splat : tensor<1xi64>
      %cst2 = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %cst2 : tensor<i32>
      stablehlo.return %next, %shr : tensor<i32>, tensor<1xi64>
    }
  return %loop2#1 : tensor<1xi64>
}
"""


def test_an_scf_for_becomes_its_first_iteration_then_nothing():
    once, none = list(unroll_loops(FOR))
    assert "scf." not in once and "%i = arith.index_cast %c0 : index to i32" in once
    assert "%next = math.ctpop %x : tensor<4xi32>" in once and "return %next : tensor<4xi32>" in once
    assert "  %next = math.ctpop" in once.splitlines(keepends=True)[6]  # moved to the function's indentation
    assert "scf." not in none and "ctpop" not in none and "return %x : tensor<4xi32>" in none


def test_an_scf_while_keeps_its_condition_ops_and_forwards_its_initial_values():
    once, none = list(unroll_loops(SCF_WHILE))
    assert "scf." not in once and "%go = arith.cmpi slt, %zero, %n : i32" in once
    assert "%next = math.ctpop %x" in once and "%i1 = arith.addi %zero, %one : i32" in once
    assert "return %next : tensor<4xi32>" in once
    assert "return %x : tensor<4xi32>" in none


def test_a_stablehlo_while_drops_its_condition():
    once, none = list(unroll_loops(HLO_WHILE))
    assert "while" not in once and "cond" not in once and "stablehlo.compare" not in once
    assert "%ctr = stablehlo.convert %cst1" in once and "stablehlo.shift_right_logical %x, %splat" in once
    assert "return %shr : tensor<1xi64>" in once and "stablehlo.return" not in once
    assert "return %x : tensor<1xi64>" in none


def test_a_text_without_a_loop_gives_nothing_and_a_loop_without_results_only_its_first_iteration():
    assert list(unroll_loops("func.func @main(%x: f32) -> f32 {\n  return %x : f32\n}\n")) == []
    bare = ("func.func @main(%m: memref<4xf32>, %v: f32) {\n  %c0 = arith.constant 0 : index\n"
            "  %c4 = arith.constant 4 : index\n  %c1 = arith.constant 1 : index\n"
            "  scf.for %i = %c0 to %c4 step %c1 {\n    memref.store %v, %m[%i] : memref<4xf32>\n  }\n"
            "  return\n}\n")
    (once,) = unroll_loops(bare)
    assert "scf.for" not in once and "memref.store %v, %m[%c0] : memref<4xf32>" in once


@pytest.mark.iree
def test_every_candidate_verifies(toolchain):
    for text in (FOR, SCF_WHILE, HLO_WHILE):
        for candidate in unroll_loops(text):
            done = subprocess.run([str(toolchain.opt_bin), "-", "-o", "/dev/null"], input=candidate, text=True,
                                  capture_output=True)
            assert done.returncode == 0, (candidate, done.stderr)


@pytest.mark.iree
def test_the_shrinker_takes_vmvxs_ctpop_out_of_its_loop(tmp_path, toolchain):
    """vmvx has no VM lowering of `math.ctpop`: the loop around it is no part of the bug."""
    from shapefuzz.shrink.run import shrink_file

    result = shrink_file(str(tmp_path / "loop.mlir"), FOR, toolchain, ("vmvx",), time_limit=120.0)
    shrunk = result.minimized
    assert "math.ctpop" in shrunk and "scf.for" not in shrunk, shrunk
