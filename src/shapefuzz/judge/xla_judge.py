"""A second judge for StableHLO-spelled cases: XLA on the CPU (jax / jaxlib, the optional
`[xla]` extra) compiles the very module IREE got and runs it on the same inputs; its results must
agree with our NumPy reference (by the family's own comparison) before a wrong value is filed.
When they disagree, the fault is ours or XLA's, never IREE's: the oracle files every backend's
comparison as "references disagree" (`onnx_judge.DISAGREE`), as it does for ONNX's reference.

How the module is run (jaxlib 0.10): XLA compiles static shapes only, so the case's function is
renamed private and called from a new `@main` whose arguments have the inputs' concrete sizes
(`stablehlo.convert` to the `?` types and back, between compatible shapes), and
`jax.extend.mlir.refine_polymorphic_shapes` refines every `?` of the module from those sizes
(its shape ops included: `get_dimension_size`, `dynamic_broadcast_in_dim`, ...); the refined
module is compiled by the CPU client's `compile_and_load` and executed on the inputs. Results
are typed as the NumPy reference's shapes (an XLA result of another shape fails to refine, and is
reported as XLA not running the case). Without jax installed there is no judge (None).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import time
import warnings
from typing import Any, Sequence

import numpy as np

from shapefuzz.case import Case
from shapefuzz.judge.onnx_judge import SecondOpinion, show

JUDGE_LANE = "xla-reference"
_MAIN = re.compile(r"func\.func\s+(?:public\s+)?@main\s*\(")
INNER = "shapefuzz_case"
_ELT = {"float32": "f32", "float16": "f16", "float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32",
        "int64": "i64", "uint8": "ui8", "bool": "i1"}


def available() -> bool:
    """Whether jax and jaxlib are installed (the `[xla]` extra)."""
    try:
        return importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jaxlib") is not None
    except (ImportError, ValueError):  # a broken install, or one masked in sys.modules
        return False


@functools.cache
def _client() -> Any:
    """The XLA CPU client (importing jax takes seconds: once per process, on first use)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    # jax warns at every fork of a process it runs in; ours fork only to exec iree-compile and
    # iree-run-module (subprocess: no Python, no lock of jax's runs in the child), and a campaign's
    # workers are spawned, never forked
    warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
    import jax
    import jax.extend.backend

    jax.config.update("jax_enable_x64", True)  # else device_put narrows an i64 array to i32
    return jax.extend.backend.get_backend("cpu")


def _type(shape: Sequence[int], elt: str) -> str:
    return "tensor<" + "".join(f"{s}x" for s in shape) + elt + ">"


def static_module(text: str, arg_types: Sequence[tuple[tuple[int | None, ...], str]],
                  result_types: Sequence[tuple[tuple[int | None, ...], str]],
                  arg_shapes: Sequence[Sequence[int]], result_shapes: Sequence[Sequence[int]]) -> str:
    """The module with its `@main` renamed private and called from a static `@main` taking
    `arg_shapes` and returning `result_shapes` (both with the case's element types)."""
    if not _MAIN.search(text):
        raise ValueError("no func.func @main in the module")
    inner = _MAIN.sub(f"func.func private @{INNER}(", text, count=1)
    dyn_args = [_type(["?" if s is None else s for s in shape], elt) for shape, elt in arg_types]  # type: ignore[misc]
    dyn_res = [_type(["?" if s is None else s for s in shape], elt) for shape, elt in result_types]  # type: ignore[misc]
    st_args = [_type(shape, elt) for shape, (_, elt) in zip(arg_shapes, arg_types)]
    st_res = [_type(shape, elt) for shape, (_, elt) in zip(result_shapes, result_types)]
    lines = [f"func.func @main({', '.join(f'%a{i}: {t}' for i, t in enumerate(st_args))}) -> ({', '.join(st_res)}) {{"]
    for i, (st, dyn) in enumerate(zip(st_args, dyn_args)):
        lines.append(f"  %c{i} = stablehlo.convert %a{i} : ({st}) -> {dyn}")
    calls = ", ".join(f"%c{i}" for i in range(len(st_args)))
    lines.append(f"  %r:{len(dyn_res)} = func.call @{INNER}({calls}) : ({', '.join(dyn_args)}) -> ({', '.join(dyn_res)})")
    for i, (st, dyn) in enumerate(zip(st_res, dyn_res)):
        lines.append(f"  %s{i} = stablehlo.convert %r#{i} : ({dyn}) -> {st}")
    lines.append(f"  return {', '.join(f'%s{i}' for i in range(len(st_res)))} : {', '.join(st_res)}")
    lines.append("}")
    return "module @shapefuzz {\n" + "\n".join(lines) + "\n" + inner + "\n}\n"


def run_xla(text: str, inputs: Sequence[np.ndarray], result_shapes: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """The module's `@main` run by XLA on the CPU; arrays whose dtype differs from the argument's
    element type of the same width (a u8 array for an i8 argument) are passed as that type."""
    import jax
    import jax.extend.mlir
    from jax._src.lib import xla_client

    from shapefuzz.families.torch_ir import boundary

    client = _client()
    bnd = boundary(text)
    refined = jax.extend.mlir.refine_polymorphic_shapes(
        static_module(text, bnd.args, bnd.results, [np.shape(a) for a in inputs], result_shapes).encode(),
        enable_shape_assertions=True, validate_static_shapes=True, enable_shardy=False)
    devices = client.devices()[:1]
    executable = client.compile_and_load(refined, xla_client.DeviceList(tuple(devices)), xla_client.CompileOptions())
    feeds = []
    for array, (_, elt) in zip(inputs, bnd.args):
        a = np.asarray(array)
        if _ELT.get(a.dtype.name) != elt and a.dtype.itemsize * 8 == int(re.sub(r"\D", "", elt) or 0):
            a = a.view(np.dtype(f"int{a.dtype.itemsize * 8}"))  # signless storage read as signed, as IREE does
        feeds.append(jax.device_put(a, devices[0]))
    return [np.asarray(r) for r in executable.execute(feeds)]


def second_opinion(case: Case, inputs: list[np.ndarray], expected: list[np.ndarray]) -> SecondOpinion | None:
    """XLA's verdict on `expected` (our NumPy reference) for a case spelled in StableHLO, or None
    (another spelling, or jax not installed)."""
    from shapefuzz.families import get_family

    family = get_family(case.family)
    p = family.load(case.params)
    if p.frontend != "stablehlo" or not available():
        return None
    text = family.render(p)
    start = time.perf_counter()
    try:
        results = run_xla(text, inputs, [np.shape(e) for e in expected])
    except Exception as error:  # noqa: BLE001 - XLA failing on our module is data, not a crash
        first = (str(error).strip().splitlines() or [""])[0][:300]
        return SecondOpinion(None, "", f"XLA failed: {type(error).__name__}: {first}", time.perf_counter() - start,
                             lane=JUDGE_LANE)
    seconds = time.perf_counter() - start
    mismatch = family.compare(p, inputs, expected, results)
    if mismatch is None:
        return SecondOpinion(tuple(results), "", seconds=seconds, lane=JUDGE_LANE)
    return SecondOpinion(tuple(results), (
        f"the NumPy reference and XLA disagree ({mismatch.detail}); NumPy reference: {show(expected)}; "
        f"XLA: {show(results)}"), seconds=seconds, lane=JUDGE_LANE)


__all__ = ["JUDGE_LANE", "available", "run_xla", "second_opinion", "static_module"]
