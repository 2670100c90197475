"""Time to first find of each of the brief's five bug classes, in default campaigns at a release.

Runs one default campaign per seed (`shapefuzz fuzz --time T --seed S --iree-version R`, 2 jobs,
no regression or localization phase: those come after the budget and do not change when a
bucket was first seen), or reads campaign folders already run (`--read`), and says for each
class the campaign-active minutes at which its first bucket was seen, or "-" when none was.

A class is recognised by what it is, never by one reproducer (the brief's "bug classes"):
1. a conv on a GPU lane failing its lowering's shape check ("inferred input/output operand #N
   has shape's dimension #N to be N, but found N": the im2col rewrite's permuted maps);
2. scatter or one_hot giving wrong values on a GPU lane;
3. conv_transpose giving wrong values on a GPU lane;
4. conv_transpose (a grouped backward-data conv) over the GPU's shared-memory limit;
5. topk or sort failing to bufferize on a GPU lane, or hitting a type-mismatch assertion.

    .venv/bin/python bench/bench_classes.py --release 3.2.0 --seeds 1,2,3 --time 10m --keep /tmp/classes
    .venv/bin/python bench/bench_classes.py --read /tmp/classes/3.2.0-seed1 /tmp/classes/3.2.0-seed2
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import harness

GPU = ("rocm", "cuda", "vulkan")
CLASSES = {
    1: "conv layout permutation (GPU lowering's shape check)",
    2: "scatter / one_hot wrong values on a GPU",
    3: "conv_transpose wrong values on a GPU",
    4: "conv_transpose over the GPU shared-memory limit",
    5: "topk / sort failing to bufferize on a GPU",
}
_SHAPE_CHECK = re.compile(r"inferred input/output operand #N has shape's dimension #N to be N, but found N")
_SHARED = re.compile(r"bytes of shared memory|shared memory allocation")
_BUFFERIZE = re.compile(r"bufferiz|type mismatch|Assertion", re.I)


@dataclass(frozen=True)
class Bucket:
    """What a class is recognised by: the families of the candidates that hit it, its lane,
    stage, status and message (the store's normalized one), and when it was first seen."""

    families: frozenset[str]
    lane: str
    stage: str
    status: str
    message: str
    first_seen: float  # campaign-active seconds


def _gpu(b: Bucket) -> bool:
    return b.lane.startswith(GPU)


def _wrong(b: Bucket) -> bool:
    return b.status == "mismatch"  # stage "compare": the numbers came back wrong


RULES: dict[int, Callable[[Bucket], bool]] = {
    1: lambda b: "conv" in b.families and _gpu(b) and b.stage == "compile" and bool(_SHAPE_CHECK.search(b.message)),
    2: lambda b: bool({"scatter", "one_hot"} & b.families) and _gpu(b) and _wrong(b),
    3: lambda b: "conv_transpose" in b.families and _gpu(b) and _wrong(b),
    4: lambda b: "conv_transpose" in b.families and _gpu(b) and bool(_SHARED.search(b.message)),
    5: lambda b: bool({"topk", "sort"} & b.families) and _gpu(b) and b.stage == "compile"
    and bool(_BUFFERIZE.search(b.message)),
}


def buckets(campaign: Path) -> list[Bucket]:
    """The campaign's buckets judged compiler bugs (flaky ones and our own left out)."""
    con = sqlite3.connect(f"file:{campaign / 'campaign.sqlite'}?mode=ro", uri=True)
    try:
        families: dict[str, set[str]] = {}
        for sig, family in con.execute("SELECT h.bucket, c.family FROM hits h JOIN candidates c ON c.key = h.candidate"):
            families.setdefault(sig, set()).add(family)
        found = []
        for sig, sig_json, family, first_seen, state, triage in con.execute(
                "SELECT sig, sig_json, family, first_seen, state, triage FROM buckets"):
            if state == "flaky" or triage not in ("", "compiler bug"):
                continue
            s = json.loads(sig_json)
            found.append(Bucket(frozenset(families.get(sig, set()) | {family}), s.get("backend", ""),
                                s.get("stage", ""), s.get("status", ""), s.get("message", ""), first_seen))
        return found
    finally:
        con.close()


def first_finds(campaign: Path) -> dict[int, float | None]:
    """Each class's first find in campaign-active seconds (None: not found)."""
    seen = buckets(campaign)
    return {k: min((b.first_seen for b in seen if rule(b)), default=None) for k, rule in RULES.items()}


def candidates(campaign: Path) -> int:
    con = sqlite3.connect(f"file:{campaign / 'campaign.sqlite'}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT COUNT(*) FROM candidates WHERE verdict != 'lost'").fetchone()[0])
    finally:
        con.close()


def run_campaign(folder: Path, release: str, seed: int, time: str, jobs: int) -> Path:
    """One default campaign at `release` into `folder`; its campaign folder."""
    campaign = folder / f"{release}-seed{seed}"
    argv = [sys.executable, "-m", "shapefuzz", "fuzz", "--time", time, "--seed", str(seed), "-j", str(jobs),
            "--iree-version", release, "--campaign", str(campaign), "--corpus", str(campaign / "corpus"),
            "--plain", "--no-bisect", "--no-localize", "--fetch-releases", "0"]
    with open(folder / f"{release}-seed{seed}.log", "w") as log:
        subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    return campaign


def _minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--release", default="3.2.0", help="the IREE release the campaigns run (default 3.2.0)")
    parser.add_argument("--seeds", default="1,2,3", help="campaign seeds, comma-separated (default 1,2,3)")
    parser.add_argument("--time", default="10m", help="each campaign's active time (default 10m)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", default=None, help="keep the campaigns in this folder (default: a temporary one)")
    parser.add_argument("--read", nargs="+", default=None, metavar="CAMPAIGN",
                        help="read these campaign folders instead of running any")
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        if args.read:
            campaigns = [Path(p) for p in args.read]
        else:
            folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-classes-"))
            folder.mkdir(parents=True, exist_ok=True)
            campaigns = [run_campaign(folder, args.release, int(s), args.time, args.jobs)
                         for s in args.seeds.split(",")]
        rows = []
        print("campaign | candidates | " + " | ".join(f"class {k}" for k in CLASSES) + "   (minutes to first find)")
        for campaign in campaigns:
            finds = first_finds(campaign)
            rows.append({"campaign": str(campaign), "candidates": candidates(campaign),
                         "first_find_seconds": {str(k): v for k, v in finds.items()}})
            print(f"{campaign.name} | {rows[-1]['candidates']} | " + " | ".join(_minutes(finds[k]) for k in CLASSES))
        for k, what in CLASSES.items():
            found = sum(row["first_find_seconds"][str(k)] is not None for row in rows)
            report.figures.add(f"class {k} ({what}): campaigns finding it", f"{found} of {len(rows)}")
        report.details = {"rows": rows}


if __name__ == "__main__":
    main()
