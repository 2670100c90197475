"""What `IreeTarget._onnx_contradiction` costs in the campaign's head process per failing ONNX-spelled
candidate (the case's inputs, its NumPy reference, onnx.reference's run and ONNX's shape inference),
against the candidate's declared tensor elements (`campaign.onnx_contradiction.declared_elements`), to set the
bound above which the head skips it (`ONNX_CHECK_ELEMENTS`).

    PYTHONPATH=src .venv/bin/python bench/studies/bench_onnx_contradiction.py --draw 300 --seed 1

Draws candidates as a campaign does (`IreeTarget.generate`, every family in turn, every other one
from the large regime), keeps those spelled as ONNX models, times the check once each (outside the
per-process memo) and prints the seconds and array bytes per size band, then the slowest cases.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draw", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    from shapefuzz.campaign.iree import IreeTarget, case_of_candidate
    from shapefuzz.campaign.onnx_contradiction import declared_elements
    from shapefuzz.families import DEFAULT_FAMILIES
    from shapefuzz.judge.onnx_judge import case_contradiction
    from shapefuzz.judge.oracle import case_expectation
    from shapefuzz.iree.toolchain import find_toolchain

    target = IreeTarget(find_toolchain(), Path(tempfile.mkdtemp(prefix="bench-onnx-")))
    rows = []
    for index in range(args.draw):
        group = DEFAULT_FAMILIES[index % len(DEFAULT_FAMILIES)]
        try:
            candidate = target.generate(group, args.seed * 100_000 + index, large=index % 2 == 1)
        except Exception:  # noqa: BLE001 - a draw the campaign would skip
            continue
        case = case_of_candidate(candidate)
        if case.params.get("frontend") != "onnx":
            continue
        elements = declared_elements(candidate)
        elements = -1 if elements is None else elements  # its '?' sizes unknown: skipped in the head
        start = time.perf_counter()
        parts = [0.0, 0.0, 0.0]  # NumPy side (inputs and reference), onnx.reference, shape inference
        try:
            expectation = case_expectation(case, candidate.input_seed + 7919)  # a seed the memo has not seen
            parts[0] = time.perf_counter() - start
            second = expectation.second
            parts[1] = time.perf_counter() - start - parts[0]
            case_contradiction(case, second.results if second is not None else None)
            parts[2] = time.perf_counter() - start - parts[0] - parts[1]
            held = sum(a.nbytes for a in [*expectation.inputs, *(expectation.expected or [])])
        except Exception as error:  # noqa: BLE001 - what the head would have swallowed
            held = -1
            print(f"  {group} #{index}: {type(error).__name__}: {str(error)[:100]}")
        rows.append((elements, time.perf_counter() - start, held, group, index, parts))
    bands = [-1, 0, 10**4, 10**5, 3 * 10**5, 10**6, 3 * 10**6, 10**7, 10**12]
    print(f"{len(rows)} ONNX-spelled candidates of {args.draw} drawn")
    print(f"{'declared elements':>24}  {'cases':>5}  {'mean s':>7}  {'max s':>7}  {'max MB':>7}")
    for low, high in zip(bands, bands[1:]):
        band = [r for r in rows if low <= r[0] < high]
        if band:
            label = "sizes unknown" if low < 0 else f"{low:,}-{high:,}"
            print(f"{label:>24}  {len(band):>5}  {sum(r[1] for r in band) / len(band):>7.3f}  "
                  f"{max(r[1] for r in band):>7.3f}  {max(r[2] for r in band) / 1e6:>7.1f}")
    print("slowest:")
    for elements, seconds, held, group, index, parts in sorted(rows, key=lambda r: -r[1])[:12]:
        print(f"  {seconds:7.3f} s  {elements:>12,} elements  {held / 1e6:8.1f} MB  {group} #{index}"
              f"  (NumPy {parts[0]:.3f} s, onnx.reference {parts[1]:.3f} s, shape inference {parts[2]:.3f} s)")
    print("shape inference alone (what is left above the bound): max "
          f"{max((r[5][2] for r in rows), default=0):.3f} s")


if __name__ == "__main__":
    main()
