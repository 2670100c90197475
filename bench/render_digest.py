"""Digests of everything the families write, for proving a refactor changed no render.

For each family: N derandomized draws from each regime (small, large, swarm), and for each draw the
full case file, every equivalent form, every shrink candidate, the features and the export
comparison rule. Prints one sha256 per family and a total; run it on two checkouts and compare:

    .venv/bin/python bench/render_digest.py --n 60
    PYTHONPATH=/other/checkout/src .venv/bin/python bench/render_digest.py --n 60
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.family_testing import draw_params  # noqa: E402

from shapefuzz.case import Case  # noqa: E402
from shapefuzz.families import FAMILY_MODULES, get_family, render_case  # noqa: E402


def _rule(family: str, params: dict) -> str:
    """The export comparison rule, read through whichever path this checkout has."""
    try:
        from shapefuzz.export import comparison_rule
    except ImportError:
        return ""
    meta = {"family": family, "params": params}
    entry = type("Entry", (), {"meta": meta})()
    return json.dumps(comparison_rule(entry), sort_keys=True)


def digest(name: str, n: int) -> tuple[str, int]:
    family = get_family(name)
    h = hashlib.sha256()
    count = 0
    for strategy in (family.strategy("small"), family.strategy("large"), family.swarm_strategy("small")):
        for p in draw_params(strategy, n):
            params = family.load(p).to_json()
            parts = [render_case(Case.make(name, params)), json.dumps(family.features(params)), _rule(name, params)]
            parts += [family.render(q) for q in family.equivalent_forms(params)]
            parts += [family.render(q) for q in family.shrink_candidates(params)[:8]]
            for part in parts:
                h.update(part.encode() + b"\0")
            count += len(parts)
    return h.hexdigest()[:16], count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60, help="draws per regime and family")
    args = parser.parse_args()
    total = hashlib.sha256()
    for name in FAMILY_MODULES:
        value, count = digest(name, args.n)
        total.update(value.encode())
        print(f"{name:16s} {value}  ({count} texts)")
    print(f"{'total':16s} {total.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
