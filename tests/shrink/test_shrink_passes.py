"""The shrinker's passes and measures on MLIR text; candidates checked with the real iree-opt
(one batched call per test), never compiled."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from shapefuzz.case import case_from_mlir
from shapefuzz.invoke.execute import verify_many
from shapefuzz.shrink import mlirtext as M
from shapefuzz.shrink.engine import Pass, Problem
from shapefuzz.size import measure, sort_key
from shapefuzz.shrink.params import shrink_params
from shapefuzz.cli.params import Duration
from shapefuzz.shrink.run import default_output
from shapefuzz.errors import UsageError

DATA = Path(__file__).resolve().parents[1] / "data"
BIG = (DATA / "shrink_conv1d_big.mlir").read_text()


def test_measure_counts_what_a_bug_report_cares_about():
    m = measure(BIG)
    assert m.ops == 21 and m.max_rank == 3 and m.dynamic_dims == 1
    assert m.lines == 30  # comments not counted
    small = measure((DATA / "conv1d_stride3.mlir").read_text())
    assert small.elements < m.elements and small.dynamic_dims == 0
    # '?' counts as 1 element; then fewer ops; then shorter text
    assert sort_key("func.func @f(%a: tensor<?x4xf32>)") < sort_key("func.func @f(%a: tensor<2x4xf32>)")


def test_statements_group_continuation_lines_and_regions():
    lines = BIG.splitlines(keepends=True)
    (func,) = M.functions(lines)
    stmts = M.statements(lines, func)
    by_name = {s.results[0]: s for s in stmts if s.results}
    assert by_name["%conv"].end - by_name["%conv"].start == 3
    assert by_name["%bias2"].end - by_name["%bias2"].start == 6  # the region belongs to the op
    assert "%d" not in by_name and "%m" not in by_name


@pytest.mark.iree
def test_structure_passes_propose_verifying_candidates(toolchain):
    candidates = []
    for fn in (M.drop_results, M.drop_unused_ops, M.strip_comments):
        got = list(fn(BIG))
        assert got, fn.__name__
        candidates += got
    verdicts = verify_many(candidates, toolchain)
    assert sum(v is None for v in verdicts) >= len(candidates) - 1, [v for v in verdicts if v][:2]
    # dropping every unused op at once comes first
    first = next(M.drop_unused_ops(BIG))
    assert "%unused_fill" not in first and "%neg" not in first and "%c1 =" not in first
    # once a result is gone, its argument is unused and can go too
    fewer = next(c for c in M.drop_results(BIG) if "return %conv, %bias2 :" in c)
    for _ in range(5):
        fewer = next(M.drop_unused_ops(fewer), fewer)
    no_arg = list(M.drop_unused_args(fewer))
    assert no_arg and "%extra" not in no_arg[0] and verify_many(no_arg, toolchain) == [None] * len(no_arg)


@pytest.mark.iree
def test_shrink_dims_changes_a_size_everywhere_at_once(toolchain):
    candidates = list(M.shrink_dims(BIG))
    forty_to_one = [c for c in candidates if "tensor<7x24x1xf32>" in c and "tensor<1xf32>" in c]
    assert forty_to_one and all("x40x" not in c and "<40x" not in c for c in forty_to_one)
    assert any(v is None for v in verify_many(forty_to_one, toolchain))
    # the case header and comments are never rewritten
    assert all(c.splitlines()[0] == BIG.splitlines()[0] for c in candidates)


def test_static_dims_and_attribute_passes():
    text = "func.func @f(%a: tensor<?x5xf32>) -> tensor<?x5xf32> {\n  return %a : tensor<?x5xf32>\n}\n"
    assert any("tensor<1x5xf32>" in c and "?" not in c for c in M.static_dims(text))
    conv = "  %x = linalg.conv {dilations = dense<2> : tensor<1xi64>, strides = dense<[3, 3]> : tensor<2xi64>}\n"
    got = list(M.simplify_attrs(conv))
    assert any("dilations = dense<1>" in c for c in got) and any("strides = dense<1>" in c for c in got)
    pad = "  %p = tensor.pad %a low[0, 2] high[1, %h] {\n"
    assert any("low[0, 0]" in c for c in M.simplify_attrs(pad))
    assert any("high[0, %h]" in c for c in M.simplify_attrs(pad))


@pytest.mark.iree
def test_bypass_replaces_an_op_by_an_operand(toolchain):
    text = (
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %e = tensor.empty() : tensor<4xf32>\n"
        "  %n = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>\n"
        "  return %n : tensor<4xf32>\n}\n"
    )
    cands = list(M.bypass_ops(text))
    good = [c for c, v in zip(cands, verify_many(cands, toolchain)) if v is None]
    assert any("linalg.negf" not in c and "return %a" in c for c in good)


@pytest.mark.iree
def test_parameter_pass_rerenders_smaller_cases(toolchain):
    from shapefuzz.families import render_case
    from shapefuzz.families.generate import draw_case

    # the first draw spelled in linalg (a torch/ONNX spelling has no iree_linalg_ext.topk to keep)
    text = next(t for t in (render_case(draw_case("topk", seed)) for seed in range(3, 60))
                if "iree_linalg_ext.topk" in t)
    case = case_from_mlir(text)
    candidates = list(shrink_params(text))
    assert candidates and all(case_from_mlir(c) is not None for c in candidates)
    assert any(sort_key(c) < sort_key(text) for c in candidates)
    # a pure-Python predicate: "still a topk op on a rank-2+ input"; the params shrink to it
    def interesting(t: str) -> bool:
        return "iree_linalg_ext.topk" in t and len(case_from_mlir(t).params["shape"]) >= 2

    problem = Problem(text, interesting, sort_key,
                      prefilter=lambda ts: [v is None for v in verify_many(list(ts), toolchain)])
    best = problem.run([[Pass("shrink_params", shrink_params)]])
    params = case_from_mlir(best).params
    assert params["shape"] == [1, 1] or measure(best).elements < measure(text).elements // 10
    assert params["k"] == 1 and case.params != params


def test_param_shrinking_proposes_only_the_familys_own_candidates():
    from shapefuzz.families import get_family, render_case
    from shapefuzz.families.generate import draw_case

    case = draw_case("conv_transpose", 3)
    family = get_family("conv_transpose")
    proposed = [family.load(case_from_mlir(t).params) for t in shrink_params(render_case(case))]
    assert proposed and all(p in family.shrink_candidates(case.params) for p in proposed)


def test_durations_and_output_names():
    duration = Duration().convert  # the one `--time` type of fuzz and shrink
    assert duration("90s", None, None) == 90 and duration("5m", None, None) == 300 and duration("2", None, None) == 2
    assert duration("1h30m", None, None) == 5400 and duration("none", None, None) is None
    with pytest.raises(click.UsageError, match="--time 'soon': not a duration"):
        duration("soon", None, None)
    assert default_output("a/crash.mlir") == "a/crash.min.mlir"
