"""Severity as impact (issue 31, item 6): wrong values > a shape miscompiled at run time > crash >
compile error > resource limit; an absurd size for a small input is a sizing bug ranked above
compile errors; the scope ("only with <flag>") is a column of its own, never a severity. Messages
below are IREE 3.13's (and 3.2's for the unbounded stack allocation)."""

from __future__ import annotations

from shapefuzz.corpus import rebuild_index
from shapefuzz.triage.component import RUNTIME, component_of, scope_of
from shapefuzz.triage.record import bug_record
from shapefuzz.triage.severity import Severity, severity_of, severity_rank

STACK = ("m.mlir:3:8: error: 'func.func' op exceeded stack allocation limit of 32768 bytes for function. "
         "Got {} bytes")
OUT_OF_RANGE = ("iree/runtime/src/iree/hal/buffer.c:146: OUT_OF_RANGE; attempted to access an address range "
                "> buffer allocation size")


def test_impact_order():
    order = [
        severity_of("compare", "mismatch", "wrong values in pool"),
        severity_of("run", "error", "OUT_OF_RANGE; attempted to access an address range", OUT_OF_RANGE),
        severity_of("run", "crash", "SIGSEGV"),
        severity_of("compile", "crash", "SIGSEGV"),
        severity_of("compile", "error", "'func.func' op exceeded stack allocation limit of N bytes for function. "
                    "Got N bytes", STACK.format(36028797018963960)),
        severity_of("compile", "error", "failed to legalize operation 'arith.constant'"),
        severity_of("compile", "error", "'func.func' op exceeded stack allocation limit of N bytes for function. "
                    "Got N bytes", STACK.format(65536)),
    ]
    assert [s.label for s in order] == ["wrong values", "miscompiled shape", "runtime crash", "compiler crash",
                                        "sizing bug", "compile error", "resource limit"]
    assert order == sorted(order)


def test_the_2_53_bound_in_its_many_words_is_a_sizing_bug():
    for message, detail in (
        ("'memref.alloca' op expected no unbounded stack allocations", "memref<1x9007199254740991xf16>"),
        ("'memref.alloc' op shared memory allocation size overflows N bits", "size overflows 64 bits"),
        ("RESOURCE_EXHAUSTED; allocation failed", "requested allocation of 36028797018963968 bytes"),
    ):
        assert severity_of("compile", "error", message, detail) == Severity.SIZING_BUG, message
    # a blow-up on an 8-element module is a bug; on a large one, a limit
    assert severity_of("compile", "oom", "out of memory", "", elements=8) == Severity.SIZING_BUG
    assert severity_of("compile", "oom", "out of memory", "", elements=10**8) == Severity.RESOURCE_LIMIT


def test_scope_is_a_column_not_a_severity():
    """A crash seen only on a pipeline variant is still a crash (it used to rank as "needs flag",
    below every compile error); the flag is in the scope."""
    record = bug_record({"backend": "llvm-cpu-single-dispatch", "stage": "compile", "status": "crash",
                         "message": "SIGSEGV"}, "Stack dump:\n #0 0x1 foo() a.cpp:0:0\n", ["llvm-cpu-single-dispatch"])
    assert record["severity"] == "compiler crash"
    assert record["scope"] == scope_of(["llvm-cpu-single-dispatch"]) and record["scope"].startswith("only with")
    assert severity_rank("needs flag") == len(Severity)  # an old record still reads, last


def test_a_run_time_failure_from_a_miscompiled_shape_is_not_the_runtime():
    lanes = ["llvm-cpu"]
    assert not component_of("run", "error", "", (), lanes, OUT_OF_RANGE).startswith(RUNTIME)
    assert component_of("run", "error", "", (), lanes, "UNAVAILABLE; device lost").startswith(RUNTIME)


def test_the_index_has_a_scope_column(tmp_path):
    from shapefuzz.corpus import Finding, save_finding
    from shapefuzz.model import Signature, Stage, Status

    sig = Signature("llvm-cpu-single-dispatch", Stage.COMPILE, Status.CRASH, "SIGSEGV")
    finding = Finding(sig, "func.func @main() {\n  return\n}\n", ("llvm-cpu-single-dispatch",), None, 0, None, None,
                      "3.13.0", ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"],
                      "Stack dump:\n #0 0x1 foo() a.cpp:0:0\n")
    save_finding(tmp_path, finding)
    index = rebuild_index(tmp_path).read_text()
    assert "| scope |" in index and "| compiler crash | only with" in index


def test_the_dynamic_size_sentinel_in_a_dumped_op_is_not_a_size():
    """A 3.13 dump after a failing pass prints `?` sizes as -9223372036854775808 (kDynamic): a
    plain compile error that dumps such an op is not a sizing bug; a real 2^55-byte count is."""
    dump = ("error: slice along dimension 1 runs out-of-bounds: 3 >= 2\n"
            "%1 = tensor.extract_slice %0[0, 0] [1, -9223372036854775808] [1, 1]")
    assert severity_of("compile", "error", "slice along dimension N runs out-of-bounds: N >= N", dump) \
        == Severity.COMPILE_ERROR
    assert severity_of("compile", "error", "value evaluated as N is out of range.",
                       "error: value evaluated as 36028797018963968 is out of range.") == Severity.SIZING_BUG


def test_a_stack_address_in_a_crash_is_not_a_size():
    """A crash's stack prints addresses such as `0x0005555555555555`: the digits after `0x` read
    as a 13-digit dim once made it a sizing bug; a dim between `x`s of a shaped type still is one."""
    stack = ("PLEASE submit a bug report\n #0 0x0005555555555555 llvm::sys::PrintStackTrace\n"
             " #1 0x5555555555555 (/lib/libIREECompiler.so+0x1234)")
    assert severity_of("compile", "crash", "Assertion failed", stack) == Severity.COMPILER_CRASH
    assert severity_of("compile", "error", "failed to legalize",
                       "memref<1x36028797018963968xf32>") == Severity.SIZING_BUG
