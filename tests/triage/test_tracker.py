"""Each bug's text is addressed to the tracker that fixes it: torch-mlir's conversions (including its
ONNX lowering), LLVM's own backend passes, IREE for the rest; a target limit or a suspected driver is
not filed at all."""

from __future__ import annotations

from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.component import FRONTEND_ONNX, FRONTEND_TORCH
from shapefuzz.triage.tracker import tracker_of


def test_torch_mlir_conversions_and_its_onnx_lowering_go_to_torch_mlir():
    torch = tracker_of({"bug": {"component": FRONTEND_TORCH, "failing_pass": "convert-torch-to-tmtensor"}})
    assert torch.name == "torch-mlir" and "convert-torch-to-tmtensor" in torch.why and "torch-mlir" in torch.url
    # a wrong value localized in the frontend (the instance-norm decomposition dividing by -1)
    wrong = tracker_of({"bug": {"component": "wrong code for llvm-cpu",
                                "localized": {"frontend": "torch", "phase": "input"}}})
    assert wrong.name == "torch-mlir"
    onnx = tracker_of({"bug": {"component": FRONTEND_ONNX, "failing_pass": "torch-onnx-to-torch"}})
    assert onnx.name == "torch-mlir" and "ONNX lowering" in onnx.why
    importer = tracker_of({"bug": {"component": FRONTEND_ONNX, "failing_pass": ""}})  # iree-import-onnx itself
    assert importer.name == "IREE"


def test_llvm_backend_passes_go_to_llvm_and_iree_passes_stay_with_iree():
    assert tracker_of({"bug": {"component": "compiler (pass unknown)",
                               "frames": ["#7 0x000055d0 llvm::AMDGPULowerBufferFatPointersPass::run(llvm::Module&) x.cpp:0:0"]}
                       }).name == "LLVM"
    assert tracker_of({"bug": {"failing_pass": "AMDGPULowerBufferFatPointers"}}).name == "LLVM"
    assert tracker_of({"bug": {"frames": ["#3 0x1 llvm::SelectionDAGISel::runOnMachineFunction(llvm::MachineFunction&)"]}
                       }).name == "LLVM"
    iree = tracker_of({"bug": {"component": "codegen for SPIR-V (vulkan-llvmpipe)",
                               "failing_pass": "GPUDistributeSharedMemoryCopyPass",
                               "frames": ["#5 0x1 mlir::iree_compiler::GPUDistributeSharedMemoryCopyPass::runOnOperation()",
                                          "#6 0x2 llvm::function_ref<void ()>::callback_fn<...>"]}})
    assert iree.name == "IREE" and iree.filed
    assert tracker_of({}).name == "IREE"


def test_a_hang_inside_llvms_backend_goes_to_iree_whose_code_it_is():
    # hand audit: a ROCm compile that did not finish in SelectionDAG on <31496 x float> vectors IREE made
    frames = [" #4 0x00007f8de3de4316 llvm::SelectionDAG::computeKnownBits(llvm::SDValue, llvm::APInt const&, "
              "unsigned int) const SelectionDAG.cpp:0:0"]
    hang = tracker_of({"status": "timeout", "bug": {"failing_pass": "SerializeTargetExecutablesPass", "frames": frames}})
    assert hang.name == "IREE" and "SelectionDAG::computeKnownBits" in hang.why and "0x" not in hang.why
    crash = tracker_of({"status": "crash", "bug": {"failing_pass": "SerializeTargetExecutablesPass", "frames": frames}})
    assert crash.name == "LLVM" and "(SelectionDAG::computeKnownBits)" in crash.why


def test_target_limits_and_suspected_drivers_are_not_filed():
    limit = tracker_of({"triage": "target limit", "triage_evidence": "SPIR-V has no attention pipeline"})
    assert not limit.filed and "SPIR-V has no attention pipeline" in limit.why
    assert not tracker_of({"triage": "suspected driver"}).filed


def test_the_issue_text_is_addressed_to_its_tracker(tmp_path):
    from shapefuzz.export import IssueContext, plan, to_issue
    from shapefuzz.iree.toolchain import find_toolchain

    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'torch.aten.x'")
    mlir = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    path, _ = save_finding(tmp_path, Finding(sig, mlir, ("llvm-cpu",), None, 0, None, None, "3.13.0",
                                             ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], "error: x"))
    toolchain, context = find_toolchain(None), IssueContext("IREE 3.13.0", ())
    iree = to_issue(plan(load_entry(path), toolchain), context, "x.files")
    assert "<!-- File at: https://github.com/iree-org/iree/issues/new" in iree
    assert "### What component(s) does this issue relate to?" in iree and "For torch-mlir" not in iree
    bug = load_entry(path).meta.get("bug") or {}
    update_meta(path, bug={**bug, "component": FRONTEND_TORCH, "failing_pass": "DecomposeAtenInstanceNormOp"})
    torch = to_issue(plan(load_entry(path), toolchain), context, "x.files")
    assert "<!-- File at: https://github.com/llvm/torch-mlir/issues/new" in torch
    assert "**For torch-mlir**" in torch and "### Where in torch-mlir" in torch
    assert "In the pass `DecomposeAtenInstanceNormOp`" in torch and "What component(s)" not in torch
    update_meta(path, triage="target limit", triage_evidence="a documented target gap")
    limit = to_issue(plan(load_entry(path), toolchain), context, "x.files")
    assert "<!-- Not for filing: a target limit (a documented target gap) -->" in limit
