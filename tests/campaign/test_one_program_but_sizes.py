"""Two compile failures in one pass whose saved reproducers are the same program once their static sizes
are folded are one bug (issue #43 item 2, hand audit of a fresh campaign: a `trunci` of 1024 and of 64
i64s failing `iree-spirv-emulate-i64` on two vector ops; a concat-into-topk at two widths failing the forall
tiling with two messages; a conv to channels-last at two filter sizes failing two verifiers, each filed
twice). A `?` is part of the program, and so is the pass."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.causes.merging import sizes_folded
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.corpus.entry import entry_id
from shapefuzz.model import Signature
from shapefuzz.triage.identity import identity_of

TRUNC = """func.func @main(%x: tensor<{n}xi64>) -> tensor<{n}xi32> {{
  %t = arith.trunci %x : tensor<{n}xi64> to tensor<{n}xi32>
  return %t : tensor<{n}xi32>
}}
"""


def _row(tmp_path: Path, message: str, pass_arg: str, mlir: str, cause: str, first: float) -> BucketRow:
    sig = Signature.from_json({"backend": "vulkan-spirv", "stage": "compile", "status": "error", "message": message})
    detail = f"error: {message}\n// -----// IR Dump After {pass_arg} Failed ({pass_arg}) //----- //\n"
    ident = identity_of("compile", "error", message, detail)
    folder = tmp_path / "corpus" / entry_id(sig)
    folder.mkdir(parents=True)
    (folder / "reproducer.mlir").write_text(mlir)
    (folder / "meta.json").write_text(json.dumps({"signature": sig.to_json(), "signature_text": str(sig)}))
    return BucketRow(sig=str(sig), sig_json={**sig.to_json(), "identity": ident.key, "strong": "1"},
                     backend="vulkan-spirv", stage="compile", status="error", family="topk", count=1, first_seen=first,
                     last_seen=first, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED,
                     repro_key=f"c{first}", repro_size=10, repro_text="x", detail=detail, corpus_entry=str(folder),
                     shrunk_size=None, cause=cause, triage=Triage.COMPILER_BUG, evidence="for input that verifies")


def _causes(tmp_path: Path, second_mlir: str, second_pass: str = "iree-spirv-emulate-i64") -> set[str]:
    rows = [_row(tmp_path, "failed to legalize operation 'vector.insert_strided_slice' that was explicitly marked illegal",
                 "iree-spirv-emulate-i64", TRUNC.format(n=1024), "cause-d72a48ec66", 1.0),
            _row(tmp_path, "failed to legalize operation 'vector.broadcast' that was explicitly marked illegal",
                 second_pass, second_mlir, "cause-9887118963", 2.0)]
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in rows:
        store.put_bucket(row)
    names = {c.name for c in summarize(store).causes}
    store.close()
    return names


def test_the_same_program_at_two_sizes_failing_in_one_pass_is_one_bug(tmp_path: Path):
    assert _causes(tmp_path, TRUNC.format(n=64)) == {"cause-d72a48ec66"}


def test_a_dynamic_dim_or_another_pass_keeps_them_apart(tmp_path: Path):
    dynamic = TRUNC.format(n="?")
    assert _causes(tmp_path / "dyn", dynamic) == {"cause-d72a48ec66", "cause-9887118963"}
    assert _causes(tmp_path / "pass", TRUNC.format(n=64), "iree-spirv-map-memref-storage-class") == \
        {"cause-d72a48ec66", "cause-9887118963"}


def test_sizes_folded_keeps_dynamic_dims_and_element_types():
    assert sizes_folded("tensor<1x?x8xf32> !torch.vtensor<[1,851],f16> tensor<4xi8> tensor<f32>") == \
        "tensor<Nx?xNxf32> !torch.vtensor<[N,N],f16> tensor<Nxi8> tensor<f32>"
