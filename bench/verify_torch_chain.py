"""Every chain spelled in torch lowers: N draws of every family (each offered a chain; swarm on
odd seeds), every chain drawn spelled in torch where torch writes the family's case and the
chain (`families/context/torch_chain.py`), lowered by the real `iree-compile
--iree-input-type=torch --compile-to=input` (torch to linalg), many modules a call. Prints per
family the draws, the torch chains, those that did not lower, and of those the ones whose root's
torch form fails alone too (a frontend-only IREE bug the chain did not add), and the seconds.

    .venv/bin/python bench/verify_torch_chain.py --n 300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.context_testing import lower_torch, torch_chains  # noqa: E402

from shapefuzz.families import FAMILY_MODULES, get_family  # noqa: E402
from shapefuzz.iree.toolchain import find_toolchain  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--ops", default=",".join(FAMILY_MODULES))
    ap.add_argument("--regime", default="small", choices=("small", "large"))
    args = ap.parse_args()
    toolchain = find_toolchain(None)
    total = chain_only = 0
    for family in args.ops.split(","):
        start = time.monotonic()
        fam = get_family(family)
        cases = torch_chains(family, args.n, regime=args.regime)
        bad = lower_torch(toolchain, [fam.render(t) for t in cases])
        alone = {k for k, _ in lower_torch(toolchain, [fam.render(cases[i].replace(context=())) for i, _ in bad])}
        ours = [b for k, b in enumerate(bad) if k not in alone]
        total, chain_only = total + len(cases), chain_only + len(ours)
        print(f"{family:15s} draws {args.n:5d}  torch chains {len(cases):5d}  not lowering {len(bad):3d}"
              f"  (root alone too {len(alone):3d})  {time.monotonic() - start:6.1f}s", flush=True)
        for i, line in ours[:3]:
            print(f"    {[op.op for op in cases[i].context]}: {line[:160]}")
    print(f"total: {total} torch chains, {chain_only} that fail to lower where their root's torch form lowers")
    return 1 if chain_only else 0


if __name__ == "__main__":
    sys.exit(main())
