"""A host-side pass run inside a target's executable translation is placed in that target's codegen (issue
#43, hand audit of a fresh campaign: cause-0849d0a725, an unlowered `math.ctpop` in a vmvx dispatch, read
"IREE stream / HAL lowering")."""

from __future__ import annotations


def test_a_host_pass_inside_a_targets_executable_translation_is_that_targets_codegen():
    # hand audit: vmvx lowers its dispatches with iree-vm-conversion; an unlowered `math.ctpop` there read
    # "IREE stream / HAL lowering"
    from shapefuzz.triage.component import STREAM_HAL, component_of

    output = ("error: failed to legalize operation 'math.ctpop' that was explicitly marked illegal\n"
              "error: conversion to vm.module failed\n"
              "error: failed to run translation of source executable to target executable for backend "
              "#hal.executable.target<\"vmvx\", \"vmvx-bytecode-fb\">")
    assert component_of("compile", "error", "iree-vm-conversion", (), ["vmvx"], output) == "codegen for vmvx"
    assert component_of("compile", "error", "iree-vm-conversion", (), ["vmvx"], "error: failed to legalize") == STREAM_HAL
