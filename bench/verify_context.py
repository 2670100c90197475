"""Every drawn chain verifies: N draws of every family (each offered a chain; swarm on odd seeds),
in both size regimes, verified with the real `iree-opt`, many modules a call. Prints per family
the draws, the chains drawn, those that did not verify (with the first error) and the seconds.

    .venv/bin/python bench/verify_context.py --n 500
    .venv/bin/python bench/verify_context.py --n 500 --ops attention,pool --regimes large
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.context_testing import family_texts, verify  # noqa: E402

from shapefuzz.families import FAMILY_MODULES  # noqa: E402
from shapefuzz.iree.toolchain import find_toolchain  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--ops", default=",".join(FAMILY_MODULES))
    ap.add_argument("--regimes", default="small,large", help="size regimes to draw (default: small,large)")
    args = ap.parse_args()
    toolchain = find_toolchain(None)
    failed = 0
    for family in args.ops.split(","):
        for regime in args.regimes.split(","):
            start = time.monotonic()
            cases, texts = family_texts(family, args.n, seed=0, regime=regime)
            bad = verify(toolchain, texts)
            failed += len(bad)
            print(f"{family:15s} {regime:5s} draws {args.n:5d}  chains {len(cases):5d}  not verifying {len(bad):3d}"
                  f"  {time.monotonic() - start:6.1f}s", flush=True)
            for i, line in bad[:3]:
                print(f"    {[op.op for op in cases[i].context]}: {line[:160]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
