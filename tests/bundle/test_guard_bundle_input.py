"""A bundle comes back from another machine (issue #47): every file and value in it is untrusted.
`bundle-judge --save` writes only into entries of the corpus given, a bad value is one line and
exit 2 naming the file and field, a file linked out of the bundle is refused, `bundle-run` reports
every case (a job's error is never dropped; a case it cannot read is not a finding), judging the
same results twice counts them once, and an empty option value is refused.

One real two-case llvm-cpu bundle (reduce, one_hot) is built and run once; each test tampers
with a copy. The commands run in this process (`cli.main`), each refusal costing milliseconds."""

import json
import math
import os
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.iree


def _main(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    from shapefuzz.cli import main

    monkeypatch.setattr(sys, "argv", ["shapefuzz", *map(str, args)])
    with pytest.raises(SystemExit) as stop:
        main()
    out, err = capsys.readouterr()
    return stop.value.code, out, err


def _refused(code: int, out: str, err: str, *said: str) -> None:
    """Exit 2 and one line saying each of `said`, no traceback."""
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and "Traceback" not in out + err and "internal error" not in err, err
    for words in said:
        assert words in err, err


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    """A bundle of two compiled cases and its results.json (both ok), built and run once."""
    import subprocess

    out = tmp_path_factory.mktemp("guard") / "bundle"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    built = subprocess.run([sys.executable, "-m", "shapefuzz", "bundle", "--target", "llvm-cpu", "--ops", "reduce,one_hot",
                            "--seed", "1", "--n", "2", "-j", "1", "--out", str(out)], capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([sys.executable, "-m", "shapefuzz", "bundle-run", str(out), "--out", str(out / "results.json")],
                         capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    return out


def _copy(good: Path, tmp_path: Path, name: str = "b") -> tuple[Path, dict, dict]:
    bundle = tmp_path / name
    shutil.copytree(good, bundle)
    return bundle, json.loads((bundle / "manifest.json").read_text()), json.loads((bundle / "results.json").read_text())


def _write(bundle: Path, manifest: dict, results: dict) -> None:
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    (bundle / "results.json").write_text(json.dumps(results))


def _failing(results: dict, case_id: str, **fields) -> None:
    """The case failed on the "device" (a fake failure: the results edited), with `fields` too."""
    results["cases"][case_id].update({"verdict": "error", "detail": "exit 1: a device error", "returncode": 1, **fields})


def _victim(tmp_path: Path) -> Path:
    """An entry of another corpus (tmp_path/outside/victim), beside the one given to --save."""
    from shapefuzz.bundle.layout import SMOKE_MODULE
    from shapefuzz.corpus import make_finding, save_finding
    from shapefuzz.model import Signature, Stage, Status
    from shapefuzz.iree.toolchain import find_toolchain

    entry, _ = save_finding(tmp_path / "outside" / "victim", make_finding(Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "x"),
                                                              SMOKE_MODULE, find_toolchain()))
    (entry.parent / ".lock").unlink()
    return entry


def _snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- 1: ladder.entry


@pytest.mark.parametrize("name", ["../victim/ENTRY", "ABSOLUTE", "victim/ENTRY", "..", "", 7, "Bad Name"])
def test_a_ladder_entry_that_is_not_a_plain_entry_name_is_refused_and_nothing_outside_is_written(
        good, tmp_path, monkeypatch, capsys, name):
    victim = _victim(tmp_path)
    before = _snapshot(victim.parent.parent)
    entry = name.replace("ENTRY", victim.name).replace("ABSOLUTE", str(victim)) if isinstance(name, str) else name
    bundle, manifest, results = _copy(good, tmp_path)
    manifest["from_corpus"] = "corpus"
    for case in manifest["cases"]:
        case["ladder"] = {"entry": entry, "rung": "as-is", "dropped": None, "op": ""}
    _write(bundle, manifest, results)
    (tmp_path / "C1").mkdir()
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json", "--save", tmp_path / "C1"),
             "manifest.json", "ladder.entry")
    assert _snapshot(victim.parent.parent) == before  # no meta.json, repro.sh or .lock written outside C1
    assert not any((tmp_path / "C1").iterdir())


def test_a_ladder_entry_linked_out_of_the_corpus_is_refused(good, tmp_path, monkeypatch, capsys):
    victim = _victim(tmp_path)
    before = _snapshot(victim.parent)
    bundle, manifest, results = _copy(good, tmp_path)
    manifest["from_corpus"] = "corpus"
    for case in manifest["cases"]:
        case["ladder"] = {"entry": victim.name, "rung": "as-is", "dropped": None, "op": ""}
    _write(bundle, manifest, results)
    (tmp_path / "C1").mkdir()
    (tmp_path / "C1" / victim.name).symlink_to(victim)
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json", "--save", tmp_path / "C1"),
             "symbolic link")
    assert _snapshot(victim.parent) == before


# ----------------------------------------------------------------------------- 2: wrong-typed values


def _ladder(manifest: dict, rung: dict) -> None:
    manifest["from_corpus"] = "corpus"
    manifest["cases"][0]["ladder"] = {"entry": "e", "rung": "as-is", "dropped": None, "op": ""}
    manifest["cases"][1]["ladder"] = rung


_BAD_MANIFEST = [
    (lambda m: _ladder(m, {"entry": "e", "rung": "without", "dropped": -7, "op": "pad"}), "ladder.dropped"),
    (lambda m: _ladder(m, {"entry": "e", "rung": "without", "dropped": "x", "op": "pad"}), "ladder.dropped"),
    (lambda m: _ladder(m, {"entry": "e", "rung": "without", "dropped": True, "op": "pad"}), "ladder.dropped"),
    (lambda m: _ladder(m, {"entry": "e", "rung": "root", "dropped": 1, "op": ""}), "ladder.dropped"),
    (lambda m: _ladder(m, {"entry": "e", "rung": "sideways", "dropped": None, "op": ""}), "ladder.rung"),
    (lambda m: _ladder(m, {"entry": "e", "rung": "without", "dropped": 0, "op": ["pad"]}), "ladder.op"),
    (lambda m: _ladder(m, [1]), "ladder: expected an object"),
    (lambda m: _ladder(m, "as-is"), "ladder: expected an object"),
    (lambda m: (_ladder(m, {}), m["cases"][1].pop("ladder")), "without its ladder rung"),
    (lambda m: m.update(from_corpus=["x"]), "from_corpus"),
    (lambda m: m.update(arch={"sm": 80}), "arch"),
    (lambda m: m["cases"][0].update(input_seed="x"), "input_seed"),
    (lambda m: m["cases"][0].update(input_seed=-1), "input_seed"),
]


@pytest.mark.parametrize("edit, field", _BAD_MANIFEST)
def test_a_wrong_typed_manifest_value_is_one_line_naming_the_file_and_field(good, tmp_path, monkeypatch, capsys,
                                                                            edit, field):
    bundle, manifest, results = _copy(good, tmp_path)
    edit(manifest)
    _failing(results, manifest["cases"][0]["id"])
    _write(bundle, manifest, results)
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json", "--localize-time", "0"),
             "manifest.json", field)


_BAD_RECORD = [({"seconds": "abc"}, "seconds"), ({"seconds": [1]}, "seconds"), ({"seconds": -1}, "seconds"),
               ({"seconds": True}, "seconds"), ({"returncode": "x"}, "returncode"), ({"returncode": 1.5}, "returncode"),
               ({"signal": -9}, "signal"), ({"signal": "KILL"}, "signal"), ({"flaky": "yes"}, "flaky"),
               ({"ours": 1}, "ours"), ({"outputs": "deadbeef"}, "outputs"), ({"outputs": [[1]]}, "outputs[0]"),
               ({"detail": 5}, "detail"), ({"again": {"x": 1}}, "again"), ({"family": 3}, "family"),
               ({"verdict": "meh"}, "verdict")]


@pytest.mark.parametrize("fields, field", _BAD_RECORD)
def test_a_wrong_typed_results_value_is_one_line_naming_the_file_and_field(good, tmp_path, monkeypatch, capsys,
                                                                           fields, field):
    bundle, manifest, results = _copy(good, tmp_path)
    case_id = manifest["cases"][0]["id"]
    _failing(results, case_id, **({"verdict": "wrong"} if field.startswith("outputs") else {}))
    results["cases"][case_id].update(fields)
    _write(bundle, manifest, results)
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json", "--localize-time", "0"),
             "results.json", f"cases.{case_id}.{field}")


def test_an_infinite_number_or_an_unknown_case_in_the_results_is_refused(good, tmp_path, monkeypatch, capsys):
    bundle, manifest, results = _copy(good, tmp_path)
    case_id = manifest["cases"][0]["id"]
    _failing(results, case_id)
    text = json.dumps(results).replace('"returncode": 1', '"returncode": 1, "seconds": 1e999')
    (bundle / "results.json").write_text(text)  # 1e999 parses as infinity
    assert math.isinf(json.loads(text)["cases"][case_id]["seconds"])
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json"), "seconds")
    results["cases"]["999-nothing"] = dict(results["cases"][case_id])
    _write(bundle, manifest, results)
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json"), "no such case")


def test_a_wrong_typed_rule_in_case_json_is_an_unreadable_case_for_the_runner(good, tmp_path, capsys):
    from shapefuzz.bundle.runner import main

    bundle, manifest, _ = _copy(good, tmp_path)
    case_id = manifest["cases"][0]["id"]
    record = json.loads((bundle / "cases" / case_id / "case.json").read_text())
    record["rule"] = {"kind": "topk", "dim": "0", "k": 1, "largest": True, "labels": False, "results": ["values"]}
    (bundle / "cases" / case_id / "case.json").write_text(json.dumps(record))
    assert main([str(bundle), "--out", str(tmp_path / "r.json")]) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and case_id in err and "rule.dim" in err, err
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert cases[case_id]["ours"] is True and cases[manifest["cases"][1]["id"]]["verdict"] == "ok"


# ----------------------------------------------------------------------------- 3: bundle-run reports every case


def _link_case_folder(bundle: Path, case_id: str, tmp_path: Path) -> None:
    shutil.move(bundle / "cases" / case_id, tmp_path / "elsewhere")
    (bundle / "cases" / case_id).symlink_to(tmp_path / "elsewhere")


def _link_file(name: str, target: str | None = None):
    def link(bundle: Path, case_id: str, tmp_path: Path) -> None:
        path = bundle / "cases" / case_id / name
        outside = Path(target) if target else tmp_path / f"outside-{name}"
        if target is None:
            shutil.copy(path, outside)
        path.unlink()
        path.symlink_to(outside)
    return link


@pytest.mark.parametrize("damage, said", [
    (_link_case_folder, "symbolic link"),
    (_link_file("expected0.npy", "/dev/zero"), "expected0.npy"),
    (_link_file("expected0.npy"), "expected0.npy"),
    (_link_file("input0.npy"), "input0.npy"),
    (_link_file("module.vmfb"), "module.vmfb"),
    (_link_file("case.json"), "case.json"),
])
def test_a_case_the_runner_cannot_read_is_reported_by_name_and_is_not_a_finding(good, tmp_path, capsys, damage, said):
    from shapefuzz.bundle.runner import main

    bundle, manifest, _ = _copy(good, tmp_path)
    bad, fine = manifest["cases"][0]["id"], manifest["cases"][1]["id"]
    damage(bundle, bad, tmp_path)
    code = main([str(bundle), "--out", str(tmp_path / "r.json")])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)  # not 1, a finding
    assert err.count("\n") == 1 and bad in err and said in err, err
    assert any(line.startswith(bad) and "unreadable case" in line for line in out.splitlines()), out
    cases = json.loads((tmp_path / "r.json").read_text())["cases"]
    assert cases[bad]["ours"] is True and cases[fine]["verdict"] == "ok"


def test_a_job_that_raises_reaches_the_caller_of_run_parallel():
    from shapefuzz.process.parallel import run_parallel

    def job(n: int) -> int:
        if n == 3:
            raise RuntimeError("job 3 broke")
        return n

    with pytest.raises(RuntimeError, match="job 3 broke"):
        run_parallel(job, range(6), 2)  # no on_result: the error must not vanish with its result
    with pytest.raises(RuntimeError, match="job 3 broke"):
        run_parallel(job, range(6), 1, lambda n: None)
    assert run_parallel(job, [0, 1, 2], 2).results == [0, 1, 2]


def test_a_bundle_run_whose_case_job_raises_does_not_exit_0(good, tmp_path, monkeypatch):
    from shapefuzz.bundle import runner

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in run_case")

    monkeypatch.setattr(runner, "run_case", broken)
    with pytest.raises(RuntimeError, match="a bug in run_case"):
        runner.main([str(good), "--out", str(tmp_path / "r.json")])


# ----------------------------------------------------------------------------- 4: links, twice, empty values


def test_a_manifest_or_smoke_module_linked_out_of_the_bundle_is_refused(good, tmp_path, monkeypatch, capsys):
    from shapefuzz.bundle.runner import main

    for name in ("manifest.json", "smoke.vmfb"):
        bundle, _, _ = _copy(good, tmp_path, name)
        shutil.move(bundle / name, tmp_path / f"outside-{name}")
        (bundle / name).symlink_to(tmp_path / f"outside-{name}")
        assert main([str(bundle), "--out", str(tmp_path / "r.json")]) == 2
        out, err = capsys.readouterr()
        assert err.count("\n") == 1 and name in err and "symbolic link" in err, err
        if name == "manifest.json":
            _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json"), "symbolic link")


def test_a_case_mlir_linked_out_of_the_bundle_is_never_saved_into_the_corpus(good, tmp_path, monkeypatch, capsys):
    bundle, manifest, results = _copy(good, tmp_path)
    case_id = manifest["cases"][0]["id"]
    mlir = bundle / "cases" / case_id / "case.mlir"
    outside = tmp_path / "outside.mlir"
    outside.write_text(mlir.read_text() + "// text from outside the bundle\n")
    mlir.unlink()
    mlir.symlink_to(outside)
    _failing(results, case_id)
    _write(bundle, manifest, results)
    corpus = tmp_path / "corpus"
    _refused(*_main(monkeypatch, capsys, "bundle-judge", bundle, bundle / "results.json", "--save", corpus,
                    "--localize-time", "0"), case_id, "case.mlir", "symbolic link")
    assert not corpus.exists() or not [p for p in corpus.iterdir() if (p / "meta.json").exists()]


def test_judging_the_same_results_twice_counts_the_device_run_once(good, tmp_path, monkeypatch, capsys):
    bundle, manifest, results = _copy(good, tmp_path)
    case_id = manifest["cases"][0]["id"]
    _failing(results, case_id)
    _write(bundle, manifest, results)
    corpus = tmp_path / "corpus"
    judge = ("bundle-judge", bundle, bundle / "results.json", "--save", corpus, "--localize-time", "0")
    code, out, err = _main(monkeypatch, capsys, *judge)
    assert code == 1, err
    [entry] = [p for p in corpus.iterdir() if (p / "meta.json").exists()]
    saved = _snapshot(entry)
    assert json.loads((entry / "meta.json").read_text())["count"] == 1
    code, out, err = _main(monkeypatch, capsys, *judge)
    assert code == 1, err
    assert _snapshot(entry) == saved and [p for p in corpus.iterdir() if (p / "meta.json").exists()] == [entry]
    # another run of the bundle (its own start) that failed the same way is a second sighting
    results["started"] = "2030-01-01T00:00:00Z"
    _write(bundle, manifest, results)
    code, out, err = _main(monkeypatch, capsys, *judge)
    assert code == 1, err
    meta = json.loads((entry / "meta.json").read_text())
    assert meta["count"] == 2 and len(meta["sighting_keys"]) == 2


@pytest.mark.parametrize("args", [
    ["bundle-judge", "B", "B/results.json", "--save", ""],
    ["bundle-judge", "B", "B/results.json", "--save", " "],
    ["bundle", "--target", "llvm-cpu", "--n", "1", "--out", ""],
    ["bundle", "--target", "llvm-cpu", "--from-corpus", "", "--out", "new"],
    ["bundle", "--target", "llvm-cpu", "--n", "1", "--ops", "", "--out", "new"],
    ["bundle", "--n", "1", "--arch", "", "--out", "new"],
    ["bundle", "--n", "1", "--variant", "", "--out", "new"],
    ["bundle", "--n", "1", "--lane", "", "--out", "new"],
    ["bundle-run", "B", "--only", ""],
    ["bundle-run", "B", "--device", ""],
    ["bundle-run", "B", "--out", ""],
    ["bundle-run", "B", "--iree-run-module", ""],
    ["bundle-run", ""],
])
def test_an_empty_option_value_is_refused_not_taken_as_left_out(good, tmp_path, monkeypatch, capsys, args):
    shutil.copytree(good, tmp_path / "B")
    monkeypatch.chdir(tmp_path)
    _refused(*_main(monkeypatch, capsys, *args), "empty; give a value")
    assert not (tmp_path / "new").exists() and not (tmp_path / "results.json").exists()


def test_only_with_no_case_id_is_refused(good, tmp_path, monkeypatch, capsys):
    _refused(*_main(monkeypatch, capsys, "bundle-run", good, "--only", " , ", "--out", tmp_path / "r.json"),
             "--only", "no case id")


# ----------------------------------------------------------------------------- 5: --context-share


@pytest.mark.parametrize("share", ["nan", "NaN", "inf", "-inf", "1e999", "1.5", "-0.1"])
def test_a_context_share_that_is_not_a_finite_fraction_is_refused(tmp_path, monkeypatch, capsys, share):
    monkeypatch.chdir(tmp_path)
    _refused(*_main(monkeypatch, capsys, "bundle", "--target", "llvm-cpu", "--ops", "reduce", "--n", "1",
                    "--context-share", share, "--out", "new"), "--context-share")
    assert not (tmp_path / "new").exists()
