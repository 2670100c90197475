"""`--format iree-test-suites`: the layout iree-org/iree-test-suites uses for its op tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from shapefuzz.errors import UsageError
from shapefuzz.export.plan import Plan, cannot_represent, real_folder
from shapefuzz.files import atomic_write
from shapefuzz.schema import npy_bytes
from shapefuzz.model import Stage


def write_test_suite(p: Plan, out: Path) -> list[Path]:
    """The layout iree-org/iree-test-suites uses for its op tests (torch_ops): a folder per test
    with `test.mlir`, `run_module_io.json` and `expected_result_N.npy`, grouped under a class folder
    (`shapefuzz/<entry>/`), and a per-target config (`configs/`) holding the compile and run flags
    and the expected-failure lists. Their `flat_args` are formulas for random inputs; ours must be
    the exact values (sums exact, scatter coordinates as drawn), so they are `input_N.npy` files
    named in `flat_args`."""
    cannot_represent(p, "iree-test-suites")
    if not p.runs or p.expected is None:
        why = ("its backend runs nowhere (compile-only)" if p.backend.driver is None else
               "it has no inputs and reference results")
        if p.entry.signature.stage != Stage.COMPILE:
            raise UsageError(f"iree-test-suites cannot represent entry {p.entry.id}: {why}, and its tests compare "
                             "results of a run")
    name = re.sub(r"[^a-z0-9-]", "_", p.entry.id)  # load_entry validated the id; never a path
    test = real_folder(real_folder(real_folder(out) / "shapefuzz") / name)
    written = [test / "run_module_io.json", test / "test.mlir"]
    atomic_write(written[1], p.entry.mlir.encode())
    inputs = p.inputs if p.runs and p.inputs is not None else []
    expected = p.expected if p.runs and p.expected is not None else []
    for stem, arrays in (("input", inputs), ("expected_result", expected)):
        for i, array in enumerate(arrays):
            written.append(test / f"{stem}_{i}.npy")
            atomic_write(written[-1], npy_bytes(array))
    tolerances = [(0.0, 0.0) if p.rule.get("kind") == "topk" or (p.rule.get("rtol") == 0 and p.rule.get("atol") == 0)
                  else _suite_tolerance(p.rule, a) for a in expected]
    io_json = {
        "function_name": p.function,
        "flat_args": [f"input_{i}.npy" for i in range(len(inputs))],
        "seed": p.entry.seed,
        "rtol": max([t[0] for t in tolerances], default=0.0),
        "atol": max([t[1] for t in tolerances], default=0.0),
        "equal_nan": False,
        "mode": "compare",
        "file_name": "test.mlir",
        "vmfb_name": "out.vmfb",
        "expected_output": [f"expected_result_{i}.npy" for i in range(len(expected))],
    }
    atomic_write(written[0], (json.dumps(io_json, indent=4) + "\n").encode())
    qualified = f"shapefuzz/{name}"
    sig = p.entry.signature
    config = {
        "config_name": f"shapefuzz_{p.backend.name}",
        "iree_compile_flags": list(p.flags),
        "iree_run_module_flags": [f"--device={p.backend.driver}"] if p.backend.driver else [],
        "skip_compile_tests": [],
        "skip_run_tests": [] if p.runs else [qualified],
        "expected_compile_failures": [qualified] if p.failing and sig.stage == Stage.COMPILE else [],
        "expected_run_failures": [qualified] if p.failing and sig.stage != Stage.COMPILE else [],
    }
    written.append(real_folder(out / "configs") / f"shapefuzz_{p.backend.name}.json")
    atomic_write(written[-1], (json.dumps(config, indent=2) + "\n").encode())
    return written


def _suite_tolerance(rule: dict, array: np.ndarray) -> tuple[float, float]:
    from shapefuzz.export_checks import tolerance

    rtol = tolerance(array.dtype) if rule.get("rtol") is None else rule["rtol"]
    atol = tolerance(array.dtype) if rule.get("atol") is None else rule["atol"]
    return float(rtol), float(atol)
