"""`shapefuzz onnx-suite --expected FILE`: a lane judged against the expected failures its user keeps,
in the form of IREE's own onnx_ops_<config>.json; `--write-expected` writes this run's; `--ops all`
reaches every op's node tests. The judging over given outcomes (fast), then the command on IREE 3.13
(CumSum is not lowered: a compile failure, as IREE's cpu_llvm_sync list has it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from shapefuzz.errors import InvalidInputError
from shapefuzz.recheck.expected_failures import COMPILE, PASSED, RUN, judge, lists_for, load
from shapefuzz.recheck.onnx_suite import FAIL, PASS, UNSUPPORTED, LaneResult, NodeTest
from shapefuzz.recheck.onnx_suite import TestResult as SuiteResult

LANE = "llvm-cpu"


def _result(name: str, lane: LaneResult) -> SuiteResult:
    return SuiteResult(NodeTest(name, "Op", None, (), ()), lanes={LANE: lane})


PASSES = LaneResult(PASS, "ok")
COMPILED = LaneResult(PASS, "compiled", "compiled; not executed here")
NOT_LOWERED = LaneResult(UNSUPPORTED, "unsupported", "frontend: this release does not lower torch.aten.cumsum",
                         stage="compile")
WRONG = LaneResult(FAIL, "mismatch", "llvm-cpu/compare/mismatch: wrong values", stage="run")
CRASH = LaneResult(FAIL, "crash", "llvm-cpu/compile/crash: SIGSEGV", stage="compile")
NO_NPY = LaneResult(UNSUPPORTED, "io", "bfloat16 tensors do not pass through .npy files to iree-run-module")


def _file(tmp_path, **lists) -> str:
    path = tmp_path / "onnx_ops_cpu_llvm_sync.json"
    path.write_text(json.dumps({"config_name": "cpu_llvm_sync", "iree_compile_flags": ["--iree-hal-target-backends=llvm-cpu"],
                                **lists}))
    return str(path)


def test_a_lane_is_judged_as_ireees_ci_judges_its_lists(tmp_path):
    listed = load(_file(tmp_path, expected_compile_failures=["onnx/node/generated/test_cumsum", "test_gone"],
                        expected_run_failures=["onnx/node/generated/test_resize"],
                        skip_run_tests=["onnx/node/generated/test_flaky"]))
    assert listed.expected("test_cumsum") == COMPILE and listed.expected("test_resize") == RUN
    results = [_result("test_cumsum", NOT_LOWERED),  # as listed
               _result("test_resize", WRONG),  # as listed
               _result("test_conv", CRASH),  # not listed: unexpected
               _result("test_gone", PASSES),  # listed, passes now: the list can drop it
               _result("test_flaky", CRASH),  # skipped by the list
               _result("test_bf16", NO_NPY),  # never tried
               _result("test_pad", COMPILED)]  # compiled, not run here: it passes the compile
    judged = judge(results, LANE, listed)
    assert judged.unexpected == (("test_conv", PASSED, COMPILE),)
    assert judged.newly_passing == (("test_gone", COMPILE),)
    assert (judged.as_expected, judged.skipped, judged.not_judged) == (3, 1, 1) and judged.failed
    # listed to fail at run time, failing to compile now: worse, unexpected
    assert judge([_result("test_resize", CRASH)], LANE, listed).unexpected == (("test_resize", RUN, COMPILE),)
    # listed to fail compiling, compiling and failing at run time now: better than listed, not a failure
    better = judge([_result("test_cumsum", WRONG)], LANE, listed)
    assert not better.failed and better.newly_passing == (("test_cumsum", COMPILE),)


def test_this_runs_failures_are_written_in_the_same_form_keeping_the_rest(tmp_path):
    listed = load(_file(tmp_path, expected_compile_failures=["onnx/node/generated/test_not_run_now"],
                        skip_compile_tests=["onnx/node/generated/test_skip"],
                        expected_run_failures=["onnx/node/generated/test_gpu_only"]))
    written = lists_for([_result("test_cumsum", NOT_LOWERED), _result("test_resize", WRONG),
                         _result("test_abs", PASSES), _result("test_gpu_only", COMPILED)], LANE, listed)
    assert written["config_name"] == "cpu_llvm_sync" and written["iree_compile_flags"]
    assert written["expected_compile_failures"] == ["onnx/node/generated/test_cumsum",
                                                    "onnx/node/generated/test_not_run_now"]
    # compiled but not run here: its run failure stays listed
    assert written["expected_run_failures"] == ["onnx/node/generated/test_gpu_only", "onnx/node/generated/test_resize"]
    assert written["skip_compile_tests"] == ["onnx/node/generated/test_skip"]
    assert load(_file(tmp_path, **{k: v for k, v in written.items() if k != "config_name"})).compile_failures == \
        {"test_cumsum", "test_not_run_now"}


@pytest.mark.parametrize("text, fragment", [
    ("not json", "not a JSON file"),
    ("[1, 2]", "not a JSON object"),
    ('{"expected_compile_failures": "test_x"}', "'expected_compile_failures' is not a list"),
])
def test_a_bad_list_file_is_one_line(tmp_path, text, fragment):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InvalidInputError, match=fragment) as error:
        load(path)
    assert "\n" not in str(error.value)
    run = subprocess.run([sys.executable, "-m", "shapefuzz", "onnx-suite", "--ops", "Abs", "--backends", LANE,
                          "--expected", str(path)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, fragment", [
    (["--backends", "llvm-cpu,vmvx", "--expected", "LIST"], "judge one lane"),
    (["--backends", LANE, "--write-expected", "/nonexistent/folder/now.json"], "no such folder to write it into"),
])
def test_the_lists_judge_one_lane_and_are_written_where_a_folder_is(tmp_path, args, fragment):
    args = [_file(tmp_path) if a == "LIST" else a for a in args]
    run = subprocess.run([sys.executable, "-m", "shapefuzz", "onnx-suite", "--ops", "Abs", *args],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and fragment in run.stderr and "Traceback" not in run.stderr
    assert "test_abs" not in run.stderr  # refused before any test ran


def test_every_ops_node_tests_are_reached_with_ops_all():
    from shapefuzz.recheck.onnx_suite import collect

    tests = collect(["all"])
    ops = {t.op for t in tests}
    assert len(tests) > 1000 and {"Conv", "CumSum", "Resize", "Slice", "MatMulInteger"} <= ops
    assert not any(t.name.endswith("_expanded") for t in tests)


@pytest.mark.iree
def test_the_command_exits_one_only_for_what_the_list_does_not_expect(tmp_path):
    listed = _file(tmp_path, expected_compile_failures=["onnx/node/generated/test_cumsum_1d"])
    argv = [sys.executable, "-m", "shapefuzz", "onnx-suite", "--ops", "CumSum,Abs", "--tests", "test_cumsum_1d,test_abs",
            "--backends", LANE, "--no-confirm"]
    run = subprocess.run([*argv, "--expected", listed, "--write-expected", str(tmp_path / "now.json")],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 as expected, 0 unexpected" in run.stdout
    assert json.loads((tmp_path / "now.json").read_text())["expected_compile_failures"] == \
        ["onnx/node/generated/test_cumsum_1d"]
    # an empty list: CumSum not lowered is a failure it does not expect
    run = subprocess.run([*argv, "--expected", _file(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "unexpected: test_cumsum_1d: expected pass, got compile failure" in run.stdout


@pytest.mark.iree
def test_a_node_test_with_an_optional_at_its_boundary_is_unsupported_not_the_end_of_the_run(toolchain):
    """`--ops all` reaches OptionalHasElement, whose imported function takes a `!torch.optional`: the
    sweep had stopped there with one line, every result before it lost."""
    from shapefuzz.invoke.execute import DEFAULT_BUDGET
    from shapefuzz.recheck.onnx_suite import collect, run_test

    test = next(t for t in collect(["OptionalHasElement"]) if t.name == "test_optional_has_element_tensor_input")
    result = run_test(test, (LANE,), toolchain, DEFAULT_BUDGET, confirm=False)
    assert result.lanes[LANE].outcome == UNSUPPORTED and "not plain tensors" in result.lanes[LANE].why
