"""`shapefuzz shrink` against the real IREE 3.13 compiler: a bloated known failure shrinks to
tiny shapes with the same signature; bad input is one line and exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shapefuzz import cli
from shapefuzz.invoke.execute import verify
from shapefuzz.shrink.run import shrink_file

pytestmark = pytest.mark.iree
DATA = Path(__file__).resolve().parents[1] / "data"
SIGNATURE = ("llvm-cpu/compile/error: 'linalg.generic' op inferred input/output operand #N has shape's "
             "dimension #N to be N, but found N")


def run_main(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["shapefuzz", *args])
    with pytest.raises(SystemExit) as stop:
        cli.main()
    out, err = capsys.readouterr()
    return stop.value.code, out, err


def test_bloated_conv_shrinks_to_tiny_shapes(toolchain, tmp_path):
    text = (DATA / "shrink_conv1d_big.mlir").read_text()
    out = tmp_path / "big.min.mlir"
    result = shrink_file("big.mlir", text, toolchain, ("llvm-cpu",), out=str(out), time_limit=240)
    assert [str(s) for s in result.target.signatures.values()] == [SIGNATURE]
    assert result.target.phase is not None  # trials stop where the failure already shows
    assert result.confirmed is True
    minimized = out.read_text()
    assert minimized == result.minimized and verify(minimized, toolchain) is None
    before, after = result.before, result.after
    assert before.elements > 20000 and before.dynamic_dims == 1 and before.ops > 15
    assert after.elements <= 20, minimized
    assert after.ops <= 5 and after.dynamic_dims == 0 and after.lines <= 8
    assert "linalg.conv_1d_nwc_wcf" in minimized
    assert result.commands and "--iree-hal-local-target-device-backends=llvm-cpu" in result.commands[0]


def test_not_failing_file_is_a_one_line_error(monkeypatch, capsys, tmp_path):
    path = tmp_path / "fine.mlir"
    path.write_text((DATA / "matmul.mlir").read_text())
    code, out, err = run_main(["shrink", str(path), "--backends", "llvm-cpu"], monkeypatch, capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "does not fail on llvm-cpu" in err and "llvm-cpu: run ok" in err and "--backends" in err


def test_signature_that_does_not_match(monkeypatch, capsys):
    code, _, err = run_main(["shrink", str(DATA / "conv1d_stride3.mlir"), "--backends", "llvm-cpu",
                             "--signature", "LLVM ERROR: something else"], monkeypatch, capsys)
    assert code == 2 and "matches --signature" in err and "inferred input/output" in err


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "is empty"),
        (b"\x7fELF\x00\x01binary", "binary file"),
        (b"func.func @main(%a: tensor<4xf32>) -> tensor<5xf32> {\n  return %a : tensor<4xf32>\n}\n",
         "does not verify"),
    ],
)
def test_bad_files_exit_2(content, message, monkeypatch, capsys, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_bytes(content)
    code, out, err = run_main(["shrink", str(path), "--backends", "llvm-cpu"], monkeypatch, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_bad_options_exit_2(monkeypatch, capsys):
    path = str(DATA / "conv1d_stride3.mlir")
    code, _, err = run_main(["shrink", path, "--time", "soon"], monkeypatch, capsys)
    assert code == 2 and "--time" in err
    code, _, err = run_main(["shrink", path, "--backend", "cpuu"], monkeypatch, capsys)
    assert code == 2 and "unknown backend" in err


def test_a_campaign_shrink_keeps_exactly_its_bucket_signature(toolchain, tmp_path):
    """A shrink job names its bucket's Signature: a re-check that fails another way on the same
    backend is not shrunk in its place (None), and the one that matches is kept by equality."""
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.campaign.outcomes import Candidate, ShrinkJob
    from shapefuzz.errors import UsageError
    from shapefuzz.model import Signature, Stage, Status
    from shapefuzz.shrink.run import find_target

    text = (DATA / "conv1d_stride3.mlir").read_text()
    real = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, SIGNATURE.split(": ", 1)[1])
    target, _ = find_target(text, "conv1d_stride3.mlir", toolchain, ("llvm-cpu",), signature=real)
    assert target.signatures == {"llvm-cpu": real}
    other = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "inferred input/output operand")  # a part of it
    with pytest.raises(UsageError, match="no longer fails with llvm-cpu/compile/error: inferred"):
        find_target(text, "conv1d_stride3.mlir", toolchain, ("llvm-cpu",), signature=other)
    candidate = Candidate("k", "conv", 7, (), "{}", text)
    job = ShrinkJob("llvm-cpu", other, 30.0, candidate.input_seed)
    assert IreeTarget(toolchain, tmp_path / "corpus").shrink(candidate, job) is None
    assert not (tmp_path / "corpus").exists()


def test_the_time_limit_bounds_the_whole_shrink(toolchain, tmp_path):
    """A limit that leaves no room after the first check and the final re-check's reserve tries
    nothing, keeps the file as it was and counts it confirmed (the first check just showed it)."""
    text = (DATA / "shrink_conv1d_big.mlir").read_text()
    result = shrink_file("big.mlir", text, toolchain, ("llvm-cpu",), out=str(tmp_path / "m.mlir"), time_limit=0.01,
                         recheck=False)
    assert result.minimized == text and result.stats.trials == 0
    assert result.stopped_because == "time limit" and result.confirmed is True
    assert result.target.phase is None  # no room for the --compile-to phase search either


def test_a_campaign_shrink_saves_the_shrunk_case_with_its_inputs(toolchain, tmp_path):
    """The smaller reproducer replaces the entry's whole payload: its own inputs and NumPy
    outputs go with it, so the entry's repro.sh still runs on the saved arrays. A compile error's
    case goes on as text past its parameter steps (shrink.case_stage): the header-less reproducer
    has no arrays of the case (they would not fit its arguments), and the case it was cut from
    stays beside it (case.mlir) with the arrays of that case's own entry gone with the old payload."""
    import json

    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.campaign.outcomes import Candidate, ShrinkJob
    from shapefuzz.corpus import load_entry

    minimal = (Path(__file__).resolve().parents[2] / "corpus" / "llvm-cpu-compile-error-84f9c6e1e882" / "reproducer.mlir")
    params = dict(json.loads(minimal.read_text().splitlines()[0].split(":", 1)[1])["params"], c=4, f=6)
    target = IreeTarget(toolchain, tmp_path / "corpus")
    grown = target.from_payload("conv", 5, json.dumps(params, sort_keys=True))
    first = target.check(grown, ("llvm-cpu",))
    assert len(first.failures) == 1, first  # the same bug, in a case with room to shrink
    job = ShrinkJob("llvm-cpu", first.failures[0].signature, 60.0, grown.input_seed)
    shrunk = target.shrink(Candidate(grown.key, "conv", 5, grown.features, grown.payload, grown.text), job)
    assert shrunk is not None
    smaller, entry = shrunk.text, shrunk.entry
    assert smaller is not None and smaller != grown.text and entry is not None
    saved = load_entry(entry)
    assert (Path(entry) / "reproducer.mlir").read_text().strip() == smaller.strip()
    case_form = (Path(entry) / "case.mlir").read_text()
    assert "shapefuzz-case" not in smaller and case_form.startswith("// shapefuzz-case:")
    assert saved.case is None and saved.inputs is None and saved.expected is None, "stale arrays of the grown case"
    # the case form is the case as its parameter steps shrank it: its own arrays are the family's to make
    from shapefuzz.case import case_from_mlir
    from shapefuzz.judge.oracle import case_expectation

    case = case_from_mlir(case_form)
    assert case is not None and case.family == "conv" and case_expectation(case, grown.input_seed).inputs
