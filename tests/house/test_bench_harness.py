"""bench/harness.py, the maintained benchmarks' shared harness (no IREE needed): the figures table
says which goal is met, `--json` writes the figures, the machine and the details (to a file, or
alone on stdout), and `Interleaved` alternates which way runs first and takes its ratios right."""

from __future__ import annotations

import json

import pytest

from support.bench_modules import harness as load_harness

harness = load_harness()


@pytest.fixture(autouse=True)
def no_probe(monkeypatch):
    # the header names the IREE version through the toolchain probe: not this test's business
    monkeypatch.setattr(harness, "iree_version", lambda: "9.9.9-test")


def test_the_table_says_which_goal_is_met():
    figures = harness.Figures()
    figures.add("sandboxed / direct", 1.012, "x", "<= 1.05")
    figures.add("head capacity", 4200, "/min", ">= 5000")
    figures.add("candidates", 31)
    figures.add("causes set apart", "none")
    lines = figures.table().splitlines()
    assert lines[0].split() == ["figure", "value", "unit", "goal", "met"]
    assert lines[1].split()[-5:] == ["1.012", "x", "<=", "1.05", "yes"]
    assert lines[2].split()[-5:] == ["4200", "/min", ">=", "5000", "NO"]
    assert lines[3].split()[-1] == "31" and lines[4].split()[-1] == "none"  # no goal: no verdict
    assert [f.met for f in figures.rows] == [True, False, None, None]
    assert harness.Figure("resume CPU", 5.0, "s", "< 5").met is False  # strict bounds are strict
    assert harness.Figure("cut short", 0, "", "<= 0").met is True


def test_a_malformed_goal_is_refused_when_the_figure_is_made():
    with pytest.raises(ValueError, match="goal"):
        harness.Figure("ratio", 1.0, "x", "at most 1.05")


def test_json_to_a_file_keeps_the_figures_the_machine_and_the_details(tmp_path, capsys):
    out = tmp_path / "figures.json"
    args = harness.parser("A benchmark.").parse_args(["--json", str(out)])
    with harness.session(args, "bench_test") as report:
        print("a detail line")
        report.figures.add("with / without", 0.98, "x", "<= 1.05")
        report.details = {"samples": [1.0, 2.0]}
    text = capsys.readouterr().out
    assert text.startswith("machine: ") and "IREE 9.9.9-test" in text.splitlines()[0]
    assert "a detail line" in text and "with / without" in text and f"figures written to {out}" in text
    data = json.loads(out.read_text())
    assert data["benchmark"] == "bench_test" and data["details"] == {"samples": [1.0, 2.0]}
    assert data["figures"] == [{"name": "with / without", "value": 0.98, "unit": "x", "goal": "<= 1.05", "met": True}]
    assert data["machine"]["iree"] == "9.9.9-test" and data["machine"]["cores"] >= 1
    assert set(data["machine"]) >= {"cores", "load", "iree", "commit", "shapefuzz", "when"}


def test_json_without_a_file_is_alone_on_stdout(capsys):
    args = harness.parser("A benchmark.").parse_args(["--json"])
    with harness.session(args, "bench_test") as report:
        print("a detail line")
        report.figures.add("candidates/min", 55.5, "/min")
    captured = capsys.readouterr()
    assert json.loads(captured.out)["figures"][0]["value"] == 55.5  # stdout parses whole
    assert "a detail line" in captured.err and captured.err.startswith("machine: ")


def test_no_table_and_no_json_when_the_benchmark_fails(tmp_path, capsys):
    out = tmp_path / "figures.json"
    args = harness.parser("A benchmark.").parse_args(["--json", str(out)])
    with pytest.raises(RuntimeError), harness.session(args, "bench_test") as report:
        report.figures.add("half done", 1.0)
        raise RuntimeError("the compiler went away")
    assert not out.exists() and "half done" not in capsys.readouterr().out


def test_the_parser_describes_with_the_docstring_and_keeps_the_benchmarks_options(capsys):
    parser = harness.parser("What it measures.\n\n    bench/x.py --calls 3\n")
    parser.add_argument("--calls", type=int, default=30)
    assert parser.parse_args([]).json is None and parser.parse_args(["--calls", "3"]).calls == 3
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "What it measures." in shown and "    bench/x.py --calls 3" in shown and "--json [FILE]" in shown


def test_interleaving_alternates_which_way_runs_first():
    order: list[str] = []
    pair = harness.Interleaved("plain", "logged")

    def way(name: str, value: float):
        return lambda: order.append(name) or value

    for plain, logged in ((1.0, 1.5), (2.0, 2.0), (1.0, 3.0), (4.0, 5.0)):
        assert pair.measure(way("plain", plain), way("logged", logged)) == (plain, logged)
    assert order == ["logged", "plain", "plain", "logged", "logged", "plain", "plain", "logged"]
    assert pair.first == [1.0, 2.0, 1.0, 4.0] and pair.second == [1.5, 2.0, 3.0, 5.0] and len(pair) == 4
    assert pair.ratio() == pytest.approx(11.5 / 8.0)  # sums: the cost over everything measured
    assert pair.median_ratio() == pytest.approx(2.5 / 1.5)
    assert pair.pair_ratios() == pytest.approx([1.5, 1.0, 3.0, 1.25])
    assert pair.pair_median() == pytest.approx((1.25 + 1.5) / 2)
    assert pair.to_json() == {"plain": pair.first, "logged": pair.second}


def test_rotated_turns_take_every_way_first_in_turn():
    arms = ["guided", "unguided", "plain"]
    assert [harness.rotated(arms, i)[0] for i in range(4)] == ["guided", "unguided", "plain", "guided"]
    assert harness.rotated(arms, 1) == ["unguided", "plain", "guided"]
