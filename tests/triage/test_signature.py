from shapefuzz.model import ProcessResult, Stage, Status
from shapefuzz.triage.signature import classify, first_error_line, normalize, signature_for


def _result(stderr: str, returncode: int | None = 1, signal: int | None = None) -> ProcessResult:
    return ProcessResult(("iree-compile",), returncode, signal, False, False, "", stderr, 0.1)


def test_same_bug_through_different_shapes_and_names_shares_a_signature():
    a = "/tmp/x/module.mlir:7:11: error: 'linalg.generic' op inferred input/output operand #2 has shape's dimension #1 to be 32, but found 16"
    b = "/home/u/big.mlir:120:3: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2"
    sa = signature_for("rocm-gfx942", Stage.COMPILE, Status.ERROR, _result(a))
    sb = signature_for("rocm-gfx942", Stage.COMPILE, Status.ERROR, _result(b))
    assert sa == sb


def test_shapes_ssa_names_and_dispatches_are_folded():
    text = "error: failed to legalize %arg0 of type tensor<4x?x8xf32> in @main_dispatch_12_matmul_4x8 at 0x7ffee"
    assert normalize(first_error_line(text)) == "failed to legalize %_ of type tensor<NxNxNxf32> in @dispatch at <addr>"


def test_a_dim_ending_in_zero_is_no_address():
    # `0xf32` in `10xf32`, `0x21` in a dispatch named for a 60x21 conv: a shape, folded as one (it had made
    # `1<addr>` and three causes of one conv's shared-memory bug on rocm-gfx942-single-dispatch)
    assert normalize("tensor<10xf32> vs tensor<12xf32>") == "tensor<Nxf32> vs tensor<Nxf32>"
    shared = "function '{}' uses 90112 bytes of shared memory; exceeded the limit of 65536 bytes"
    names = ("main_dispatch_0_conv_60x21x2x16x5_f32", "main_dispatch_0_conv_64x18x16x5_f32",
             "main$async_dispatch_1_conv_60x22x16x5_f32")
    assert len({normalize(shared.format(name)) for name in names}) == 1
    assert normalize("#3 0x000055d5 in foo, at 0x7ffee") == "#N <addr> in foo, at <addr>"


def test_element_types_are_kept():
    assert normalize("tensor<4x8xi8> vs tensor<4x8xf16>") == "tensor<NxNxi8> vs tensor<NxNxf16>"


def test_different_messages_stay_apart():
    a = signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR, _result("x.mlir:1:1: error: failed to legalize operation 'foo'"))
    b = signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR, _result("x.mlir:1:1: error: failed to legalize operation 'bar'"))
    assert a != b


def test_backend_and_stage_are_part_of_the_signature():
    r = _result("error: boom")
    assert signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR, r) != signature_for("vmvx", Stage.COMPILE, Status.ERROR, r)
    assert signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR, r) != signature_for("llvm-cpu", Stage.RUN, Status.ERROR, r)


def test_fatal_error_after_an_ordinary_error_names_the_fatal_one():
    text = "m.mlir:3:4: error: some diagnostic\nLLVM ERROR: can't create Attribute 'foo'\n"
    assert first_error_line(text).startswith("LLVM ERROR")
    assert classify(_result(text, returncode=1)) == Status.CRASH


def test_crash_signature_uses_signal_and_top_frame():
    stack = (
        "Stack dump:\n"
        " #0 0x00007f1 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)\n"
        " #1 0x00007f2 SignalHandler(int)\n"
        " #2 0x00007f3 mlir::iree_compiler::foldCollapseIntoStore(mlir::Operation*)\n"
    )
    sig = signature_for("vulkan-spirv", Stage.COMPILE, Status.CRASH, _result(stack, returncode=None, signal=11))
    assert "SIGSEGV" in sig.message and "mlir::iree_compiler::foldCollapseIntoStore" in sig.message


def test_runtime_status_line_is_used():
    text = "iree/runtime/src/iree/hal/drivers/vulkan/foo.cc:123: RESOURCE_EXHAUSTED; failed to allocate 4096 bytes"
    assert first_error_line(text).startswith("RESOURCE_EXHAUSTED")


def test_classify_statuses():
    assert classify(_result("", returncode=0)) == Status.OK
    assert classify(_result("error: x", returncode=1)) == Status.ERROR
    assert classify(_result("", returncode=None, signal=6)) == Status.CRASH
    timed = ProcessResult(("x",), None, None, True, False, "", "", 1.0)
    assert classify(timed) == Status.TIMEOUT
