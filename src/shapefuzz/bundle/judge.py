"""`shapefuzz bundle-judge DIR results.json`: a bundle's results read back on the machine that
built it. Each case the device got wrong, failed or hung on is checked again here on the
reference lane (llvm-cpu, with the same inputs and NumPy reference, confirmed as a campaign
confirms): right there, it is a finding of the device's lane; wrong there too, the reference or a
bug every backend shares is to blame. A wrong output the runner kept is judged again by the
family's own `compare` (the campaign's judge, of which the runner's rule is the data form).
Compile failures come from the manifest: they were found here, as a campaign finds them.
A device-only wrong value is then placed here (`bundle.place`: the same flags on llvm-cpu, then
the device lane's IR finished on llvm-cpu phase by phase), and its signature's message names the
place ("wrong values in topk [codegen (cuda)]"): one place, one entry.
`--save` puts each device finding into a corpus folder (`check` and `replay` reproduce it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND
from shapefuzz.bundle import layout
from shapefuzz.bundle.place import Placed, place_device_values
from shapefuzz.case import Case, case_from_mlir
from shapefuzz.errors import UsageError
from shapefuzz.files import read_bytes
from shapefuzz.judge.localize_probe import DEFAULT_SECONDS
from shapefuzz.model import ProcessResult, Signature, Stage, Status, Verdict
from shapefuzz.schema import SchemaError, integer, obj
from shapefuzz.iree.toolchain import Toolchain

# What a row concludes.
DEVICE_FINDING = "device finding"  # wrong, failing or hung on the device, right on llvm-cpu
SHARED = "llvm-cpu fails too"  # the reference is suspect, or every backend has the bug
COMPILE_FINDING = "compile finding"  # failed to compile here for the device's target
OURS = "ours"  # does not verify, or our two judges disagree
LIMIT = "target limit"
NOT_RUN = "not run"
FLAKY = "flaky on the device"  # failed once, passed when the runner ran it again: not saved as a finding


@dataclass(frozen=True)
class Row:
    id: str
    family: str
    device: str  # the device's verdict (ok, wrong, error, timeout, not-run) or the compile state
    detail: str
    reference: str  # llvm-cpu's verdict here ("" when not checked)
    family_judge: str  # the family's own compare on the kept outputs ("" when not judged)
    conclusion: str
    signature: str = ""
    twin: str = ""  # a variant lane's llvm-cpu twin and its verdict ("llvm-cpu-o3 right"), if placed
    place: str = ""  # where a device-only wrong value breaks, or "not localized: <why>"
    evidence: str = ""  # what the placing ran and saw

    @property
    def device_finding(self) -> bool:
        return self.conclusion in (DEVICE_FINDING, COMPILE_FINDING)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read_case_mlir(folder: Path, case_id: str) -> tuple[str, Case]:
    """The case's text and its case (from its header), the file inside the bundle (`layout.inside`)."""
    try:
        mlir = read_bytes(layout.inside(folder, layout.CASES, case_id, layout.MLIR)).decode("utf-8")
    except OSError as error:
        raise SchemaError(f"case {case_id}: {layout.MLIR}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise SchemaError(f"case {case_id}: {layout.MLIR} is not UTF-8 text") from None
    case = case_from_mlir(mlir)
    if case is None:
        raise SchemaError(f"case {case_id}: {layout.MLIR} has no shapefuzz-case header")
    return mlir, case


def read_case_text(folder: Path, case_id: str, seed: int | None = None) -> tuple[str, Case, int]:
    """`read_case_mlir` and the case's input seed: case.json's, or `seed`, the manifest's, for a
    case that did not compile and has none."""
    mlir, case = read_case_mlir(folder, case_id)
    if seed is None:
        where = f"case {case_id}: {layout.CASE_JSON}"
        line = obj(layout.read_json(layout.inside(folder, layout.CASES, case_id, layout.CASE_JSON), where), where)
        seed = integer(line.get("input_seed"), f"{where}: input_seed", 0, layout.MAX_SEED)
    return mlir, case, seed


def _verdict(report: Any) -> str:
    """llvm-cpu's verdict here: "ok", or its failures' signatures."""
    if report.verdict == Verdict.PASS:
        return "ok"
    return "; ".join(str(r.signature or r.status.value) for r in report.results if r.failed) or report.verdict.value


def _family_judge(expectation: Any, record: dict[str, Any], case_id: str):
    """The family's own verdict on the outputs the runner kept (None: none kept, or not the case's
    results in number and shape: the runner's detail says so), as a Mismatch or "right"."""
    if "outputs" not in record:
        return None
    actual = [layout.decode(a, f"results: cases.{case_id}.outputs[{i}]") for i, a in enumerate(record["outputs"])]
    assert expectation.compare is not None and expectation.expected is not None
    if len(actual) != len(expectation.expected) or \
            any(a.shape != np.shape(e) for a, e in zip(actual, expectation.expected)):
        return None
    return expectation.compare(expectation.expected, actual) or "right"


def _signature(backend: str, record: dict[str, Any], mismatch: Any, label: str, place: str = "") -> Signature:
    """The bucket a campaign would give this run on the device's lane."""
    from shapefuzz.triage.signature import classify, signature_for

    if record["verdict"] == layout.TIMEOUT:
        return signature_for(backend, Stage.RUN, Status.TIMEOUT, None)
    if record["verdict"] == layout.ERROR:  # (each field's type checked by layout.check_record)
        ran = ProcessResult((), record.get("returncode"), record.get("signal"), False, False, "",
                            record.get("detail", ""), float(record.get("seconds") or 0.0))
        status = classify(ran)
        return signature_for(backend, Stage.RUN, status if status.is_failure else Status.ERROR, ran)
    kind = mismatch.kind.value if hasattr(mismatch, "kind") else "values"
    message = f"{kind} in {label}" if label else kind
    return signature_for(backend, Stage.COMPARE, Status.MISMATCH, None, f"{message} [{place}]" if place else message)


def judge(folder: Path, results_path: Path, toolchain: Toolchain, corpus_dir: Path | None = None,
          localize_seconds: float = DEFAULT_SECONDS) -> list[Row]:
    """Each case's row; `localize_seconds` per device-only wrong value to place it (0: not placed)."""
    from shapefuzz.judge.oracle import case_expectation, case_label, check_module

    try:
        manifest = layout.read_manifest(folder)
        read = layout.read_results(results_path, manifest)
    except SchemaError as error:
        raise UsageError(str(error)) from None
    results = read.cases
    backend = manifest.backend
    if corpus_dir is not None and backend not in BACKENDS:
        raise UsageError(f"--save: {backend} is not a lane of this shapefuzz (build the bundle with --arch sm_80)")
    # a ladder's rungs are not findings of their own (bundle-judge writes the entries' verdicts instead):
    # neither placed nor saved; and an llvm-cpu bundle has no device lane to place
    ladder = manifest.from_corpus
    placing = localize_seconds > 0 and not ladder and \
        ((BACKENDS[backend].variant_of or backend) if backend in BACKENDS else backend) != REFERENCE_BACKEND
    flags = list(manifest.flags)
    if placing and "flags" not in manifest.data:
        raise UsageError(f"{folder}: manifest.json: no flags (the device lane's compile flags, to place a wrong value)")
    rows: list[Row] = []
    for entry in manifest.cases:
        if entry.state == layout.COMPILE_FAILED:  # found here; llvm-cpu's column says whether it is the device lane's alone
            try:
                if entry.input_seed is None:
                    raise SchemaError("manifest.json gives no input_seed")
                mlir, case, seed = read_case_text(folder, entry.id, entry.input_seed)
            except (SchemaError, UnicodeDecodeError) as error:
                raise UsageError(f"case {entry.id}: {error}") from None
            report = check_module(mlir, [REFERENCE_BACKEND], case_expectation(case, seed), toolchain)
            rows.append(Row(entry.id, entry.family, entry.state, entry.detail, _verdict(report), "", COMPILE_FINDING,
                            entry.signature))
            continue
        if entry.state != layout.COMPILED:
            rows.append(Row(entry.id, entry.family, entry.state, entry.detail, "", "",
                            LIMIT if entry.state == layout.UNSUPPORTED else OURS))
            continue
        record = results.get(entry.id)
        if record is None or record["verdict"] == layout.NOT_RUN:
            rows.append(Row(entry.id, entry.family, layout.NOT_RUN, "not in the results" if record is None
                            else record.get("detail", ""), "", "", NOT_RUN))
            continue
        if record["verdict"] == layout.OK or record.get("ours") is True:  # ours: the runner could not read the case
            rows.append(Row(entry.id, entry.family, record["verdict"], str(record.get("detail", "")), "", "",
                            "" if record["verdict"] == layout.OK else OURS))
            continue
        try:
            mlir, case, seed = read_case_text(folder, entry.id)
            expectation = case_expectation(case, seed)
            mismatch = _family_judge(expectation, record, entry.id) if record["verdict"] == layout.WRONG else None
        except (SchemaError, UnicodeDecodeError) as error:
            raise UsageError(f"case {entry.id}: {error}") from None
        report = check_module(mlir, [REFERENCE_BACKEND], expectation, toolchain)
        reference = _verdict(report)
        family_judge = "" if mismatch is None else ("right" if mismatch == "right" else mismatch.detail[:300])
        if mismatch == "right":
            conclusion = OURS  # the rule called wrong what the family calls right: our two judges disagree
        elif record.get("flaky") is True and report.verdict == Verdict.PASS:
            conclusion = FLAKY
        else:
            conclusion = DEVICE_FINDING if report.verdict == Verdict.PASS else SHARED
        placed = None
        if placing and conclusion == DEVICE_FINDING and record["verdict"] == layout.WRONG:
            assert flags is not None and expectation.expected is not None  # checked above; a case has its reference
            placed = place_device_values(mlir, backend, flags, manifest.device, expectation.inputs,
                                         expectation.expected, toolchain, case, localize_seconds)
        signature = _signature(backend, record, mismatch, case_label(case), placed.place if placed else "")
        rows.append(Row(entry.id, entry.family, record["verdict"], str(record.get("detail", "")), reference,
                        family_judge, conclusion, str(signature), placed.twin_text if placed else "",
                        (placed.place or placed.loc.evidence) if placed else "", placed.loc.evidence if placed else ""))
        if corpus_dir is not None and conclusion == DEVICE_FINDING and not ladder:
            _save(corpus_dir, signature, mlir, case, seed, expectation, record, manifest, toolchain, placed,
                  read.run_key(entry.id))
    return rows


def _save(corpus_dir: Path, signature: Signature, mlir: str, case: Case, seed: int, expectation: Any,
          record: dict[str, Any], manifest: layout.Manifest, toolchain: Toolchain, placed: Placed | None,
          run_key: str) -> None:
    """The finding into the corpus; this case's record of this run (`run_key`) is counted once,
    however often the same results are judged."""
    from shapefuzz.corpus import load_entry, make_finding, save_finding, update_meta
    from shapefuzz.triage.record import bug_record

    where = f"{manifest.device} ({manifest.arch or manifest.backend}) on a machine that ran " \
            f"`shapefuzz bundle-run`; llvm-cpu gives the NumPy reference's values here"
    if placed is not None:
        where += f"; {placed.place or 'not placed'}: {placed.loc.evidence}"
    finding = make_finding(signature, mlir, toolchain, case=case, seed=seed, inputs=expectation.inputs,
                           expected=expectation.expected, detail=str(record.get("detail", ""))[:4000],
                           triage="compiler bug", evidence=f"{record['verdict']} on {where}",
                           origin=f"bundle {manifest.bundle_id}")
    path, _ = save_finding(corpus_dir, finding, run_key=run_key)
    if placed is not None:  # the place, as a campaign's localization gives it (bug.localized, the identity)
        meta = load_entry(path).meta
        bug = bug_record(signature.to_json(), str(meta.get("detail") or ""), meta.get("backends") or (),
                         mlir, localized=placed.loc)
        update_meta(path, bug={**(meta.get("bug") or {}), **bug, "device_place": placed.to_json()})


def table_lines(rows: list[Row]) -> list[str]:
    """The rows that are not plain passes, one line each, then the counts."""
    lines = [f"{'case':<22} {'device':<15} {'llvm-cpu':<10} {'conclusion':<18} detail"]
    for row in rows:
        if row.device == layout.OK:
            continue
        detail = row.signature if row.device == layout.COMPILE_FAILED else (row.detail.splitlines() or [""])[0]
        if row.family_judge == "right":
            detail = "the family's own compare calls this output right: the bundle's expected file or rule is off"
        elif row.family_judge:
            detail = f"family: {row.family_judge}"
        if row.place:  # where it breaks says more than how the values differ
            detail = f"place: {row.place}" + (f" (twin {row.twin})" if row.twin not in ("", "-") else "")
        ref = row.reference if len(row.reference) <= 10 else "fails"
        lines.append(f"{row.id:<22} {row.device:<15} {ref or '-':<10} {row.conclusion:<18} {detail[:140]}")
    counts: dict[str, int] = {}
    for row in rows:
        key = row.conclusion or "ok"
        counts[key] = counts.get(key, 0) + 1
    lines.append(", ".join(f"{n} {what}" for what, n in sorted(counts.items(), key=lambda kv: -kv[1])))
    return lines
