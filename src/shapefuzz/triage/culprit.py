"""Where a buffer a checker refuses was made. A checker pass (`LLVMCPUCheckIRBeforeLLVMConversion`,
`GPUCheckResourceUsage`) only notices a bad size: the bug is in the pass that made the buffer (measured
on IREE 3.13: the unbounded `memref.alloca` of a dynamic sort's scratch, and a one-hot's 1 MiB stack
tile, both first appear after `iree-codegen-iree-comprehensive-bufferize`). Naming the checker split one
bug into a cause per message and target; naming the maker keeps it one.

Pure text: the compiler's IR after each pass that changed it (`--mlir-print-ir-tree-dir`, one file a
pass and an op, named `36_1_1_2_5_iree-codegen-iree-comprehensive-bufferize.mlir`: the numbers order
the passes across nested ops) is searched for the first dump holding the offence the message names.
`judge.localize_probe.place_checked_failure` runs the compile."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

# checkers: passes that refuse what an earlier pass made (never the maker themselves)
_CHECKER = re.compile(r"check-?ir-?before|CheckIRBefore|check-?resource-?usage|CheckResourceUsage|"
                      r"verify-?workgroup-?distribution|VerifyWorkgroupDistribution|gpu-?verify-?distribution|"
                      r"GPUVerifyDistribution", re.IGNORECASE)

_UNBOUNDED = re.compile(r"unbounded stack allocation|overflows (?:\d+|N) bits", re.IGNORECASE)
_STACK_LIMIT = re.compile(r"exceeded stack allocation limit of (\d+) bytes", re.IGNORECASE)
_SHARED_LIMIT = re.compile(r"uses (\d+) bytes of shared memory; exceeded the limit of (\d+) bytes", re.IGNORECASE)

# (an attribute dict may come first: `memref.alloca() {alignment = 64 : i64} : memref<...>`)
_ALLOCA = re.compile(r"memref\.alloca\((?P<dyn>[^)]*)\)(?:\s*\{[^{}\n]*\})?[^:\n{]*:\s*(?P<type>memref<(?:[^<>]|<[^<>]*>)*>)")
_ALLOC = re.compile(r"memref\.alloc\((?P<dyn>[^)]*)\)(?:\s*\{[^{}\n]*\})?[^:\n{]*:\s*(?P<type>memref<(?:[^<>]|<[^<>]*>)*>)")
_DUMP_NAME = re.compile(r"^(?P<order>\d+(?:_\d+)*)_(?P<pass>[A-Za-z][\w.-]*)\.mlir$")
_BITS = {"f64": 64, "i64": 64, "index": 64, "f32": 32, "i32": 32, "f16": 16, "bf16": 16, "i16": 16, "i8": 8,
         "i1": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8, "f8E4M3FN": 8, "f8E5M2": 8}
HUGE_DIM = 2 ** 32  # no small input needs a buffer dim this long: a size made from a dynamic dim's bound


def is_checker(failing_pass: str) -> bool:
    return bool(failing_pass and _CHECKER.search(failing_pass))


# passes that only fold and simplify (any canonicalizer, cse): a verifier error inside one is about IR an
# earlier pass made (cause-61e1005f0d: `iree-codegen-config-tracking-canonicalize` folded a size to a constant)
_FOLDING = re.compile(r"canonicaliz|^cse$|^CSE(?:Pass)?$", re.IGNORECASE)


def is_folding_pass(failing_pass: str) -> bool:
    return bool(failing_pass and _FOLDING.search(failing_pass.split("{", 1)[0]))


@dataclass(frozen=True)
class Offence:
    """What the checker refused, as something to look for in a dump."""

    what: str  # "an unbounded memref.alloca", "static stack buffers over 32768 bytes", ...
    found: Callable[[str], bool]


def _bytes(memref: str) -> int | None:
    """The static size of a memref type in bytes (None: dynamic, or an element type not known)."""
    inner = memref[len("memref<"):-1].split(",", 1)[0].strip()
    *dims, element = inner.split("x")
    if element not in _BITS or any(not d.isdigit() for d in dims):
        return None
    count = 1
    for d in dims:
        count *= int(d)
    return count * _BITS[element] // 8


def _unbounded(text: str, pattern: re.Pattern[str] = _ALLOCA) -> bool:
    for m in pattern.finditer(text):
        dims = m.group("type")[len("memref<"):].split(",", 1)[0].split("x")[:-1]
        if m.group("dyn").strip() or any(d == "?" or (d.isdigit() and int(d) >= HUGE_DIM) for d in dims):
            return True
    return False


def _bound_sized(text: str) -> bool:
    """A buffer (heap or stack) with a static dim of HUGE_DIM or more: a size made from the bound."""
    for pattern in (_ALLOCA, _ALLOC):
        for m in pattern.finditer(text):
            dims = m.group("type")[len("memref<"):].split(",", 1)[0].split("x")[:-1]
            if any(d.isdigit() and int(d) >= HUGE_DIM for d in dims):
                return True
    return False


# what a run that runs out of memory may be allocating: a buffer the compiler sized from the bound
BOUND_SIZED = Offence("a buffer with a dim of 2^32 or more (a size made from the 2^53 - 1 bound of a dynamic dim)",
                      _bound_sized)


def made_from_bound(evidence: str) -> bool:
    """Whether a placement's evidence found its buffer sized from the bound (`BOUND_SIZED`): a run
    that runs out of memory names no size, the IR its maker wrote does."""
    return BOUND_SIZED.what in evidence


def _dynamic_workgroup(text: str) -> bool:
    """A workgroup (shared) memory buffer of a dynamic size."""
    return any("workgroup" in m.group("type") and (m.group("dyn").strip() or "?" in m.group("type").split(",", 1)[0])
               for m in _ALLOC.finditer(text))


def _total(pattern: re.Pattern[str], text: str, keep: Callable[[str], bool] = lambda t: True) -> int:
    return sum(_bytes(m.group("type")) or 0 for m in pattern.finditer(text) if keep(m.group("type")))


# diagnostics that say an op should not have been left for the pass that reports it: "LLVM Translation
# failed for operation: builtin.unrealized_conversion_cast" (the conversion to LLVM left it), "'vector.
# transfer_read' op with rank > 1 should be broken down by prior passes"; the pass that made the op is
# the culprit (measured on IREE 3.13: iree-convert-to-llvm left an i64 -> index cast a strided
# `vector.gather` needed; gpu-distribute-shared-memory-copy made 2-D reads of a sort's copy)
_LEFT_FOR = re.compile(r"LLVM Translation failed for operation: [\w.]+|'[\w.]+' op with rank > \S+ should be broken "
                       r"down by prior passes")
_CURRENT_OP = re.compile(r'see current operation: (?:%\S+ = )?"(?P<op>[\w.]+)"\(')


def left_op_of(output: str) -> Offence | None:
    """The op a pass says was left for it (`_LEFT_FOR`), by its name and result types as the
    diagnostic's `see current operation` prints it (generic form), or None. Dumps must be printed
    in generic form too (`--mlir-print-op-generic`) for `found` to read them; the result types, not the
    operands', since a later fold may change an operand's type (a subview folded into its base)."""
    if not _LEFT_FOR.search(output):
        return None
    for line in output.splitlines():
        m = _CURRENT_OP.search(line)
        if m is None or " -> " not in line:
            continue
        results = line.rsplit(" -> ", 1)[1].strip()
        if not results or results == "()":
            return None
        op, tail = f'"{m.group("op")}"(', f"-> {results}"
        return Offence(f"a {m.group('op')} giving {results}",
                       lambda text: any(op in row and row.rstrip().endswith(tail) for row in text.splitlines()))
    return None


# the distribution verifiers' refusal of a write outside a distributed loop ("'vector.store' op write
# affecting operations on global resources are restricted to workgroup distributed contexts", and the
# GPU's "... shared resources are restricted to lane or thread distributed contexts")
_UNDISTRIBUTED = re.compile(r"write affecting operations on \w+ resources are restricted to [\w ]+ distributed contexts")
_WORKGROUP_FORALL_END = re.compile(r"^(?P<indent> *)\} \{mapping = \[#iree_codegen\.workgroup_mapping<")
# ops that compute (and, once bufferized, write) a tensor: one of these beside the workgroup loop runs undistributed
_COMPUTE = re.compile(r"^(?:%[\w#:]+(?:, %[\w#:]+)* = )?(?:linalg\.(?!index\b|yield\b)\w+|iree_linalg_ext\.(?!yield\b)\w+|"
                      r"tensor\.(?:pad|concat|insert_slice)\b)")


def _beside_workgroup_loop(text: str) -> bool:
    """A compute op at the same nesting as a loop distributed to workgroups, outside it: what
    workgroup tiling left undistributed (measured on IREE 3.13: a gather's consumer reading it through
    `tensor.extract`, and a sort's padded in-place operand, both left beside the loop by
    `iree-codegen-tile-and-distribute-to-workgroups-using-forall-op`; the verifier refuses their
    writes after the pipeline)."""
    lines = text.splitlines()
    indents = {m.group("indent") for m in map(_WORKGROUP_FORALL_END.match, lines) if m}
    return any(line.startswith(indent) and _COMPUTE.match(line[len(indent):])
               for indent in indents for line in lines)


UNDISTRIBUTED = Offence("a compute op left beside the loop distributed to workgroups (outside it)",
                        _beside_workgroup_loop)


# "'memref.alloca' op all stack allocations need to be hoisted to the entry block of the function"
_NOT_HOISTED = re.compile(r"stack allocations need to be hoisted to the entry block")
_FUNC_HEAD = re.compile(r"^(?P<indent> *)func\.func\b")


def _alloca_off_entry_block(text: str) -> bool:
    """A `memref.alloca` nested deeper than its function's body (inside a loop or a region: measured on
    IREE 3.13, cause-b91123ee6c's dynamic-size scratch buffer inside the workgroup `scf.forall`, first
    there after `iree-codegen-iree-comprehensive-bufferize`)."""
    body = None
    for line in text.splitlines():
        head = _FUNC_HEAD.match(line)
        if head:
            body = len(head.group("indent")) + 2
        elif body is not None and "memref.alloca(" in line and len(line) - len(line.lstrip(" ")) > body:
            return True
    return False


NOT_HOISTED = Offence("a memref.alloca outside its function's entry block (inside a loop or region)",
                      _alloca_off_entry_block)


def offence_of(output: str) -> Offence | None:
    """The offence a checker's output names (its first error line with its real numbers), or None."""
    if _UNDISTRIBUTED.search(output):
        return UNDISTRIBUTED
    if _NOT_HOISTED.search(output):
        return NOT_HOISTED
    if _UNBOUNDED.search(output) and "'memref.alloc' op" in output:  # a GPU's shared memory: memref.alloc
        return Offence("an unbounded memref.alloc (a dynamic size, or one made from a dynamic dim's bound)",
                       lambda text: _unbounded(text, _ALLOC))
    if _UNBOUNDED.search(output):
        return Offence("an unbounded memref.alloca (a dynamic size, or one made from a dynamic dim's bound)",
                       _unbounded)
    stack = _STACK_LIMIT.search(output)
    if stack:
        limit = int(stack.group(1))
        return Offence(f"static stack buffers over the {limit}-byte limit",
                       lambda text: _total(_ALLOCA, text) > limit)
    shared = _SHARED_LIMIT.search(output)
    if shared:
        limit = int(shared.group(2))
        # a dynamic-size workgroup buffer counts from the pass that made it: pad-dynamic-alloc only gives it
        # its bound's static size (an audit found a sort's unbounded workgroup copy, made by bufferization,
        # and a top-k's 128-row scratch placed at pad-dynamic-alloc)
        return Offence(f"workgroup (shared) memory over the {limit}-byte limit, or of a dynamic size (its bound "
                       "made static later)",
                       lambda text: _total(_ALLOC, text, lambda t: "workgroup" in t) > limit
                       or _dynamic_workgroup(text))
    return None


# a conversion that fails on an op no pass lowered ("failed to legalize unresolved source materialization
# ... that remained live after conversion", then "see existing live user here:" and the op, generic form)
_LIVE_USER = re.compile(r"remained live after conversion.*?see existing live user here:\s*\n\s*(?:%\S+ = )?"
                        r"\"(?P<op>(?:linalg|iree_linalg_ext)\.\w+)\"\(", re.S)


def unlowered_op_of(output: str) -> str:
    """The compute op a conversion found still there, unlowered (`_LIVE_USER`: a `linalg.generic` on
    memrefs at `iree-codegen-flatten-memref-subspan`), or ""."""
    found = _LIVE_USER.search(output)
    return found.group("op") if found else ""


@dataclass(frozen=True)
class Dump:
    order: tuple[int, ...]
    pass_name: str
    path: Path


def dumps_in(tree: Path) -> list[Dump]:
    """Every dump under a `--mlir-print-ir-tree-dir` folder, in the order the passes ran."""
    found = []
    for path in tree.rglob("*.mlir"):
        m = _DUMP_NAME.match(path.name)
        if m and not path.is_symlink():
            found.append(Dump(tuple(int(n) for n in m.group("order").split("_")), m.group("pass"), path))
    return sorted(found, key=lambda d: d.order)


def first_maker(dumps: Iterable[Dump], offence: Offence) -> Dump | None:
    """The first pass after which the offence is in the IR."""
    for dump in dumps:
        try:
            text = dump.path.read_text(errors="replace")
        except OSError:
            continue
        if offence.found(text):
            return dump
    return None


@dataclass(frozen=True)
class Skip:
    """A pass that lowered some of one function's ops of a kind and left the others."""

    dump: Dump
    function: str
    before: int
    after: int


def _counts_by_function(dumps: Iterable[Dump], pattern: re.Pattern[str]) -> list[tuple[str, list[Dump], list[int]]]:
    """Each dispatch function's own dumps (its target's codegen), in pass order, with how often each
    holds `pattern`."""
    by_function: dict[Path, list[Dump]] = {}
    for dump in dumps:
        if dump.path.parent.name.startswith("func_func_") and "hal_executable" in str(dump.path):
            by_function.setdefault(dump.path.parent, []).append(dump)
    out = []
    for folder, held in by_function.items():
        counts = []
        for dump in held:
            try:
                counts.append(len(pattern.findall(dump.path.read_text(errors="replace"))))
            except OSError:
                counts.append(0)
        out.append((folder.name.removeprefix("func_func_"), held, counts))
    return out


def skipping_lowerer(dumps: Iterable[Dump], op: str) -> Skip | None:
    """In the first function (in pass order) whose last dump still holds `op`: the last pass after
    which it holds fewer of them, yet some (measured on IREE 3.13, the #43 audit's cause-faa3c1dfb8:
    `iree-codegen-generic-vectorization` vectorized a dim-0 softmax's reduction and left its
    elementwise tail on `tensor<?x1xf32>`, which `iree-codegen-flatten-memref-subspan` then fails
    on); None where no pass lowered any (the pipeline never lowers that op: no one pass to name)."""
    for function, held, counts in _counts_by_function(dumps, re.compile(rf"(?<![\w.]){re.escape(op)}\b")):
        if not counts or counts[-1] == 0:
            continue
        fewer = [i for i in range(1, len(counts)) if 0 < counts[i] < counts[i - 1]]
        if fewer:
            i = fewer[-1]
            return Skip(held[i], function, counts[i - 1], counts[i])
    return None


# "'func.func' op failed to get lowering configuration": a pass that needs the configuration strategy
# selection put on the root op found none left
_NO_CONFIG = re.compile(r"failed to get lowering configuration")
_LOWERING_CONFIG = re.compile(r"\blowering_config\b")


def config_lost(output: str) -> bool:
    return bool(_NO_CONFIG.search(output))


def config_dropper(dumps: Iterable[Dump]) -> Skip | None:
    """The first pass after which a dispatch function that held a `lowering_config` holds none
    (measured on IREE 3.13, the #43 audit's cause-ab1aa7cfd1: `iree-codegen-config-tracking-canonicalize`
    folds a one-row `iree_linalg_ext.gather` into `tensor.extract`, dropping the only op that carried
    the configuration, and `iree-spirv-tile-and-distribute` then finds none); None where none did."""
    for function, held, counts in _counts_by_function(dumps, _LOWERING_CONFIG):
        dropped = next((i for i in range(1, len(counts)) if counts[i - 1] and not counts[i]), None)
        if dropped is not None and not counts[-1]:
            return Skip(held[dropped], function, counts[dropped - 1], 0)
    return None


__all__ = ["BOUND_SIZED", "Dump", "HUGE_DIM", "NOT_HOISTED", "Offence", "UNDISTRIBUTED", "dumps_in", "first_maker", "is_checker", "is_folding_pass", "left_op_of",
           "made_from_bound", "offence_of", "Skip", "config_dropper", "config_lost", "skipping_lowerer",
           "unlowered_op_of"]
