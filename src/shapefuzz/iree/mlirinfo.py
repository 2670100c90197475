"""Reads what the runner needs from MLIR text: the entry function, its argument and result types."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from shapefuzz.errors import InvalidInputError
from shapefuzz.schema import SchemaError, check_array_bytes

_FUNC = re.compile(r"func\.func\s+(?:public\s+)?@([\w$.]+)\s*\(")
_TENSOR = re.compile(r"(?<![\w.])tensor<([^<>]*)>")  # not the `tensor<` inside `!torch.vtensor<`
_TORCH_TENSOR = re.compile(r"!torch\.vtensor<\[([^\]]*)\],\s*(\w+)>")

DTYPES: dict[str, np.dtype] = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "si8": np.dtype(np.int8),
    "ui8": np.dtype(np.uint8),
    "si32": np.dtype(np.int32),
    "si64": np.dtype(np.int64),
}


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int | None, ...]  # None for a dynamic dim
    element: str  # "f32", "i8", ...

    @property
    def dynamic_dims(self) -> int:
        return sum(d is None for d in self.shape)

    def to_iree(self, concrete: tuple[int, ...]) -> str:
        return "x".join([*map(str, concrete), self.element])


@dataclass(frozen=True)
class FunctionInfo:
    name: str
    args: tuple[TensorType, ...]
    results: int
    arg_names: tuple[str, ...] = ()  # each argument's SSA name (`%arg0`), in order


def split_top_level(text: str) -> list[str]:
    """Split at the commas not nested in <>, (), [] or {}."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if "".join(current).strip():
        parts.append("".join(current))
    return parts


def _matching_paren(text: str, open_index: int) -> int:
    depth = 0
    for i in range(open_index, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    raise InvalidInputError("unbalanced parentheses in the function signature")


def _dim(text: str, type_text: str) -> int | None:
    text = text.strip()
    if text in ("?", "-1"):
        return None
    if not text.isdigit() or len(text) > 18:
        raise InvalidInputError(f"argument type {type_text.strip()[:80]!r}: dim {text[:20]!r} is not a size or '?'")
    return int(text)


def parse_tensor_type(text: str) -> TensorType:
    match = _TENSOR.search(text)
    if match:
        *dims, element = match.group(1).split("x")
        return TensorType(tuple(_dim(d, text) for d in dims), element.strip())
    match = _TORCH_TENSOR.search(text)
    if match:
        dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
        return TensorType(tuple(_dim(d, text) for d in dims), match.group(2))
    raise InvalidInputError(f"argument type {text.strip()[:80]!r} is not a ranked tensor")


def declared_tensor_types(text: str) -> list[tuple[tuple[int, ...], np.dtype]]:
    """Every static-shaped `tensor<...>` the text declares with a known element type, `?` dims
    counted as 1: what the array cap checks before anything is built."""
    found = []
    for body in set(_TENSOR.findall(text)):
        *dims, element = body.split("x")
        if element.strip() not in DTYPES or not all(d.strip() == "?" or d.strip().isdigit() for d in dims):
            continue
        found.append((tuple(1 if d.strip() == "?" else int(d) for d in dims), DTYPES[element.strip()]))
    for dims_text, element in set(_TORCH_TENSOR.findall(text)):  # !torch.vtensor<[2,?,3],f32>
        dims = [d.strip() for d in dims_text.split(",") if d.strip()]
        if element not in DTYPES or not all(d in ("?", "-1") or d.isdigit() for d in dims):
            continue
        found.append((tuple(1 if d in ("?", "-1") else int(d) for d in dims), DTYPES[element]))
    return found


def function_info(text: str, name: str | None = None) -> FunctionInfo:
    """The named function, else `main`, else the first public function in the module."""
    found = [(m.group(1), m.end() - 1) for m in _FUNC.finditer(text)]
    if not found:
        raise InvalidInputError("no func.func in the file")
    chosen = next((f for f in found if f[0] == (name or "main")), None)
    if chosen is None:
        if name is not None:
            raise InvalidInputError(f"no function @{name} in the file")
        chosen = found[0]
    func_name, open_index = chosen
    close = _matching_paren(text, open_index)
    args, names = [], []
    for arg in split_top_level(text[open_index + 1 : close]):
        name, _, type_text = arg.partition(":")
        args.append(parse_tensor_type(type_text.split("{")[0]))
        names.append(name.strip())
    rest = text[close + 1 :].lstrip()
    results = 0
    if rest.startswith("->"):
        result_text = rest[2:].lstrip()
        if result_text.startswith("("):
            end = _matching_paren(result_text, 0)
            results = len(split_top_level(result_text[1:end]))
        else:
            results = 1
    return FunctionInfo(func_name, tuple(args), results, tuple(names))


def check_given_inputs(info: FunctionInfo, inputs: list[np.ndarray]) -> None:
    """`--inputs` against the function's signature: as many arrays as arguments, each of its
    argument's rank, static sizes and element type. A mismatch is the user's (exit 2), never a
    finding: the runtime would refuse the call on every backend alike."""
    if len(inputs) != len(info.args):
        raise InvalidInputError(f"--inputs holds {len(inputs)} array(s); @{info.name} takes {len(info.args)} "
                                "argument(s)")
    for i, (array, arg) in enumerate(zip(inputs, info.args)):
        fits = array.ndim == len(arg.shape) and all(d is None or d == n for d, n in zip(arg.shape, array.shape))
        want = DTYPES.get(arg.element)
        # a signless i8 carries u8 data too (a quantized operand read unsigned: `arith.extui`)
        same = want is None or array.dtype == want or (arg.element == "i8" and array.dtype == np.uint8)
        if not fits or not same:
            shape = "x".join("?" if d is None else str(d) for d in arg.shape)
            raise InvalidInputError(f"--inputs array {i} is {'x'.join(map(str, array.shape)) or 'scalar'} "
                                    f"{array.dtype}; argument {i} of @{info.name} is tensor<{shape}"
                                    f"{'x' if shape else ''}{arg.element}>")


def random_inputs(info: FunctionInfo, seed: int, dynamic_size: int) -> list[np.ndarray]:
    """Inputs for a file that carries no parameters: small exact values, `?` dims set to dynamic_size."""
    rng = np.random.default_rng(seed)
    arrays: list[np.ndarray] = []
    for arg in info.args:
        if arg.element not in DTYPES:
            raise InvalidInputError(f"cannot make inputs of element type {arg.element}; pass --inputs")
        shape = tuple(dynamic_size if d is None else d for d in arg.shape)
        dtype = DTYPES[arg.element]
        try:
            check_array_bytes(shape, dtype, f"argument {len(arrays)} of @{info.name}")
        except SchemaError as error:
            raise InvalidInputError(str(error)) from None
        if dtype.kind == "f":
            arrays.append((rng.integers(-8, 9, size=shape) / 4).astype(dtype))
        elif dtype.kind == "b":
            arrays.append(rng.integers(0, 2, size=shape).astype(dtype))
        else:
            arrays.append(rng.integers(-4, 5, size=shape).astype(dtype))
    return arrays


# A type stands alone (`: f16`) or ends a shape (`4xi8`, `?xf16`); `@conv_f16` is a name, not a type.
_ELEMENT_TYPE = re.compile(r"(?:(?<=[\d?]x)|(?<![\w.$%@#^]))(bf16|f8E\w+|[fi]\d+|[su]i\d+)\b")


def element_types(text: str) -> frozenset[str]:
    """The element types a module names anywhere (tensor elements, scalars, constants): what a
    backend's known type limits are decided on before anything is compiled."""
    return frozenset(_ELEMENT_TYPE.findall(text))


_DYNAMIC_DIM = re.compile(r"(?:<|\[|x|,\s*)\?(?=x|,|\])")


# The kinds of op a pipeline-variant lane can change (backends.Backend.affects), by name in any
# spelling: linalg, IREE's LinalgExt, torch (`torch.aten.*`) and ONNX (`onnx.*` in torch.operator).
_NAMED_OPS = (
    ("conv", r"\blinalg\.(?:conv|depthwise_conv)_\w+|\btorch\.aten\.(?:convolution|conv\w*)\b|\bonnx\.Conv\w*"),
    ("pool", r"\blinalg\.pooling_\w+|\btorch\.aten\.\w*_pool\d?d\b|\bonnx\.(?:MaxPool|AveragePool)\b"),
    ("contraction", r"\blinalg\.(?:batch_)?(?:matmul|matvec|vecmat)\w*|\blinalg\.contract\b|"
                    r"\biree_linalg_ext\.attention\b|\btorch\.aten\.(?:matmul|mm|bmm|mv|linear|addmm|baddbmm|"
                    r"scaled_dot_product_attention)\b|\bonnx\.(?:MatMul\w*|Gemm|Attention)\b"),
    ("reduction", r"\blinalg\.(?:reduce|softmax)\b|\btorch\.aten\.(?:_?(?:log_)?softmax|sum|mean|amax|amin|max|min|prod|"
                  r"argmax|argmin|var|std|norm|\w*_norm)\b|\bonnx\.(?:Reduce\w+|Softmax|LogSoftmax|ArgMax|"
                  r"ArgMin|\w*Normalization)\b"),
)
# A dequantize as 3.13's QDQ-to-integer-math rewrite matches it (`iree_linalg_ext.dequantize_affine`,
# which ONNX's DequantizeLinear and PT2E's `quantized_decomposed.dequantize_per_*` lower to). Measured on
# 3.13 (`--compile-to=global-optimization` with the rewrite on and off): it changes such a module with a
# contraction and leaves alone a dequantize written as a linalg.generic, `linalg.quantized_matmul`,
# the `_q` convs, ONNX MatMulInteger and torch's `dequantize.tensor` of a quantized tensor.
_DEQUANTIZE = re.compile(r"\biree_linalg_ext\.dequantize_affine\b|\bonnx\.DequantizeLinear\b|"
                         r"\btorch\.quantized_decomposed\.dequantize_per_\w+")

# A strided `tensor.insert_slice` into a zero splat constant: what frontends emit for a
# backward-data (transposed) conv's zero insertion, and all the strided-insert preprocessing
# passes rewrite (they leave an insert into a `linalg.fill` or with unit or dynamic strides alone).
_ZERO_SPLAT = re.compile(r"(%[\w$.#]+)\s*=\s*arith\.constant\s+dense<(?:-?0(?:\.0*)?(?:e[+-]?\d+)?|false)>\s*:")
_INSERT_SLICE = re.compile(r"\btensor\.insert_slice\s+%[\w$.#]+\s+into\s+(%[\w$.#]+)\s*\[[^\]]*\]\s*\[[^\]]*\]"
                           r"\s*\[([^\]]*)\]")
_REDUCTION_LOOP = re.compile(r'"reduction"|iterator_type<reduction>')
_MAP_RESULTS = re.compile(r"affine_map<\([^)]*\)(?:\[[^\]]*\])?\s*->\s*\(([^)]*)\)>")
_MAP_ALIAS = re.compile(r"^\s*(#[\w$.]+)\s*=\s*(affine_map<[^\n]*>)", re.MULTILINE)
_MULTIPLY = re.compile(r"\barith\.mul[fi]\b")


def _generic_kind(generic: str) -> str | None:
    """What one `linalg.generic` (its attributes and body) is, by its loops, maps and body: no
    reduction loop: None; maps that index by sums of dims (`d1 + d4`): a conv when the body
    multiplies, else a pool; plain dims: a contraction when it multiplies, else a reduction."""
    if not _REDUCTION_LOOP.search(generic):
        return None
    windowed = any(re.search(r"[+*]|floordiv|\bmod\b", results) for results in _MAP_RESULTS.findall(generic))
    multiplies = bool(_MULTIPLY.search(generic))
    return ("conv" if multiplies else "pool") if windowed else ("contraction" if multiplies else "reduction")


def _has_strided_insert(text: str) -> bool:
    """Whether an insert_slice with a static stride other than 1 writes into a zero splat constant."""
    if "tensor.insert_slice" not in text:
        return False
    zeros = set(_ZERO_SPLAT.findall(text))
    return any(dest in zeros and any(s.strip().isdigit() and int(s) != 1 for s in strides.split(","))
               for dest, strides in _INSERT_SLICE.findall(text))


def op_traits(text: str) -> frozenset[str]:
    """The kinds of op the module holds, for the lanes that change only some: "conv", "pool",
    "contraction" (matmul-like, attention), "reduction" (other reductions), from named ops in
    any spelling and from each `linalg.generic` (`_generic_kind`); "qdq" where a contraction or
    conv sits beside a dequantize the QDQ rewrite reads (`_DEQUANTIZE`); and "strided-insert"
    (`_has_strided_insert`)."""
    traits = {name for name, pattern in _NAMED_OPS if re.search(pattern, text)}
    if _has_strided_insert(text):
        traits.add("strided-insert")
    if "linalg.generic" in text:
        aliases = dict(_MAP_ALIAS.findall(text))
        for part in text.split("linalg.generic")[1:]:
            generic = part.split("linalg.yield", 1)[0]  # its attributes and body
            generic = re.sub(r"#[\w$.]+", lambda m: aliases.get(m.group(0), m.group(0)), generic)
            kind = _generic_kind(generic)
            traits |= {kind} if kind else set()
    if traits & {"contraction", "conv"} and _DEQUANTIZE.search(text):
        traits.add("qdq")  # a contraction that may read dequantized operands
    return frozenset(traits)


def module_traits(text: str) -> frozenset[str]:
    """What a backend's known limits and eligibility are decided on before compiling: the element
    types the module names, "dynamic-dims" when a tensor type has a `?` dim, and its kinds of op
    (`op_traits`)."""
    traits = set(element_types(text)) | op_traits(text)
    if _DYNAMIC_DIM.search(text):
        traits.add("dynamic-dims")
        if _DYNAMIC_DIM.search(_result_types(text)):
            traits.add("dynamic-result")  # a `?` dim in a result of the entry function
    return frozenset(traits)


def _result_types(text: str) -> str:
    """The result types of the entry function (`main`, else the first), as written; "" when
    there are none or the text is not understood."""
    found = [(m.group(1), m.end() - 1) for m in _FUNC.finditer(text)]
    if not found:
        return ""
    _, open_index = next((f for f in found if f[0] == "main"), found[0])
    try:
        close = _matching_paren(text, open_index)
    except (InvalidInputError, ValueError, IndexError):
        return ""
    rest = text[close + 1:].lstrip()
    return rest[2:].split("{", 1)[0] if rest.startswith("->") else ""
