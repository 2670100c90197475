"""`bundle-judge` places a device-only wrong value here, without the device (`bundle.place`): the
case is compiled for the CUDA lane for real (no GPU is needed to compile for one) and its IR is
finished on llvm-cpu phase by phase; only the device's "wrong" is faked, by editing the results
JSON as the other bundle tests do."""

import json
import sys
from pathlib import Path

import pytest

from support.bundle_cli import shapefuzz  # noqa: F401

pytestmark = pytest.mark.iree


@pytest.fixture(scope="module")
def o3_bundle(tmp_path_factory):
    """Two real one_hot cases (one spelled in linalg, one in torch) compiled for cuda-sm80-o3, and
    results saying the device ran both right."""
    out = tmp_path_factory.mktemp("o3") / "bundle"
    done = shapefuzz("bundle", "--target", "cuda", "--variant", "o3", "--ops", "one_hot", "--seed", "1", "--n", "2",
                     "-j", "1", "--out", out)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    ids = [c["id"] for c in manifest["cases"] if c["state"] == "compiled"]
    assert len(ids) == 2, manifest["cases"]
    results = out.parent / "results.json"
    results.write_text(json.dumps({"format": "shapefuzz-bundle-results/1", "bundle_id": manifest["bundle_id"],
                                   "cases": {i: {"verdict": "ok", "detail": ""} for i in ids}}))
    return out, results, ids


def _wrong(results: Path, tmp_path: Path, *ids: str) -> Path:
    """A copy of the results with the named cases wrong on the "device"."""
    data = json.loads(results.read_text())
    for case_id in ids:
        data["cases"][case_id].update(verdict="wrong", detail="1 of 4 elements differ")
    copy = tmp_path / "results.json"
    copy.write_text(json.dumps(data))
    return copy


def test_twin_lanes_are_the_llvm_cpu_lanes_with_the_same_variant_flags(toolchain):
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.bundle.place import twin_lane

    assert twin_lane("cuda-sm80-o3", toolchain) == "llvm-cpu-o3"
    assert twin_lane("cuda-sm80-aggressive-fusion", toolchain) == "llvm-cpu-aggressive-fusion"
    assert twin_lane("cuda-sm86-single-dispatch", toolchain) == "llvm-cpu-single-dispatch"  # an unregistered arch
    assert BACKENDS["cuda-sm80-o3"].extra_flags[-1] in BACKENDS["llvm-cpu-o3"].extra_flags
    assert twin_lane("cuda-sm80-no-igemm", toolchain) == ""  # a GPU codegen flag: llvm-cpu has none
    assert twin_lane("cuda-sm80", toolchain) == ""


def test_a_cuda_wrong_value_right_when_its_cuda_ir_is_finished_here_is_placed_in_cuda_codegen(o3_bundle, toolchain,
                                                                                           tmp_path):
    """...and in its GPU codegen pipeline when every dispatch goes through one."""
    from shapefuzz.bundle.judge import judge

    bundle, results, ids = o3_bundle
    corpus = tmp_path / "corpus"
    judged = shapefuzz("bundle-judge", bundle, _wrong(results, tmp_path, ids[0]), "--save", corpus, "--json")
    assert judged.returncode == 1, judged.stderr
    row = next(r for r in json.loads(judged.stdout) if r["id"] == ids[0])
    assert row["conclusion"] == "device finding" and row["twin"] == "llvm-cpu-o3 right", row
    assert "compiled onward by llvm-cpu-o3 (`--compile-from=stream`)" in row["evidence"]
    [entry] = [p for p in corpus.iterdir() if (p / "meta.json").exists()]
    bug = json.loads((entry / "meta.json").read_text())["bug"]
    assert bug["localized"]["phase"] == "codegen" and bug["localized"]["certain"] is True
    assert "[codegen]" in bug["identity"]
    pipelines = bug["device_place"]["pipelines"]  # each dispatch's CUDA codegen pipeline, as compiled here
    assert pipelines and f"{len(pipelines)} dispatch(es) go through" in row["evidence"]
    place = f"codegen (cuda, {pipelines[0]})" if len(set(pipelines)) == 1 else "codegen (cuda)"
    assert row["place"] == bug["device_place"]["place"] == place, row
    assert row["signature"].endswith(f": values in one_hot [{place}]"), row["signature"]  # no outputs kept: "values"
    [row] = [r for r in judge(bundle, tmp_path / "results.json", toolchain, localize_seconds=0) if r.signature]
    assert row.place == "" and row.signature.endswith(": values in one_hot")  # 0: not placed


def test_a_variant_wrong_on_its_llvm_cpu_twin_is_localized_on_that_lane(o3_bundle, toolchain, monkeypatch):
    """The twin's verdict faked wrong (a real O3 bug is not at hand): the ordinary localizer runs on
    llvm-cpu-o3 with plain llvm-cpu as the lane that computes it right, and the evidence says so."""
    from shapefuzz.bundle import place
    from shapefuzz.case import case_from_mlir
    from shapefuzz.judge.oracle import case_expectation
    from shapefuzz.triage.localize import Localization, Values

    bundle, _, ids = o3_bundle
    text = (bundle / "cases" / ids[0] / "case.mlir").read_text()
    case = case_from_mlir(text)
    seed = json.loads((bundle / "cases" / ids[0] / "case.json").read_text())["input_seed"]
    expectation = case_expectation(case, seed)
    monkeypatch.setattr(place.DeviceProbe, "finish", lambda self, ir, phase, lane: Values.WRONG)
    calls = []
    found = Localization("dispatch-creation", "iree-dispatch-creation-x", "XPass", "found", certain=True)
    monkeypatch.setattr(place, "localize_entry",
                        lambda entry, tc, lane, passed, seconds: calls.append((lane, passed)) or found)
    placed = place.place_device_values(text, "cuda-sm80-o3", ["--iree-opt-level=O3"], "cuda", expectation.inputs,
                                       expectation.expected, toolchain, case, 30.0)
    assert calls == [("llvm-cpu-o3", ("llvm-cpu",))]
    assert placed.twin_text == "llvm-cpu-o3 wrong" and placed.place == "iree-dispatch-creation-x"
    assert placed.loc.evidence.startswith("llvm-cpu-o3 (the same flags, `--iree-opt-level=O3`) computes it wrong too")


def test_two_device_wrong_values_are_two_entries_by_place_and_one_entry_for_one_place(o3_bundle, toolchain,
                                                                                        tmp_path, monkeypatch):
    import shapefuzz.judge.oracle
    from shapefuzz.bundle import judge as judging
    from shapefuzz.bundle.place import Placed
    from shapefuzz.triage.localize import Localization

    bundle, results, ids = o3_bundle
    wrong = _wrong(results, tmp_path, *ids)
    places = {ids[0]: Localization("codegen", evidence="e", certain=True),
              ids[1]: Localization("global-optimization", "iree-global-opt-x", "XPass", "e", certain=False)}
    for case_id in ids:  # which case is being placed: told by its text
        places[(bundle / "cases" / case_id / "case.mlir").read_text()] = places.pop(case_id)
    monkeypatch.setattr(judging, "place_device_values", lambda text, *a, **k: Placed(places[text], who="cuda"))
    monkeypatch.setattr(shapefuzz.judge.oracle, "case_label", lambda case: "one_hot")  # one symptom: the place decides
    apart = tmp_path / "apart"
    rows = judging.judge(bundle, wrong, toolchain, apart)
    assert sorted(r.place for r in rows) == ["codegen (cuda)", "needs iree-global-opt-x"]
    assert len([p for p in apart.iterdir() if (p / "meta.json").exists()]) == 2
    for text in places:
        places[text] = Localization("codegen", evidence="e", certain=True)
    together = tmp_path / "together"
    rows = judging.judge(bundle, wrong, toolchain, together)
    entries = [p for p in together.iterdir() if (p / "meta.json").exists()]
    assert len(entries) == 1, [r.signature for r in rows]
    [entry] = entries
    assert json.loads((entry / "meta.json").read_text())["count"] == 2


def test_bad_placing_input_is_one_line_and_exit_2(o3_bundle, tmp_path, monkeypatch, capsys):
    from shapefuzz.cli import main

    bundle, results, ids = o3_bundle
    broken = tmp_path / "broken"
    import shutil

    shutil.copytree(bundle, broken)
    manifest = json.loads((broken / "manifest.json").read_text())
    (broken / "manifest.json").write_text(json.dumps({**manifest, "flags": "--iree-opt-level=O3"}))
    for args, said in [([bundle, results, "--localize-time", "-1"], "--localize-time"),
                       ([bundle, results, "--localize-time", "soon"], "--localize-time"),
                       ([broken, _wrong(results, tmp_path, ids[0])], "flags is not a list")]:
        monkeypatch.setattr(sys, "argv", ["shapefuzz", "bundle-judge", *map(str, args)])
        with pytest.raises(SystemExit) as stop:
            main()
        out, err = capsys.readouterr()
        assert stop.value.code == 2 and err.count("\n") == 1 and said in err and "Traceback" not in out + err, err
