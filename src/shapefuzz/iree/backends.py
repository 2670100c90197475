"""The backend registry: small entries (lanes) with a name, the flags to compile for it (a target,
optionally with pipeline-variant flags), the runtime device that executes it, what the target is
known not to do, and whether it is in the default set. Flags and passes are chosen from what the
toolchain's probe says it accepts, so one registry serves releases 3.1 through 3.13.

For the campaign: `BACKENDS[name].limit_for(traits)` before compiling (a known limit: do not
compile), `ineligible_for(traits)` when lane slots are handed out (a known limit, or a variant that
changes nothing for such a module: the slot goes to another lane), `limit_in_error(text)` after a
failure (a limit, not a bug), `DEFAULT_BACKENDS` and `executing_backends(probe, names)`."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from shapefuzz.errors import UsageError
from shapefuzz.iree.mlirinfo import module_traits
from shapefuzz.iree.toolchain import ToolchainProbe
from shapefuzz.iree.vulkan_drivers import no_vulkan_device_note

FlagRule = Callable[[ToolchainProbe], tuple[str, ...] | str | None]  # None: this compiler cannot; str: why not


@dataclass(frozen=True)
class Backend:
    """One lane: a target (flags chosen from the probe), optionally a pipeline variant of it
    (extra flags that change how dispatches are formed or convs lowered), the runtime device that
    executes it, and what the target is known not to do."""

    name: str
    description: str
    flags: FlagRule
    driver: str | None  # runtime driver that executes it ("local-task", "vulkan", "cuda", "hip"); None: compile-only
    is_gpu: bool
    # What this lane cannot handle at all (measured, see README), by trait of the case: an element
    # type ("f16") or a feature ("dynamic-dims", see mlirinfo.module_traits). Decided BEFORE
    # compiling, so nothing is compiled for a known limit.
    known_limits: tuple[tuple[str, str], ...] = ()  # (trait, reason)
    # Error texts that mark a failure as a limit of the target, not a bug (reported apart as
    # "unsupported", never filed). Decided from the error itself, never from what the module mentions.
    error_limits: tuple[tuple[str, str], ...] = ()  # (regular expression, reason)
    # A pipeline variant: flags appended to the target's, each probed (a release without the flag
    # or the pass lists the lane as unavailable, never as an error).
    extra_flags: tuple[str, ...] = ()
    needs_passes: tuple[str, ...] = ()  # pass names the extra flags refer to (iree-opt lists them)
    variant_of: str | None = None
    in_default: bool = False  # part of the default set of lanes
    # Another target on the same runtime driver: a wrong value here is blamed on the driver only
    # if that target gets it wrong too (two targets disagreeing on one driver is the compiler's).
    driver_twin: str | None = None
    # A lane every release has that compiles with the same codegen, where this one's target is newer
    # (vulkan-llvmpipe: 3.0.0 and 3.6.0 have no llvmpipe target, and a SPIR-V bug there fails as it
    # does on vulkan-spirv): a regression range is taken there when the reproducer fails the same way.
    older_stand_in: str | None = None
    emulated: tuple[str, ...] = ()  # element types this target emulates in 32-bit words ("i8")
    # The kinds of op the variant's flags change (mlirinfo.op_traits: "conv", "pool",
    # "contraction", "reduction"); empty: every module. A module with none of them compiles as on the base lane,
    # so the campaign gives its slot to another lane.
    affects: tuple[str, ...] = ()
    # Host CPU flags (/proc/cpuinfo names) the code it builds needs to run here; without them
    # the lane is compile-only.
    cpu_features: tuple[str, ...] = ()

    def limit_for(self, traits: Iterable[str]) -> str | None:
        """Why this lane cannot take a case with these traits (element types such as "f16", features
        such as "dynamic-dims"), decided before compiling so no compile is spent on a known limit;
        None when nothing known rules it out. Traits come from `mlirinfo.module_traits(text)`."""
        present = set(traits)
        for trait, reason in self.known_limits:
            if trait in present:
                return reason
        return None

    def ineligible_for(self, traits: Iterable[str]) -> str | None:
        """Why this lane should not take a case with these traits: a known limit, or a variant
        whose flags change none of the case's ops (it would compile as its base lane does)."""
        present = set(traits)
        limit = self.limit_for(present)
        if limit is not None or not self.affects or present.intersection(self.affects):
            return limit
        return f"its flags change only {' or '.join(self.affects)} ops, and the case has none"

    def limit_for_module(self, mlir_text: str) -> str | None:
        return self.limit_for(module_traits(mlir_text))

    def limit_in_error(self, error_text: str) -> str | None:
        """Why this failure is a limit of the target rather than a bug (decided from the error
        text of a compile or run), or None."""
        for pattern, reason in self.error_limits:
            if re.search(pattern, error_text, re.IGNORECASE):
                return reason
        return None

    def unavailable(self, probe: ToolchainProbe) -> str | None:
        """Why this compiler cannot build this lane, or None."""
        base = self.flags(probe)
        if base is None:
            return "not supported by this compiler"
        if isinstance(base, str):
            return base
        for flag in self.extra_flags:
            name = flag.split("=", 1)[0]
            if not probe.has_flag(name):
                return f"this compiler has no {name}"
        for name in self.needs_passes:
            if not probe.has_pass(name):
                return f"this compiler has no {name} pass"
        return None

    def compile_flags(self, probe: ToolchainProbe) -> tuple[str, ...] | None:
        base = self.flags(probe)
        if not isinstance(base, tuple) or self.unavailable(probe) is not None:
            return None
        # an extra flag overrides the target's flag of the same name (a variant's target CPU)
        mine = {flag.split("=", 1)[0] for flag in self.extra_flags}
        return tuple(flag for flag in base if flag.split("=", 1)[0] not in mine) + self.extra_flags

    def compiles(self, probe: ToolchainProbe) -> bool:
        return self.unavailable(probe) is None

    def executes(self, probe: ToolchainProbe) -> bool:
        return (self.driver is not None and self.compiles(probe) and probe.runs_on(self.driver, self._gpu_target(probe))
                and not self._missing_cpu_features(probe))

    def _missing_cpu_features(self, probe: ToolchainProbe) -> list[str]:
        return [flag for flag in self.cpu_features if flag not in probe.cpu_flags]

    def _gpu_target(self, probe: ToolchainProbe) -> str | None:
        """The arch this lane compiles for (`--iree-cuda-target=sm_80` -> "sm_80", the ROCm
        chip for a HIP lane), or None."""
        for flag in self.compile_flags(probe) or ():
            if flag.split("=", 1)[0] in ("--iree-cuda-target", "--iree-rocm-target", "--iree-hip-target"):
                return flag.split("=", 1)[1]
        return None

    def availability(self, probe: ToolchainProbe) -> str:
        missing = self.unavailable(probe)
        if missing is not None:
            return missing
        if self.driver is None:
            return "compile-only"
        if not probe.has_device(self.driver):
            hint = f" ({no_vulkan_device_note()})" if self.driver == "vulkan" else ""
            return f"compile-only here: no {self.driver} device{hint}"
        if not probe.runs_on(self.driver, self._gpu_target(probe)):
            return f"compile-only here: {probe.device_note(self.driver)}"
        lacking = self._missing_cpu_features(probe)
        if lacking:
            return f"compile-only here: this CPU lacks {', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}"
        return "compiles and executes"

    def describe(self, probe: ToolchainProbe) -> dict:
        """One row of `shapefuzz backends --json`."""
        return {
            "name": self.name,
            "description": self.description,
            "compiles": self.compiles(probe),
            "executes": self.executes(probe),
            "availability": self.availability(probe),
            "flags": list(self.compile_flags(probe) or ()),
            "device": self.driver,
            "variant_of": self.variant_of,
            "default": self.in_default,
            "affects": list(self.affects),
        }


def variant(base: Backend, suffix: str, description: str, *flags: str, passes: tuple[str, ...] = (),
            known_limits: tuple[tuple[str, str], ...] = (), error_limits: tuple[tuple[str, str], ...] = (),
            default: bool = False, affects: tuple[str, ...] = ()) -> Backend:
    """A pipeline-variant lane of `base`: the same target and device (and its limits), with extra
    compile flags, changing the ops in `affects` (empty: every op)."""
    return replace(base, name=f"{base.name}-{suffix}", description=f"{base.name} {description}",
                   extra_flags=base.extra_flags + flags, needs_passes=base.needs_passes + passes,
                   known_limits=base.known_limits + known_limits, error_limits=base.error_limits + error_limits,
                   variant_of=base.name, in_default=default, affects=affects)


def _local(backend: str) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...]:
        if probe.has_flag("--iree-hal-local-target-device-backends"):
            base: tuple[str, ...] = ("--iree-hal-target-device=local", f"--iree-hal-local-target-device-backends={backend}")
        else:  # releases before the target-device flags
            base = (f"--iree-hal-target-backends={backend}",)
        if backend == "llvm-cpu" and probe.has_flag("--iree-llvmcpu-target-cpu"):
            base += ("--iree-llvmcpu-target-cpu=host",)
        return base

    return flags


def _target_device(device: str) -> tuple[str, ...]:
    return (f"--iree-hal-target-device={device}",)


def _vulkan(target: str | None) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...] | None:
        if target is None:
            return _target_device("vulkan") if probe.has_flag("--iree-hal-target-device") else (
                "--iree-hal-target-backends=vulkan-spirv",
            )
        if target == "llvmpipe" and not probe.llvmpipe_target:
            return None
        return _target_device("vulkan") + (f"--iree-vulkan-target={target}",)

    return flags


def _rocm(chip: str) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...] | None:
        # The flag was --iree-hip-target up to 3.10; 3.11 took both; 3.12+ only --iree-rocm-target.
        for flag in ("--iree-rocm-target", "--iree-hip-target"):
            if probe.has_flag(flag):
                return _target_device("hip") + (f"{flag}={chip}",)
        return None

    return flags


def _cuda(arch: str | None) -> FlagRule:
    """`arch` None: the target the probe picked for the CUDA device here (its own arch when this
    compiler builds code for it that runs, else sm_80's PTX, which the driver JIT-compiles)."""

    def flags(probe: ToolchainProbe) -> tuple[str, ...] | str | None:
        if not probe.has_flag("--iree-cuda-target"):
            return None
        target = arch
        if target is None:
            if not probe.has_device("cuda"):
                return "no CUDA device here to pick a target for"
            if not probe.cuda_runs:
                return f"no target runs on the CUDA device here: {probe.cuda_note}"
            target = probe.cuda_runs[0]
        return _target_device("cuda") + (f"--iree-cuda-target={target}",)

    return flags


# Failures whose error text says the target lacks something (kept apart from bugs, never filed).
_VULKAN_ERROR_LIMITS = (
    (r"8-bit storage|StorageBuffer8BitAccess|capability.*Int8|Int8.*capability",
     "this Vulkan target lacks 8-bit storage or arithmetic"),
    (r"16-bit storage|StorageBuffer16BitAccess|capability.*(?:Int16|Float16)|(?:Int16|Float16).*capability",
     "this Vulkan target lacks 16-bit storage or arithmetic"),
    (r"capability.*(?:Int64|Float64)|(?:Int64|Float64).*capability", "this Vulkan target lacks 64-bit types"),
    (r"failed to legalize operation 'spirv\.|unsupported .*bit width", "an op this Vulkan target cannot express"),
)
_CUDA_ERROR_LIMITS = (
    (r"missing GPU target", "this compiler has no GPU target description for the chosen arch"),
    (r"UNSUPPORTED_PTX_VERSION|no kernel image is available", "the CUDA driver cannot load code for this target"),
)
_SINGLE_DISPATCH = "--iree-preprocessing-pass-pipeline=builtin.module(util.func(iree-preprocessing-make-single-dispatch))"
# The pass gives up on a dispatch region whose results have dynamic dims, by design ("Ignore this
# case for now" in its source). Measured on 3.13 (30 generated cases, 6 per family, on
# llvm-cpu-single-dispatch): of the 8 whose function result has a `?` dim, 5 were refused with the
# error below, 2 (one_hot) crashed in the pass and 1 (scatter) aborted; none of the 22 with static
# results was refused (a case with `?` dims inside and static results, e.g. scatter, compiles). So a
# `?` in a result is a known limit, decided before compiling (no compile, no lane slot); the error
# text stays a limit for the rest.
_SINGLE_DISPATCH_LIMITS: dict[str, Any] = dict(  # variant()'s keyword arguments
    passes=("iree-preprocessing-make-single-dispatch",),
    known_limits=(("dynamic-result", "single-dispatch preprocessing does not handle dynamic dims in results"),),
    error_limits=((r"unhandled dynamic dimensions for created dispatch region",
                   "single-dispatch preprocessing does not handle dynamic dims"),),
)

_CONVS = ("conv",)  # what the conv lowering switches change (mlirinfo.op_traits)
# Zen 4's extensions beyond x86-64-v3 that LLVM's znver4 may use (/proc/cpuinfo names).
ZNVER4_CPU_FLAGS = ("avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512ifma", "avx512vbmi",
                    "avx512_vbmi2", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq", "avx512_bf16", "gfni",
                    "vaes", "vpclmulqdq")

# Intel Haswell's extensions (/proc/cpuinfo names) LLVM may use in user code: the x86-64-v3
# level, AVX2 and FMA without AVX-512 (the ukernels' avx2_fma tiles, not the avx512 ones).
HASWELL_CPU_FLAGS = ("avx", "avx2", "fma", "f16c", "bmi1", "bmi2", "movbe", "abm", "popcnt", "sse4_2")


def _preprocessing(pipeline: str) -> str:
    return f"--iree-preprocessing-pass-pipeline=builtin.module({pipeline})"


def _function_pass(name: str) -> str:
    """A preprocessing pipeline of one function pass (as the bug reports write it)."""
    return _preprocessing(f"util.func({name})")


_CONV_DATA_TILING = ("--iree-dispatch-creation-data-tiling",
                     "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution")
_UKERNELS = "--iree-llvmcpu-enable-ukernels=all"
_STRIDED_INSERT = ("strided-insert",)  # mlirinfo.op_traits: a strided insert_slice into a zero constant


def _cpu_variant(suffix: str, description: str, cpu: str, features: tuple[str, ...], *flags: str,
                 affects: tuple[str, ...]) -> Backend:
    """A default llvm-cpu variant for a named CPU: compile-only where this CPU lacks `features`."""
    return replace(variant(_LLVM_CPU, suffix, description, f"--iree-llvmcpu-target-cpu={cpu}", *flags,
                           default=True, affects=affects), cpu_features=features)


_LLVM_CPU = Backend("llvm-cpu", "CPU through LLVM (reference backend)", _local("llvm-cpu"), "local-task", False,
                    in_default=True)
_VULKAN_LLVMPIPE = Backend("vulkan-llvmpipe", "Vulkan/SPIR-V for Mesa's llvmpipe", _vulkan("llvmpipe"), "vulkan",
                           True, error_limits=_VULKAN_ERROR_LIMITS, in_default=True, driver_twin="vulkan-spirv",
                           older_stand_in="vulkan-spirv")
# ROCm lanes execute (`--device=hip`) only where the probe ran the lane's chip code on a HIP device.
_ROCM_GFX942 = Backend("rocm-gfx942", "AMD MI300 (executes where a HIP device runs gfx942)", _rocm("gfx942"), "hip",
                       True, in_default=True)

_CUDA_SM80 = Backend("cuda-sm80", "NVIDIA Ampere PTX (executes where a CUDA device runs it)", _cuda("sm_80"), "cuda",
                     True, error_limits=_CUDA_ERROR_LIMITS, in_default=True)

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        _LLVM_CPU,
        # Measured on 3.13: f16 has no vmvx lowering ("failed to legalize operation 'arith.constant'"),
        # nor bf16 (x + x on 4 x bf16: "'vm.add.f32' op operand #0 must be 32-bit float, but got 'i32'";
        # a fresh campaign filed it as a bug, cause-adb3be79e3).
        Backend("vmvx", "portable VM interpreter", _local("vmvx"), "local-sync", False,
                known_limits=(("f16", "vmvx has no f16 support"), ("bf16", "vmvx has no bf16 support")),
                in_default=True),
        # Measured on 3.13 (README): on the default profile (no 8/16-bit storage) f16 gives wrong
        # numbers even for x + 1, where the llvmpipe target is right: a limit, nothing compiled.
        # i8 (and bf16) is emulated there (packed into 32-bit words), not missing: it is judged by its
        # outcome (a tensor whose byte size is not a multiple of 4 loses its last word: IREE's bug;
        # measured: x + x on 1 x bf16 gives 0, on 2 and 4 right).
        Backend("vulkan-spirv", "Vulkan/SPIR-V, default profile", _vulkan(None), "vulkan", True,
                known_limits=(("f16", "the default Vulkan profile has no 16-bit storage"),),
                error_limits=_VULKAN_ERROR_LIMITS, in_default=True, driver_twin="vulkan-llvmpipe",
                emulated=("i8", "i16", "bf16")),
        _VULKAN_LLVMPIPE,
        _ROCM_GFX942,
        Backend("rocm-gfx90a", "AMD MI250 (executes where a HIP device runs gfx90a)", _rocm("gfx90a"), "hip", True),
        Backend("rocm-gfx1100", "AMD RDNA3 (executes where a HIP device runs gfx1100)", _rocm("gfx1100"), "hip", True),
        # sm_80 PTX runs on every NVIDIA GPU from Ampere on (the driver JIT-compiles it); in 3.13
        # sm_90, sm_90a and sm_100 fail every input with "missing GPU target".
        _CUDA_SM80,
        Backend("cuda-native", "NVIDIA, the target the probe picked for the GPU here", _cuda(None), "cuda", True,
                error_limits=_CUDA_ERROR_LIMITS),
        # Pipeline variants: the same target with a switch that changes how dispatches are formed
        # or ops lowered (each found in 3.13's --help-hidden and checked to compile a conv). Those
        # that change only some kinds of op (`affects`) take a candidate's slot only when it has
        # one (the conv lanes changed the code of drawn conv cases on 3.13: conv data tiling 18 of
        # 20, no-igemm 2 of 10; im2col fires only on static channels-last convs). Direct conv is
        # there to be asked for (`variants`, `all`).
        variant(_LLVM_CPU, "im2col", "with convs rewritten to im2col + matmul",
                "--iree-global-opt-use-im2col-for-convs", default=True, affects=_CONVS),
        variant(_LLVM_CPU, "data-tiling", "with data tiling (packed matmul operands)",
                "--iree-opt-data-tiling=true", default=True, affects=("contraction",)),
        variant(_LLVM_CPU, "conv-data-tiling", "with experimental data tiling of convs",
                "--iree-dispatch-creation-data-tiling",
                "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution", default=True,
                affects=_CONVS),
        variant(_LLVM_CPU, "single-dispatch", "with the whole function made one dispatch",
                _SINGLE_DISPATCH, **_SINGLE_DISPATCH_LIMITS, default=True),
        variant(_LLVM_CPU, "aggressive-fusion", "with aggressive dispatch-region fusion",
                "--iree-dispatch-creation-enable-aggressive-fusion", default=True,
                affects=("contraction", "reduction")),
        # Measured on 3.13: changes the code only for long reductions (a 1x262144 sum; not 4x4096),
        # and fails an arg-max generic of that size ("failed to form split reduction dispatch").
        variant(_LLVM_CPU, "split-reduction", "with split reductions in dispatch creation",
                "--iree-dispatch-creation-enable-split-reduction", default=True,
                affects=("reduction", "contraction")),
        # 3.13 rewrites contractions over dequantized operands into integer math by default (new
        # in 3.13, "changes floating-point rounding and exceptional-value behavior"): this lane
        # compiles such a case the old way, so the rewrite is checked against it and the reference.
        variant(_LLVM_CPU, "no-qdq-rewrite", "with the QDQ-to-integer-math rewrite off (the float path)",
                "--iree-global-opt-enable-qdq-to-integer-math=false", default=True, affects=("qdq",)),
        # The global optimization level (IREE's default is O0); #20581: O3 made a failing compile pass.
        variant(_LLVM_CPU, "o3", "at optimization level O3", "--iree-opt-level=O3", default=True),
        # Data tiling with ukernels (mmt4d) for AMD Zen 4, as CPU engineers reproduce matmul bugs;
        # executes only on a CPU with Zen 4's AVX-512 extensions.
        _cpu_variant("znver4-data-tiling", "for AMD Zen 4 (znver4) with data tiling and ukernels (executes only "
                     "where the CPU has Zen 4's AVX-512 extensions)", "znver4", ZNVER4_CPU_FLAGS,
                     "--iree-opt-data-tiling=true", _UKERNELS, affects=("contraction",)),
        # The same on an x86 CPU without AVX-512 (iree_uk_mmt4d's AVX2 tiles), and the experimental
        # data-tiled conv with its ukernel (iree_uk_conv_nchwc), as the CPU bug reports of
        # June-September 2026 name them. Measured on 3.13: conv data tiling is materialized only
        # for AVX-512 (on haswell, x86-64-v3 or generic the encodings resolve to the plain layout and
        # no conv ukernel is called), so there is no haswell lane for it.
        _cpu_variant("haswell-data-tiling", "for Intel Haswell (AVX2, no AVX-512) with data tiling and ukernels "
                     "(executes only where the CPU has AVX2 and FMA)", "haswell", HASWELL_CPU_FLAGS,
                     "--iree-opt-data-tiling=true", _UKERNELS, affects=("contraction",)),
        _cpu_variant("znver4-conv-data-tiling", "for AMD Zen 4 (znver4) with experimental data tiling of convs and "
                     "ukernels (executes only where the CPU has Zen 4's AVX-512 extensions)", "znver4",
                     ZNVER4_CPU_FLAGS, *_CONV_DATA_TILING, _UKERNELS, affects=_CONVS),
        # The preprocessing pipelines the bug reports put in front of CPU conv models: convs to
        # channels-last (fully, or with the channels tiled by 4: NCHW4c), filters to channels-last,
        # the whole transpose-convolution pipeline, and the strided-insert conversions of
        # backward-data convs (the zero insertion as a generic; the backward-data pipeline, which
        # also swaps a strided insert with its 1x1 contraction and moves filters to channels-last:
        # on a module without a strided insert it does what the filter lane does, so it is given
        # only those with one).
        variant(_LLVM_CPU, "conv-channels-last", "with convs converted to channels-last (preprocessing)",
                _function_pass("iree-preprocessing-convert-conv-to-channels-last"),
                passes=("iree-preprocessing-convert-conv-to-channels-last",), default=True, affects=_CONVS),
        variant(_LLVM_CPU, "conv-channels-last-tiled", "with convs converted to channels-last, channels tiled by 4 "
                "(preprocessing)", _function_pass("iree-preprocessing-convert-conv-to-channels-last{tiling-factor=4}"),
                passes=("iree-preprocessing-convert-conv-to-channels-last",), default=True,
                affects=_CONVS),
        variant(_LLVM_CPU, "conv-filter-channels-last", "with conv filters converted to channels-last (preprocessing)",
                _function_pass("iree-preprocessing-convert-conv-filter-to-channels-last"),
                passes=("iree-preprocessing-convert-conv-filter-to-channels-last",), default=True, affects=_CONVS),
        variant(_LLVM_CPU, "transpose-conv", "with convs and pools transposed to channels-last (preprocessing)",
                _preprocessing("iree-preprocessing-transpose-convolution-pipeline"),
                passes=("iree-preprocessing-transpose-convolution-pipeline",), default=True, affects=("conv", "pool")),
        variant(_LLVM_CPU, "strided-insert-generic", "with strided inserts into zeros rewritten as a generic "
                "(preprocessing)", _function_pass("iree-preprocessing-convert-strided-insert-slice-to-generic"),
                passes=("iree-preprocessing-convert-strided-insert-slice-to-generic",), default=True,
                affects=_STRIDED_INSERT),
        variant(_LLVM_CPU, "backward-data-conv", "with the backward-data conv preprocessing pipeline",
                _preprocessing("iree-preprocessing-backward-data-conv-pipeline"),
                passes=("iree-preprocessing-backward-data-conv-pipeline",), default=True, affects=_STRIDED_INSERT),
        variant(_ROCM_GFX942, "single-dispatch", "with the whole function made one dispatch",
                _SINGLE_DISPATCH, **_SINGLE_DISPATCH_LIMITS, default=True),
        variant(_ROCM_GFX942, "no-igemm", "with implicit-GEMM conv lowering off",
                "--iree-codegen-llvmgpu-use-igemm=false", default=True, affects=_CONVS),
        variant(_ROCM_GFX942, "direct-conv", "with direct convolution in the tile-and-fuse pipeline",
                "--iree-codegen-llvmgpu-use-direct-convolution", affects=_CONVS),
        variant(_ROCM_GFX942, "o3", "at optimization level O3", "--iree-opt-level=O3", default=True),
        # The preprocessing pipelines ROCm engineers put in front of conv models (module-level
        # pipelines: nested in util.func, 3.13 aborts adding their passes).
        variant(_ROCM_GFX942, "transpose-conv", "with convs and pools transposed to channels-last (preprocessing)",
                _preprocessing("iree-preprocessing-transpose-convolution-pipeline"),
                passes=("iree-preprocessing-transpose-convolution-pipeline",), default=True, affects=("conv", "pool")),
        variant(_ROCM_GFX942, "pad-to-intrinsics", "with conv operands padded to the GPU's intrinsics (preprocessing)",
                _preprocessing("iree-preprocessing-pad-to-intrinsics"),
                passes=("iree-preprocessing-pad-to-intrinsics",), default=True, affects=_CONVS),
        variant(_VULKAN_LLVMPIPE, "im2col", "with convs rewritten to im2col + matmul",
                "--iree-global-opt-use-im2col-for-convs", affects=_CONVS),
        # CUDA's pipeline variants, asked for by name (a GPU box runs them: `shapefuzz bundle
        # --variant`); not in the default set, where CUDA only compiles on most machines.
        variant(_CUDA_SM80, "o3", "at optimization level O3", "--iree-opt-level=O3"),
        variant(_CUDA_SM80, "aggressive-fusion", "with aggressive dispatch-region fusion",
                "--iree-dispatch-creation-enable-aggressive-fusion", affects=("contraction", "reduction")),
        variant(_CUDA_SM80, "single-dispatch", "with the whole function made one dispatch",
                _SINGLE_DISPATCH, **_SINGLE_DISPATCH_LIMITS),
        variant(_CUDA_SM80, "no-igemm", "with implicit-GEMM conv lowering off",
                "--iree-codegen-llvmgpu-use-igemm=false", affects=_CONVS),
    )
}

REFERENCE_BACKEND = "llvm-cpu"
VARIANTS: dict[str, tuple[str, ...]] = {}  # target lane -> its pipeline variants
for _b in BACKENDS.values():
    if _b.variant_of is not None:
        VARIANTS.setdefault(_b.variant_of, ())
        VARIANTS[_b.variant_of] += (_b.name,)
# Names a user may type for a set of backends.
ALIASES: dict[str, tuple[str, ...]] = {
    "cpu": ("llvm-cpu", "vmvx"),
    "vulkan": ("vulkan-spirv", "vulkan-llvmpipe"),
    "rocm": ("rocm-gfx942", "rocm-gfx90a", "rocm-gfx1100"),
    "cuda": ("cuda-sm80", "cuda-native"),
    "variants": tuple(name for names in VARIANTS.values() for name in names),
    "default": tuple(b.name for b in BACKENDS.values() if b.in_default),
    "all": tuple(BACKENDS),
}
DEFAULT_BACKENDS = ALIASES["default"]


CUDA_ARCH = re.compile(r"sm_\d{2,3}[a-z]?")


def cuda_lane(arch: str) -> Backend:
    """The CUDA lane compiling for `arch` ("sm_80"): the registered one where there is one
    (cuda-sm80), else the same lane for that arch, for code compiled here and run on a GPU
    elsewhere (`shapefuzz bundle`)."""
    if not CUDA_ARCH.fullmatch(arch):
        raise UsageError(f"--arch {arch[:40]!r}: give an NVIDIA compute capability such as sm_80 or sm_90")
    name = f"cuda-{arch.replace('_', '')}"
    if name in BACKENDS:
        return BACKENDS[name]
    return replace(BACKENDS["cuda-sm80"], name=name, description=f"NVIDIA {arch}", flags=_cuda(arch))


def any_runs_here(lanes: Iterable[str], probe: ToolchainProbe) -> bool:
    """Whether one of `lanes` runs the module here (a name not in the registry counts as one: it
    is not known to only compile), so a check of them needs inputs and a reference."""
    return any(lane not in BACKENDS or BACKENDS[lane].executes(probe) for lane in lanes)


def executing_backends(probe: ToolchainProbe, names: Iterable[str] = DEFAULT_BACKENDS) -> tuple[str, ...]:
    """Those of `names` that compile and execute with this toolchain here."""
    return tuple(name for name in names if BACKENDS[name].executes(probe))


def resolve_backends(names: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Backend names from a comma-separated string or list; aliases expanded; unknown names
    rejected with the closest match suggested."""
    if names is None:
        return DEFAULT_BACKENDS
    if isinstance(names, str):
        names = [names]
    resolved: list[str] = []
    for chunk in names:
        for name in (part.strip() for part in chunk.split(",")):
            if not name:
                continue
            if name in ALIASES:
                resolved.extend(ALIASES[name])
            elif name in BACKENDS:
                resolved.append(name)
            else:
                close = difflib.get_close_matches(name, list(BACKENDS) + list(ALIASES), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; choose from {', '.join(BACKENDS)}"
                raise UsageError(f"unknown backend {name!r}{hint}")
    if not resolved:
        raise UsageError("no backend selected")
    return tuple(dict.fromkeys(resolved))
