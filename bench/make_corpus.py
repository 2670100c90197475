"""A large corpus for timing what reads a corpus (`corpus list`, a campaign's summary and
dashboard): one entry saved through `corpus.save_finding` (a generated topk case, its inputs and
expected outputs), cloned N times with distinct signatures, ids and causes; every 50th is marked
reported upstream. No IREE is needed.

    PYTHONPATH=src python bench/make_corpus.py /tmp/big-corpus --n 5000
    PYTHONPATH=src python bench/make_corpus.py /tmp/big-corpus --n 5000 --time   # and time the readers
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np


def template(corpus: Path) -> Path:
    from shapefuzz.case import Case
    from shapefuzz.corpus import save_finding
    from shapefuzz.corpus.entry import Finding
    from shapefuzz.families import get_family, render_case
    from shapefuzz.model import Signature, Stage, Status

    family = get_family("topk")
    params = family.load({"form": "topk", "indices": "iota", "use": "values", "dtype": "f32", "shape": [8],
                          "input_dyn": [False], "dim": 0, "k": 3, "largest": True, "transpose": False,
                          "values": "wide"})
    case = Case.make("topk", params)
    mlir = render_case(case)
    signature = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "bench failure 0")
    x = np.arange(8, dtype=np.float32)
    finding = Finding(signature, mlir, ("llvm-cpu",), case, 1, [x], [np.sort(x)[::-1][:3].copy()], "3.13.0",
                      ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], "error: bench failure 0",
                      cause="cause-bench-0", triage="compiler bug")
    folder, _ = save_finding(corpus, finding)
    return folder


def clone(corpus: Path, source: Path, n: int) -> None:
    from shapefuzz.corpus import entry_id
    from shapefuzz.model import Signature, Stage, Status

    meta = json.loads((source / "meta.json").read_text())
    for i in range(1, n):
        signature = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, f"bench failure {i}")
        eid = entry_id(signature)
        folder = corpus / eid
        shutil.copytree(source, folder)
        meta.update(id=eid, signature=signature.to_json(), signature_text=str(signature),
                    cause=f"cause-bench-{i % 700}", detail=f"error: bench failure {i}")
        meta.pop("reported", None)
        if i % 50 == 0:
            meta["reported"] = f"https://github.com/iree-org/iree/issues/{i}"
        (folder / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def timed(label: str, work) -> None:
    wall, cpu = time.monotonic(), time.process_time()
    work()
    print(f"{label}: {time.monotonic() - wall:.2f} s wall, {time.process_time() - cpu:.2f} s CPU", flush=True)


def time_readers(corpus: Path) -> None:
    """What a listing cost before (a full load of every entry) and now (cold cache, warm)."""
    from shapefuzz.corpus import iter_entries, list_entries
    from shapefuzz.corpus.listing import forget_listing

    timed("full load of every entry (iter_entries: corpus list before)", lambda: list(iter_entries(corpus)))
    forget_listing(corpus)
    timed("list_entries, cold cache", lambda: list_entries(corpus))
    timed("list_entries, warm cache", lambda: list_entries(corpus))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--only-time", action="store_true", help="time the readers of an existing corpus")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--time", action="store_true", help="then time the readers (a full load, a listing cold and warm)")
    args = ap.parse_args()
    if args.only_time:
        return time_readers(args.corpus)
    if args.corpus.exists():
        sys.exit(f"{args.corpus} exists; give a new folder")
    start = time.monotonic()
    clone(args.corpus, template(args.corpus), args.n)
    print(f"{args.n} entries in {args.corpus} ({time.monotonic() - start:.1f} s)", flush=True)
    if args.time:
        time_readers(args.corpus)


if __name__ == "__main__":
    main()
