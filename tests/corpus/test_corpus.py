"""The corpus format: content ids, atomic saves, merges, smaller-reproducer replacement, broken
entries reported with a reason, the index. No compiler needed."""

from __future__ import annotations

import json
import os
import signal
import time

import numpy as np
import pytest

from shapefuzz.case import Case
from shapefuzz.corpus import (
    EXPECTED_FIXED,
    CorpusEntry,
    Finding,
    UnreadableEntry,
    entry_id,
    find_entry,
    iter_entries,
    load_entry,
    reproducer_sizes,
    rebuild_index,
    save_finding,
    update_meta,
)
from shapefuzz.errors import CorpusError
from shapefuzz.model import Signature, Stage, Status

SIG = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "'linalg.generic' op inferred input/output operand #N")
BIG = """func.func @main(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  return %a : tensor<8x8xf32>
}
"""
SMALL = """func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  return %a : tensor<2x2xf32>
}
"""


def finding(mlir: str = BIG, sig: Signature = SIG, inputs=None, expected=None, version="3.13.0", **kw) -> Finding:
    values = dict(
        signature=sig, mlir=mlir, backends=("llvm-cpu", "vmvx"), case=None, seed=0, inputs=inputs,
        expected=expected, toolchain_version=version,
        compile_command=["/opt/x/iree-compile", "/tmp/abc/reproducer.mlir", "--iree-hal-target-device=local",
                         "-o", "/tmp/abc/m.vmfb"],
        detail="/tmp/abc/reproducer.mlir:3:5: error: boom",
    )
    values.update(kw)
    return Finding(**values)


def test_entry_id_is_content_derived_and_readable():
    eid = entry_id(SIG)
    assert eid.startswith("llvm-cpu-compile-error-") and len(eid.rsplit("-", 1)[1]) == 12
    assert entry_id(Signature(SIG.backend, SIG.stage, SIG.status, SIG.message)) == eid
    assert entry_id(Signature("vmvx", SIG.stage, SIG.status, SIG.message)) != eid
    assert entry_id(Signature(SIG.backend, SIG.stage, SIG.status, "other")) != eid


def test_save_creates_self_contained_entry(tmp_path):
    a = np.arange(64, dtype=np.float32).reshape(8, 8) / 4
    path, created = save_finding(tmp_path, finding(inputs=[a], expected=[a]), now="2026-11-01T10:00:00Z")
    assert created and path.name == entry_id(SIG)
    names = sorted(str(p.relative_to(path)) for p in path.rglob("*"))
    assert names == ["expected", "expected/result0.npy", "inputs", "inputs/arg0.npy",
                     "meta.json", "repro.sh", "reproducer.mlir"]
    meta = json.loads((path / "meta.json").read_text())
    assert meta["count"] == 1 and meta["expected_state"] == "failing"
    assert meta["first_seen"] == meta["last_seen"] == "2026-11-01T10:00:00Z"
    assert meta["signature"] == SIG.to_json() and meta["sizes"]["elements"] == 64
    # Nothing machine-specific: no absolute paths anywhere in the entry's text files.
    for name in ("meta.json", "repro.sh"):
        assert "/tmp/abc" not in (path / name).read_text() and "/opt/x" not in (path / name).read_text()
    assert meta["compile_command"][:2] == ["iree-compile", "reproducer.mlir"]
    script = (path / "repro.sh").read_text()
    assert "shapefuzz check reproducer.mlir --backends llvm-cpu" in script and os.access(path / "repro.sh", os.X_OK)
    entry = load_entry(path)
    assert isinstance(entry, CorpusEntry) and entry.signature == SIG and entry.mlir == BIG
    np.testing.assert_array_equal(entry.inputs[0], a)
    # Temporary folders and the lock are hidden and git-ignored.
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore", ".lock", path.name]


def test_second_save_counts_and_keeps_the_smaller_reproducer(tmp_path):
    save_finding(tmp_path, finding(BIG), now="2026-11-01T10:00:00Z")
    path, created = save_finding(tmp_path, finding(SMALL, version="3.12.0"), now="2026-11-02T10:00:00Z")
    assert not created
    entry = load_entry(path)
    assert entry.count == 2 and entry.mlir == SMALL
    assert entry.meta["first_seen"] == "2026-11-01T10:00:00Z" and entry.meta["last_seen"] == "2026-11-02T10:00:00Z"
    assert entry.toolchain_versions == ("3.13.0", "3.12.0")
    save_finding(tmp_path, finding(BIG), now="2026-11-03T10:00:00Z")  # bigger: counted, not kept
    entry = load_entry(path)
    assert entry.count == 3 and entry.mlir == SMALL and entry.meta["sizes"] == reproducer_sizes(SMALL).to_json()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp") or p.name.startswith(".old")] == []


def test_smaller_reproducer_without_inputs_drops_old_inputs(tmp_path):
    big = np.zeros((8, 8), np.float32)
    save_finding(tmp_path, finding(BIG, inputs=[big], expected=[big]))
    path, _ = save_finding(tmp_path, finding(SMALL))
    entry = load_entry(path)
    assert entry.inputs is None and not (path / "inputs").exists()


def test_generated_case_keeps_params_and_seed(tmp_path):
    from shapefuzz.families.generate import draw_case

    case = draw_case("topk", 0)  # real params: meta.json params are validated by the family
    path, _ = save_finding(tmp_path, finding(case.header() + "\n" + SMALL, case=case, seed=7))
    entry = load_entry(path)
    assert entry.case == case and entry.seed == 7
    assert "--seed 7" in (path / "repro.sh").read_text()


def test_broken_and_foreign_entries_are_reported_not_raised(tmp_path):
    good, _ = save_finding(tmp_path, finding())
    other = Signature("vmvx", Stage.RUN, Status.CRASH, "SIGSEGV")
    bad_json, _ = save_finding(tmp_path, finding(sig=other))
    (bad_json / "meta.json").write_text("{not json")
    no_repro, _ = save_finding(tmp_path, finding(sig=Signature("vmvx", Stage.RUN, Status.ERROR, "x")))
    (no_repro / "reproducer.mlir").unlink()
    bad_npy, _ = save_finding(tmp_path, finding(sig=Signature("vmvx", Stage.RUN, Status.ERROR, "y"),
                                                inputs=[np.zeros(2, np.float32)]))
    (bad_npy / "inputs" / "arg0.npy").write_bytes(b"garbage")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README").write_text("hello")
    newer, _ = save_finding(tmp_path, finding(sig=Signature("vmvx", Stage.RUN, Status.ERROR, "z")))
    meta = json.loads((newer / "meta.json").read_text())
    meta["format"] = 99
    (newer / "meta.json").write_text(json.dumps(meta))
    results = {e.id: e for e in iter_entries(tmp_path)}
    assert isinstance(results[good.name], CorpusEntry)
    reasons = {name: e.reason for name, e in results.items() if isinstance(e, UnreadableEntry)}
    assert "not valid JSON" in reasons[bad_json.name]
    assert "missing reproducer.mlir" in reasons[no_repro.name]
    assert "arg0.npy is not a readable .npy" in reasons[bad_npy.name]
    assert "not a shapefuzz corpus entry" in reasons["notes"]
    assert "format 99" in reasons[newer.name]
    assert all("\n" not in r for r in reasons.values())
    with pytest.raises(CorpusError):
        load_entry(bad_json)


def test_index_and_lookup(tmp_path):
    path, _ = save_finding(tmp_path, finding())
    (tmp_path / "junk").mkdir()
    index = rebuild_index(tmp_path).read_text()
    assert f"[{path.name}]({path.name}/)" in index and "junk" in index and "/tmp/" not in index
    assert find_entry(path.name, tmp_path).id == path.name
    assert find_entry(path.name[:20], tmp_path).id == path.name
    assert find_entry(str(path)).id == path.name
    with pytest.raises(CorpusError, match="no corpus entry"):
        find_entry("nothing-like-this", tmp_path)


def test_update_meta_marks_fixed(tmp_path):
    path, _ = save_finding(tmp_path, finding())
    update_meta(path, expected_state=EXPECTED_FIXED)
    assert load_entry(path).expected_state == "fixed"
    assert "expected state: fixed" in (path / "repro.sh").read_text()
    with pytest.raises(CorpusError):
        update_meta(path, expected_state="maybe")


def _sized(n: int) -> Finding:
    text = f"func.func @main(%a: tensor<{n}xf32>) -> tensor<{n}xf32> {{\n  return %a : tensor<{n}xf32>\n}}\n"
    arrays = [np.full((n,), n, np.float32)]
    return finding(text, inputs=arrays, expected=arrays)


def _hammer(corpus: str) -> None:  # child process: ever smaller reproducers, each swapped in
    for n in range(3999, 0, -1):
        save_finding(corpus, _sized(n))


def test_sigkill_at_any_instant_leaves_a_whole_entry(tmp_path):
    rng = np.random.default_rng(0)
    swapped = 0
    for _ in range(12):
        for child in tmp_path.iterdir():  # start each round from a big entry
            if child.is_dir():
                __import__("shutil").rmtree(child)
        save_finding(tmp_path, _sized(4000))
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                _hammer(str(tmp_path))
            finally:
                os._exit(0)
        time.sleep(float(rng.uniform(0.005, 0.08)))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        entries = list(iter_entries(tmp_path))
        assert len(entries) == 1 and isinstance(entries[0], CorpusEntry), entries
        entry = entries[0]
        # The parts agree with each other: the sizes and inputs recorded belong to this reproducer.
        assert entry.meta["sizes"] == reproducer_sizes(entry.mlir, entry.inputs).to_json()
        if entry.count > 1:
            swapped += 1
            assert f"tensor<{entry.inputs[0].size}xf32>" in entry.mlir
            assert entry.expected[0].size == entry.inputs[0].size
            assert entry.count == 1 + 4000 - entry.inputs[0].size
    assert swapped >= 6  # the kills landed while reproducers were being swapped
    save_finding(tmp_path, finding(BIG))  # the next save cleans up whatever the kills left
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".gitignore", ".lock"]


def test_swap_without_rename_exchange_and_recovery(tmp_path, monkeypatch):
    import shapefuzz.corpus.store as store

    monkeypatch.setattr(store, "_exchange", lambda a, b: False)
    path, _ = save_finding(tmp_path, finding(BIG))
    save_finding(tmp_path, finding(SMALL))
    assert load_entry(path).mlir == SMALL
    # A kill between "move the old entry aside" and "rename the new one in": the next save restores it.
    os.rename(path, tmp_path / f".old-{path.name}.deadbeef")
    (tmp_path / f".tmp-{path.name}.cafef00d").mkdir()
    assert list(iter_entries(tmp_path)) == []
    save_finding(tmp_path, finding(BIG))
    entry = load_entry(path)
    assert entry.mlir == SMALL and entry.count == 3
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".gitignore", ".lock"]


def test_an_entry_keeps_its_cause_and_triage_verdict_with_the_evidence(tmp_path):
    path, _ = save_finding(tmp_path, finding(cause="cause-0123456789", triage="suspected driver",
                                             evidence="wrong only on vulkan-spirv\nwhile llvm-cpu agrees"))
    meta = json.loads((path / "meta.json").read_text())
    assert (meta["cause"], meta["triage"]) == ("cause-0123456789", "suspected driver")
    assert meta["triage_evidence"] == "wrong only on vulkan-spirv while llvm-cpu agrees"  # one line
    again, _ = save_finding(tmp_path, finding())  # a sighting outside a campaign keeps the verdict
    assert json.loads((again / "meta.json").read_text())["triage"] == "suspected driver"
    meta["triage"] = ["not", "text"]  # a hand-edited wrong type: one line naming the field
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CorpusError, match="meta.json: triage: expected a string"):
        load_entry(path)
