"""A suggested title comes from the first error line the compiler printed, never from a `note:` line
before it (audit E of the fresh campaign: cause-adb3be79e3 was titled "iree-vm-conversion fails:
<work>/module.mlir:2:1: note: called from" over "failed to legalize operation 'arith.constant' ... bf16")."""

from shapefuzz.triage.issue import issue_title

FIRST_LINES = ["<work>/module.mlir:2:1: note: called from",
               "<work>/module.mlir:5:11: error: failed to legalize operation 'arith.constant' that was explicitly "
               "marked illegal: %28 = \"arith.constant\"() <{value = 0.000000e+00 : bf16}> : () -> bf16",
               "<work>/module.mlir:5:11: error: conversion to vm.module failed"]


def test_the_title_is_the_first_error_not_a_note():
    meta = {"bug": {"component": "IREE stream / HAL lowering", "failing_pass": "iree-vm-conversion",
                    "first_lines": FIRST_LINES}}
    title = issue_title(meta, "vmvx", "compile", "error", "failed to legalize operation 'arith.constant'")
    assert "note:" not in title and "failed to legalize operation 'arith.constant'" in title, title
