"""An issue text over a reproducer cut down as plain text names the family it was found as, not its op
family (hand audit of a fresh campaign: a lone `arith.trunci` read "op family: topk")."""

from __future__ import annotations

from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status

TRUNC = """func.func @main(%x: tensor<64xi64>) -> tensor<64xi32> {
  %t = arith.trunci %x : tensor<64xi64> to tensor<64xi32>
  return %t : tensor<64xi32>
}
"""


def test_a_cut_reproducer_says_which_family_it_was_found_as(tmp_path):
    from shapefuzz.export import IssueContext, plan, to_issue
    from shapefuzz.iree.toolchain import find_toolchain

    sig = Signature("vulkan-spirv", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'vector.broadcast'")
    path, _ = save_finding(tmp_path, Finding(sig, TRUNC, ("vulkan-spirv",), None, 0, None, None, "3.13.0",
                                             ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], "error: x"))
    from shapefuzz.corpus.entry import CASE_FORM
    from shapefuzz.families import render_case
    from shapefuzz.families.generate import draw_case

    (path / CASE_FORM).write_text(render_case(draw_case("topk", 0, context_share=0.0)))  # the case it was cut from
    update_meta(path, case_form=CASE_FORM)
    text = to_issue(plan(load_entry(path), find_toolchain(None)), IssueContext("IREE 3.13.0", ()), "x.files")
    assert "Found by the shapefuzz fuzzer (found as a topk case, cut down to plain MLIR)" in text, text
    assert "op family: topk" not in text
