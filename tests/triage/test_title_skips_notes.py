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


def test_a_checkers_refusal_placed_at_its_maker_says_the_maker_made_it():
    """The fresh campaign re-triaged: "iree-codegen-iree-comprehensive-bufferize (codegen) fails: function ... uses
    99876 bytes of shared memory" for a failure bufferization did not have: it made the buffer the checker refuses."""
    from shapefuzz.triage.localize import CODEGEN, Localization

    bufferize = "iree-codegen-iree-comprehensive-bufferize"
    placed = Localization(CODEGEN, bufferize, seconds=0.4, certain=True,
                          evidence=f"the IR first holds workgroup (shared) memory over the 65536-byte limit after {bufferize}")
    meta = {"bug": {"component": "codegen for ROCm (rocm-gfx942)", "failing_pass": bufferize,
                    "identity": "compile/error [iree-codegen-gpu-check-resource-usage]: function 'dispatch' uses N bytes",
                    "localized": placed.to_json(),
                    "first_lines": ["<work>/module.mlir:3:1: error: function 'main_dispatch_0' uses 99876 bytes of shared "
                                    "memory; exceeded the limit of 65536 bytes"]}}
    title = issue_title(meta, "rocm-gfx942", "compile", "error", "function 'dispatch' uses N bytes")
    assert title.startswith(f"[codegen for ROCm (rocm-gfx942)] {bufferize} makes what "
                            "iree-codegen-gpu-check-resource-usage refuses: function 'main_dispatch_0' uses 99876"), title


def test_the_maker_title_holds_for_the_record_a_campaign_writes():
    """The same, from the `bug` record `bug_record` writes: its identity names the maker once placed, so
    the checker is read from the kept output's IR-dump header (the title had said "... (codegen) fails")."""
    from shapefuzz.triage.localize import CODEGEN, Localization
    from shapefuzz.triage.record import bug_record

    bufferize = "iree-codegen-iree-comprehensive-bufferize"
    detail = ("<work>/module.mlir:3:1: error: function 'main_dispatch_0' uses 99876 bytes of shared memory; exceeded "
              "the limit of 65536 bytes\n"
              "// -----// IR Dump After GPUCheckResourceUsagePass Failed: iree-codegen-gpu-check-resource-usage //----- //\n")
    message = "function '<dispatch>' uses N bytes of shared memory; exceeded the limit of N bytes"
    bug = bug_record({"backend": "rocm-gfx942", "stage": "compile", "status": "error", "message": message}, detail,
                     ["rocm-gfx942"], "", Localization(CODEGEN, bufferize, certain=True, evidence="traced"))
    title = issue_title({"bug": bug, "detail": detail}, "rocm-gfx942", "compile", "error", message)
    assert f"{bufferize} makes what iree-codegen-gpu-check-resource-usage refuses: function 'main_dispatch_0'" in title, title


def test_a_long_title_is_cut_at_a_words_end():
    from shapefuzz.triage.issue import TITLE_CHARS, issue_title

    message = ("'linalg.generic' op inferred input/output operand #0 has shape's dimension #0 to be greater than "
               "or equal to 3, but found 1, in 'linalg.generic' op inferred input/output operand #1 has shape's "
               "dimension #2 to be greater than or equal to 5, but found 2")
    meta = {"bug": {"component": "codegen for CUDA (cuda-sm80), ROCm (rocm-gfx942)",
                    "failing_pass": "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op"}}
    title = issue_title(meta, "rocm-gfx942", "compile", "error", message)
    assert len(title) <= TITLE_CHARS and title.endswith("…"), title
    assert title[:-1].split()[-1] in message.split(), title  # a whole word before the ellipsis


def test_a_long_maker_title_keeps_the_whole_message_and_names_the_maker_after_it():
    """An audit read titles of a checker's refusal placed at its maker cut inside the message ("... write
    affecting…"): over the bound, the refuser (which the text names) goes, never the message's words."""
    from shapefuzz.triage.issue import TITLE_CHARS
    from shapefuzz.triage.localize import CODEGEN, Localization

    tile = "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op"
    said = ("'vector.transfer_write' op write affecting operations on global resources are restricted to workgroup "
            "distributed contexts")
    meta = {"bug": {"component": "codegen for ROCm (rocm-gfx942)", "failing_pass": tile,
                    "identity": "compile/error [iree-codegen-gpu-verify-distribution]: 'vector.transfer_write' op",
                    "localized": Localization(CODEGEN, tile, certain=True, evidence="traced").to_json(),
                    "first_lines": [f"<work>/module.mlir:3:1: error: {said}"]}}
    title = issue_title(meta, "rocm-gfx942", "compile", "error", "'vector.transfer_write' op write affecting")
    assert title == f"[codegen for ROCm (rocm-gfx942)] {said} (IR made by {tile})" and len(title) <= TITLE_CHARS


def test_a_crash_title_names_the_fatal_error_or_the_function_never_a_raw_frame():
    # an audit read five crash titles cut inside a raw frame ("...::matchAndRewrite(mlir::torch::To")
    from shapefuzz.triage.issue import crash_words

    assert crash_words("SIGSEGV in mlir::torch::(anonymous namespace)::ConvertAtenIndexPutHackedTwinOp::matchAndRewrite") \
        == "SIGSEGV in ConvertAtenIndexPutHackedTwinOp::matchAndRewrite"
    assert crash_words("SIGABRT in __pthread_kill_implementation LLVM ERROR: Do not know how to promote this operator!") \
        == "LLVM ERROR: Do not know how to promote this operator!"
    said = crash_words("SIGSEGV in mlir::detail::OperandStorage::OperandStorage unimplemented: for conversion to byte "
                       "or char type dstOriginalDtype has to be passed to convertScalarToDtype")
    assert said.startswith("SIGSEGV in OperandStorage::OperandStorage: unimplemented: for conversion")
    meta = {"bug": {"component": "IREE dispatch creation", "failing_pass": "AnnotateDispatchesPass",
                    "frames": [" #4 0x00007f963937b5a3 mlir::AffineExpr::getKind() const AffineExpr.cpp:0:0"]}}
    title = issue_title(meta, "cuda-sm80", "compile", "crash", "SIGSEGV in mlir::AffineExpr::getKind")
    assert title == "[IREE dispatch creation] crash in AnnotateDispatchesPass: SIGSEGV in AffineExpr::getKind"


def test_a_crash_signature_cut_at_an_anonymous_namespace_is_titled_by_its_frame():
    # the signature kept "SIGSEGV in mlir::torch::"; the title read "SIGSEGV in torch::"
    frames = [" #4 0x00007f mlir::torch::(anonymous namespace)::ConvertAtenIndexPutHackedTwinOp::matchAndRewrite("
              "mlir::torch::Torch::AtenIndexPutHackedTwinOp) const TorchToTMTensor.cpp:0:0"]
    meta = {"bug": {"component": "frontend: torch-mlir conversion", "failing_pass": "ConvertTorchToTMTensor",
                    "frames": frames}}
    title = issue_title(meta, "llvm-cpu", "compile", "crash", "SIGSEGV in mlir::torch::")
    assert title.endswith("crash in ConvertTorchToTMTensor: SIGSEGV in ConvertAtenIndexPutHackedTwinOp::matchAndRewrite"), title


def test_a_title_leaves_out_the_op_its_message_prints_whole():
    """An audit read "... explicitly marked illegal: %108 = "linalg.generic"(%98, ...) <{indexing_maps = [affine_map<(d0,
    d1, d2, d3, d4, d5, d6…", and `%19 = "math.ctpop"(%18) : (i32) -> i32` as raw IR: the printed op goes
    (the message names it)."""
    from shapefuzz.triage.issue import TITLE_CHARS

    maps = ", ".join(["affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2)>"] * 3)
    long = ("failed to legalize operation 'linalg.generic' that was explicitly marked illegal: %108 = \"linalg.generic\""
            f"(%98, %102, %107) <{{indexing_maps = [{maps}]}}> : (tensor<1xf32>) -> tensor<1xf32>")
    meta = {"bug": {"component": "codegen for llvm-cpu", "failing_pass": "iree-codegen-materialize-device-encoding"}}
    title = issue_title(meta, "llvm-cpu", "compile", "error", long)
    assert title.endswith("fails: failed to legalize operation 'linalg.generic' that was explicitly marked illegal")
    assert len(title) <= TITLE_CHARS
    short = ("failed to legalize operation 'vector.broadcast' that was explicitly marked illegal: %8 = "
             "\"vector.broadcast\"(%7) : (i64) -> vector<1xi64>")
    assert issue_title(meta, "vulkan-spirv", "compile", "error", short).endswith(
        "failed to legalize operation 'vector.broadcast' that was explicitly marked illegal")  # (raw IR, even short)
