"""Compile here, run there (`shapefuzz bundle`, `bundle-run`, `bundle-judge`), with the real
compiler and runtime: a CUDA bundle is built here (no GPU needed to compile for one), and the
runner is tried on an llvm-cpu bundle with this machine's runtime, in a Python that cannot import
the compiler, Hypothesis, click or our families (what the GPU machine has)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shapefuzz.case import case_from_mlir
from support.bundle_cli import shapefuzz  # noqa: F401

pytestmark = pytest.mark.iree
OPS = ["--ops", "reduce,one_hot,matmul", "--seed", "1", "--n", "3", "-j", "1"]


def _built(tmp_path_factory, target: str) -> Path:
    out = tmp_path_factory.mktemp(target) / "bundle"
    done = shapefuzz("bundle", "--target", target, *OPS, "--out", out)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def cuda_bundle(tmp_path_factory):
    return _built(tmp_path_factory, "cuda")


@pytest.fixture(scope="module")
def cpu_bundle(tmp_path_factory):
    return _built(tmp_path_factory, "llvm-cpu")


def test_a_cuda_bundle_holds_each_case_compiled_for_sm80_with_its_reference_and_rule(cuda_bundle, toolchain):
    manifest = json.loads((cuda_bundle / "manifest.json").read_text())
    assert manifest["backend"] == "cuda-sm80" and manifest["device"] == "cuda"
    assert manifest["iree_version"] == toolchain.probe.version
    assert "--iree-cuda-target=sm_80" in manifest["flags"]
    assert [c["family"] for c in manifest["cases"]] == ["reduce", "one_hot", "matmul"]
    compiled = [c for c in manifest["cases"] if c["state"] == "compiled"]
    assert compiled and (cuda_bundle / "smoke.vmfb").stat().st_size > 0
    for line in compiled:
        folder = cuda_bundle / "cases" / line["id"]
        record = json.loads((folder / "case.json").read_text())
        case = case_from_mlir((folder / "case.mlir").read_text())  # the header: check and replay re-derive it
        assert case.family == line["family"] and record["rule"]["kind"] in ("elementwise", "topk")
        assert (folder / "module.vmfb").stat().st_size > 0
        assert len(list(folder.glob("input*.npy"))) == record["inputs"]
        assert len(list(folder.glob("expected*.npy"))) == record["results"]
    assert not list(cuda_bundle.parent.glob(".bundle.partial-*"))  # built aside, renamed in whole


def test_a_bundle_for_a_device_that_is_not_here_stops_at_its_smoke_module(cuda_bundle, toolchain, tmp_path):
    if toolchain.probe.has_device("cuda"):
        pytest.skip("a CUDA device is here: the bundle would run")
    done = shapefuzz("bundle-run", cuda_bundle, "--out", tmp_path / "r.json", bare=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "the cuda device did not run this bundle's smoke module" in done.stderr
    assert json.loads((tmp_path / "r.json").read_text())["smoke"] != "ok"


def test_the_runner_judges_right_wrong_and_failing_cases_and_bundle_judge_reads_them_back(cpu_bundle, tmp_path):
    bundle = tmp_path / "bundle"
    shutil.copytree(cpu_bundle, bundle)
    results = tmp_path / "results.json"
    done = shapefuzz("bundle-run", bundle, "--out", results, bare=True)
    assert done.returncode == 0, done.stderr + done.stdout
    assert {r["verdict"] for r in json.loads(results.read_text())["cases"].values()} == {"ok"}
    assert "3 ok" in done.stdout
    # one expected output changed, one module broken: wrong values and a runtime error (the
    # reduce case is an arg-max, whose indices are judged by what they select, not by the file)
    cases = sorted(p.name for p in (bundle / "cases").iterdir())
    cases[0], cases[1] = cases[1], cases[0]
    expected = bundle / "cases" / cases[0] / "expected0.npy"
    array = np.load(expected)
    array.reshape(-1)[0] += 3
    np.save(expected, array)
    (bundle / "cases" / cases[1] / "module.vmfb").write_bytes(b"not a module")
    done = shapefuzz("bundle-run", bundle, "--out", results, bare=True)
    assert done.returncode == 1, done.stderr
    verdicts = {k: r["verdict"] for k, r in json.loads(results.read_text())["cases"].items()}
    assert verdicts == {cases[0]: "wrong", cases[1]: "error", cases[2]: "ok"}
    assert any(line.startswith(cases[0]) and "elements differ" in line for line in done.stdout.splitlines())
    # back here: the wrong output is right by the family's own judge (our file was changed), the
    # runtime error is right on llvm-cpu (a device finding, saved into the corpus)
    corpus = tmp_path / "corpus"
    judged = shapefuzz("bundle-judge", bundle, results, "--save", corpus, "--json")
    assert judged.returncode == 1, judged.stderr
    rows = {row["id"]: row for row in json.loads(judged.stdout)}
    assert rows[cases[0]]["family_judge"] == "right" and rows[cases[0]]["conclusion"] == "ours"
    assert rows[cases[1]]["reference"] == "ok" and rows[cases[1]]["conclusion"] == "device finding"
    assert rows[cases[1]]["signature"].startswith("llvm-cpu/run/")
    saved = [p for p in corpus.iterdir() if (p / "meta.json").exists()]
    assert len(saved) == 1 and "bundle" in json.loads((saved[0] / "meta.json").read_text())["origin"]


_HANGING_RUNTIME = """#!/bin/sh
case "$*" in *--input=4xf32*) echo "4xf32=2 4 6 8"; exit 0;; esac
exec sleep 600
"""


def test_a_hung_case_costs_its_timeout_and_the_run_goes_on(cpu_bundle, tmp_path):
    """A runtime that hangs on every case (a fake: a hung kernel on demand) after answering the smoke module."""
    fake = tmp_path / "iree-run-module"
    fake.write_text(_HANGING_RUNTIME)
    fake.chmod(0o755)
    results = tmp_path / "results.json"
    done = shapefuzz("bundle-run", cpu_bundle, "--out", results, "--timeout", "1", "--jobs", "3",
                     "--iree-run-module", fake, bare=True)
    assert done.returncode == 1, done.stderr
    cases = json.loads(results.read_text())["cases"]
    assert len(cases) == 3 and {r["verdict"] for r in cases.values()} == {"timeout"}
    assert "3 timeout" in done.stdout


_ONCE_FAILING_RUNTIME = """#!{python}
import hashlib, os, sys
module = next(a for a in sys.argv[1:] if a.startswith("--module="))
mark = os.path.join({marks!r}, hashlib.sha1(module.encode()).hexdigest())
if not module.endswith("smoke.vmfb") and not os.path.exists(mark):
    open(mark, "w").close()
    sys.stderr.write("UNAVAILABLE; a transient device error\\n")
    sys.exit(1)
os.execv({real!r}, [{real!r}] + sys.argv[1:])
"""


def test_a_failure_that_passes_when_run_again_is_flaky_not_a_finding(cpu_bundle, tmp_path):
    """Each failing case is run once more before it is reported (a fake runtime fails each module's
    first run, then runs the real one): the run says flaky, exits 0, and bundle-judge saves nothing."""
    from shapefuzz.iree.toolchain import find_toolchain

    marks = tmp_path / "marks"
    marks.mkdir()
    fake = tmp_path / "iree-run-module"
    fake.write_text(_ONCE_FAILING_RUNTIME.format(python=sys.executable, marks=str(marks),
                                                 real=str(find_toolchain().run_bin)))
    fake.chmod(0o755)
    results = tmp_path / "results.json"
    done = shapefuzz("bundle-run", cpu_bundle, "--out", results, "--iree-run-module", fake, bare=True)
    assert done.returncode == 0, done.stderr + done.stdout
    cases = json.loads(results.read_text())["cases"]
    assert {r["verdict"] for r in cases.values()} == {"error"} and all(r["flaky"] for r in cases.values())
    assert "3 flaky (passed when run again)" in done.stdout
    corpus = tmp_path / "corpus"
    judged = shapefuzz("bundle-judge", cpu_bundle, results, "--save", corpus, "--json")
    assert judged.returncode == 0, judged.stderr
    assert {row["conclusion"] for row in json.loads(judged.stdout) if row["device"] != "ok"} == {"flaky on the device"}
    assert not corpus.exists() or not any(corpus.iterdir())


@pytest.mark.parametrize("args, said", [
    (["bundle", "--target", "rocm", "--n", "1", "--out", "b"], "--target"),
    (["bundle", "--target", "llvm-cpu", "--arch", "sm_80", "--n", "1", "--out", "b"], "--arch is for --target cuda"),
    (["bundle", "--n", "0", "--out", "b"], "--n"),
    (["bundle", "--arch", "volta", "--n", "1", "--out", "b"], "compute capability"),
    (["bundle", "--arch", "sm_90", "--n", "1", "--out", "b"], "use --arch sm_80"),
    (["bundle", "--n", "1", "--out", "full"], "not empty"),
    (["bundle", "--n", "1", "--out", "b", "--ops", "convv"], "did you mean 'conv'"),
    (["bundle", "--n", "1", "--out", "b", "--variant", "o4"], "cuda-sm80 has these: o3"),
    (["bundle", "--target", "llvm-cpu", "--n", "1", "--out", "b", "--variant", "no-igemm"], "llvm-cpu has these"),
    (["bundle-run", "nowhere"], "not a folder"),
    (["bundle-run", "full"], "manifest.json"),
    (["bundle-run", "full", "--timeout", "-1"], "--timeout"),
    (["bundle-run", "full", "--jobs", "x"], "--jobs"),
    (["bundle-judge", "full", "full/x"], "manifest.json"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, args, said):
    from shapefuzz.cli import main

    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("{}")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["shapefuzz", *args])
    with pytest.raises(SystemExit) as stop:
        main()  # in this process: each refusal costs milliseconds, not an interpreter's start
    out, err = capsys.readouterr()
    assert stop.value.code == 2, (out, err)
    assert err.count("\n") == 1 and said in err and "Traceback" not in out + err, err
    assert not (tmp_path / "b").exists()


def test_a_case_declaring_a_tensor_over_the_cap_is_drawn_again(toolchain, tmp_path):
    from shapefuzz.bundle.build import draw, largest_tensor
    from shapefuzz.campaign.iree import IreeTarget

    target = IreeTarget(toolchain, tmp_path)
    free, again = draw(target, ("reduce",), 3, 1)
    capped, again_capped = draw(target, ("reduce",), 3, 1, max_tensor_bytes=200)
    assert max(largest_tensor(c) for c in free) > 200 and again_capped > again
    assert capped and all(largest_tensor(c) <= 200 for c in capped)


def test_a_variant_bundle_compiles_with_the_variant_lanes_flags(tmp_path, toolchain):
    """`--variant o3` compiles each case for cuda-sm80-o3 (a registered lane, so a saved finding
    replays by its name); another arch takes sm_80's variant with its own target flags."""
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.bundle.build import lane_for

    out = tmp_path / "o3"
    done = shapefuzz("bundle", "--target", "cuda", "--variant", "o3", "--ops", "reduce", "--seed", "1", "--n", "1",
                     "-j", "1", "--out", out)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["backend"] == "cuda-sm80-o3" and "--iree-opt-level=O3" in manifest["compile_command"]
    sm86 = lane_for("cuda", "sm_86", "o3")
    assert sm86.name == "cuda-sm86-o3" and sm86.extra_flags == BACKENDS["cuda-sm80-o3"].extra_flags
    flags = sm86.compile_flags(toolchain.probe)
    assert "--iree-cuda-target=sm_86" in flags and "--iree-opt-level=O3" in flags


def _chain_candidate(toolchain, tmp_path, droppable: int = 2):
    """A real small matmul drawn inside a chain with at least `droppable` context ops the shrinker can drop alone."""
    from shapefuzz.bundle.ladder import ladder
    from shapefuzz.campaign.iree import IreeTarget

    target = IreeTarget(toolchain, tmp_path, context_share=1.0)
    for seed in range(40):
        candidate = target.generate("matmul", seed)
        rungs = ladder("e", candidate, target)
        if sum(r.rung == "without" for r in rungs) >= droppable and len(candidate.text) < 2500:
            return target, candidate, rungs
    pytest.fail("no matmul chain with two droppable ops in 40 draws")


def _corpus_of(candidate, toolchain, folder: Path, lane: str = "llvm-cpu"):
    from shapefuzz.corpus import make_finding, save_finding
    from shapefuzz.model import Signature, Stage, Status

    signature = Signature(lane, Stage.COMPARE, Status.MISMATCH, "wrong values in matmul")
    return save_finding(folder, make_finding(signature, candidate.text, toolchain, seed=candidate.input_seed,
                                             triage="compiler bug"))[0]


def test_a_ladder_is_the_case_its_root_alone_and_one_rung_per_op_the_shrinker_can_drop(toolchain, tmp_path):
    from shapefuzz.campaign.iree import load_family
    from shapefuzz.case import case_from_mlir
    from shapefuzz.families.context.chain import inner_drops, outermost_drops

    _, candidate, rungs = _chain_candidate(toolchain, tmp_path)
    family = load_family("matmul")
    params = family.load(case_from_mlir(candidate.text).params)
    chain = params.context
    assert [r.rung for r in rungs[:2]] == ["as-is", "root"] and rungs[0].candidate == candidate
    assert not family.load(case_from_mlir(rungs[1].candidate.text).params).context
    singles = [c for c in dict.fromkeys(outermost_drops(chain) + inner_drops(chain)) if len(c) == len(chain) - 1]
    valid = [c for c in singles if family.is_valid(params.replace(context=c))]  # one op dropped alone, as rungs are
    dropped = [r for r in rungs if r.rung == "without"]
    assert len(dropped) == len(valid) >= 2
    for rung in dropped:
        kept = family.load(case_from_mlir(rung.candidate.text).params).context
        assert kept == chain[:rung.dropped] + chain[rung.dropped + 1:] and rung.op == chain[rung.dropped].op
        assert rung.to_json() == {"entry": "e", "rung": "without", "dropped": rung.dropped, "op": rung.op}
        assert rung.candidate.input_seed == candidate.input_seed


def _judged(bundle, results, verdicts: dict, *extra):
    """bundle-judge after setting the named cases' device verdicts (a fake device failure: the results JSON edited)."""
    data = json.loads(results.read_text())
    for case_id, verdict in verdicts.items():
        data["cases"][case_id].update(verdict=verdict, detail="" if verdict == "ok" else "1 of 4 elements differ")
    results.write_text(json.dumps(data))
    return shapefuzz("bundle-judge", bundle, results, *extra)


def test_a_cpu_ladder_bundle_runs_and_bundle_judge_says_which_context_ops_the_failure_needs(toolchain, tmp_path):
    from shapefuzz.triage.issue import entry_chain

    _, candidate, rungs = _chain_candidate(toolchain, tmp_path)
    corpus = tmp_path / "corpus"
    entry = _corpus_of(candidate, toolchain, corpus)
    _corpus_of(candidate, toolchain, corpus, lane="cuda-sm80")  # another lane's entry: skipped
    bundle = tmp_path / "ladder"
    done = shapefuzz("bundle", "--from-corpus", corpus, "--target", "llvm-cpu", "--out", bundle, "-j", "2")
    assert done.returncode == 0, done.stderr
    assert "cuda-sm80-compare-mismatch" in done.stdout and "skipped (lane cuda-sm80" in done.stdout
    manifest = json.loads((bundle / "manifest.json").read_text())
    ladder = {c["id"]: c["ladder"] for c in manifest["cases"]}
    assert manifest["from_corpus"] == str(corpus) and len(ladder) == len(rungs)
    assert {v["entry"] for v in ladder.values()} == {entry.name}
    assert [v["rung"] for v in ladder.values()][:2] == ["as-is", "root"]
    results = tmp_path / "results.json"
    ran = shapefuzz("bundle-run", bundle, "--out", results, bare=True)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    ids = {(v["rung"], v["dropped"]): k for k, v in ladder.items()}
    drops = sorted((k for k in ids if k[0] == "without"), key=lambda k: k[1])
    needed, spares = drops[0], drops[1:]
    assert spares
    # the case and the chain without each other droppable op fail on the "device"; the root and the
    # chain without the first pass: the first is needed, the others are not
    judged = _judged(bundle, results, {ids["as-is", None]: "wrong", **{ids[s]: "wrong" for s in spares}},
                     "--save", corpus)
    assert judged.returncode == 1, judged.stderr
    line = next(line for line in judged.stdout.splitlines() if line.startswith(f"{entry.name}:"))
    assert f"dropping {ladder[ids[needed]]['op']} makes it pass, so kept:" in line, line
    assert "fails on the device: as-is, " + ", ".join(
        f"without {ladder[ids[s]]['op']} (op {s[1]})" for s in spares) in line, line
    meta = json.loads((entry / "meta.json").read_text())
    bug = meta["bug"]
    assert bug["chain"] and line.endswith(bug["ladder"]["verdict"])
    mlir = (entry / "reproducer.mlir").read_text()
    assert entry_chain(meta, mlir) == (bug["chain"], True)  # what export --format issue says
    assert entry_chain({}, mlir)[0].count("→") == bug["chain"].count("→") + len(spares)  # no spare op is kept
    others = [p for p in corpus.iterdir() if p.is_dir() and p != entry]
    assert all("ladder" not in json.loads((p / "meta.json").read_text()).get("bug", {}) for p in others)
    judged = _judged(bundle, results, {ids["root", None]: "wrong"})
    assert "root alone fails: a plain matmul bug" in judged.stdout, judged.stdout
    judged = _judged(bundle, results, {k: "ok" for k in ladder})
    assert f"{entry.name}: fails on the device: none; as-is passes now" in judged.stdout


def test_bad_ladder_input_is_one_line_and_exit_2(toolchain, tmp_path):
    from shapefuzz.corpus import make_finding, save_finding
    from shapefuzz.model import Signature, Stage, Status

    (tmp_path / "empty").mkdir()
    plain = tmp_path / "plain"
    save_finding(plain, make_finding(Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "x"), layout_module(), toolchain))
    for args, said in [(["--from-corpus", tmp_path / "nowhere"], "not a folder"),
                       (["--from-corpus", tmp_path / "empty"], "not a corpus"),
                       (["--from-corpus", plain, "--target", "llvm-cpu"], "has no shapefuzz-case header"),
                       (["--from-corpus", tmp_path / "empty", "--lane", "cuda-sm99-fast"], "--lane"),
                       (["--from-corpus", tmp_path / "empty", "--n", "2"], "one of them")]:
        done = shapefuzz("bundle", *args, "--out", tmp_path / "b")
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, (args, done.stderr)
        assert not (tmp_path / "b").exists()


def layout_module() -> str:
    from shapefuzz.bundle.layout import SMOKE_MODULE

    return SMOKE_MODULE


def test_ladder_verdicts_for_a_one_op_chain_a_flaky_root_and_an_undecided_case(tmp_path):
    """`ladder.verdicts` on judged rows (no device): a one-op chain's only drop is the root alone."""
    from shapefuzz.bundle.judge import DEVICE_FINDING, FLAKY, SHARED, Row
    from shapefuzz.bundle.ladder import verdicts
    from shapefuzz.bundle.layout import CaseEntry, LadderRung
    from shapefuzz.case import Case
    from shapefuzz.families.generate import draw_params

    params = next(p for p in (draw_params("matmul", s, context_share=1.0) for s in range(60)) if len(p.context) == 1)
    case = tmp_path / "cases" / "000-matmul-as-is"
    case.mkdir(parents=True)
    (case / "case.mlir").write_text(Case.make("matmul", params).header() + "\n")
    op = params.context[0].op
    lines = [CaseEntry("000-matmul-as-is", "matmul", "compiled", "", "", 0, LadderRung("e", "as-is", None, "")),
             CaseEntry("001-matmul-root", "matmul", "compiled", "", "", 0, LadderRung("e", "root", None, ""))]

    def said(as_is: str, root: str) -> str:
        rows = [Row("000-matmul-as-is", "matmul", "wrong", "", "ok", "", as_is),
                Row("001-matmul-root", "matmul", "ok" if root == "" else "wrong", "", "ok", "", root)]
        return verdicts(tmp_path, lines, rows)[0].line()

    slot = f"operand {params.context[0].operand}" if params.context[0].is_producer else f"result {params.context[0].result}"
    kept = f"{op}({slot}) → matmul" if params.context[0].is_producer else f"matmul → {op}({slot})"
    assert said(DEVICE_FINDING, "") == f"e: fails on the device: as-is; needs the chain; dropping {op} makes it pass, " \
                                       f"so kept: {kept}"
    assert said(DEVICE_FINDING, DEVICE_FINDING).endswith("root alone fails: a plain matmul bug")
    assert said(DEVICE_FINDING, FLAKY).endswith("; flaky")
    chainless = verdicts(tmp_path, lines[:1], [Row("000-matmul-as-is", "matmul", "wrong", "", "ok", "", DEVICE_FINDING)])
    assert chainless[0].line().endswith("no chain: a plain matmul bug")  # no root rung: the entry is its own root
    assert said(SHARED, "").endswith("undecided: as-is llvm-cpu fails too")
