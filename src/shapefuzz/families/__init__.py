"""The op families, by name (`registry`): `get_family` gives one with its frontend spellings."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, TypeVar

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.errors import UsageError
from shapefuzz.families.base import LINALG, Family, FamilyParams, all_static
from shapefuzz.families.context.wrap import with_context
from shapefuzz.families.frontends import frontend_of, linalg_params, with_frontends
from shapefuzz.families.operands import with_operands
from shapefuzz.families.registry import DEFAULT_FAMILIES, FAMILY_MODULES, own_family

T = TypeVar("T")


def all_families() -> dict[str, Family]:
    return {name: get_family(name) for name in FAMILY_MODULES}


def get_family(name: str) -> Family:
    """The family with its frontend spellings as equivalent forms, its root op drawn inside
    producer/consumer chains (`context/`), and its root-operand forms (`operands`). Built afresh on each call (a cheap wrapper over the
    package's FAMILY): the strategies it hands out are new objects each time, as the draws
    recorded so far were made with."""
    if name not in FAMILY_MODULES:
        raise UsageError(f"unknown op family {name!r}; choose from {', '.join(sorted(FAMILY_MODULES))}")
    return with_operands(with_context(with_frontends(own_family(name))))


def _big_ints(value: Any, limit: int) -> list[int]:
    stack, found = [value], []
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > limit:
            found.append(item)
    return found


# Cases this process found valid, by (family, params JSON, array cap): validation is a pure function
# of those, and a campaign checks one case again at confirm, save and each shrink re-check (an ONNX
# spelling's validation imports the model, tens of milliseconds). Failures are not kept.
_VALID: OrderedDict[tuple[str, str, int], None] = OrderedDict()
_VALID_SIZE = 512


def validate_case(case: Case, where: str = "case ") -> None:
    """A case read back from a file must be one its family builds; raises InvalidInputError."""
    from shapefuzz.errors import InvalidInputError
    from shapefuzz.schema import SchemaError, max_array_bytes

    key = (case.family, case.params_json, max_array_bytes())
    if key in _VALID:
        _VALID.move_to_end(key)
        return
    try:
        validate_params(case.family, case.params, f"{where}params")
    except SchemaError as error:
        raise InvalidInputError(str(error)) from None
    _VALID[key] = None
    if len(_VALID) > _VALID_SIZE:
        _VALID.popitem(last=False)


def forget_validated() -> None:
    """Forget which cases this process found valid: the next `validate_case` of each validates it
    in full (bench/bench_reference.py times validation from cold)."""
    _VALID.clear()


def validate_params(family_name: str, params: dict[str, Any], where: str) -> None:
    """Params read back from a file (case header, corpus entry) must be ones the family renders:
    a known family, no absurd integers, and every tensor the module declares within the array cap
    (refused before anything is allocated). Raises SchemaError naming the field."""
    from shapefuzz.iree.mlirinfo import declared_tensor_types
    from shapefuzz.schema import SchemaError, check_array_bytes

    if family_name not in FAMILY_MODULES:
        raise SchemaError(f"{where[:-len('params')]}family: {family_name!r} is not one of {', '.join(FAMILY_MODULES)}")
    family = get_family(family_name)
    huge = _big_ints(params, family.int_limit)
    if huge:
        raise SchemaError(f"{where}: integer {huge[0]} is out of range")
    try:
        text = family.render(params)
    except Exception as error:  # noqa: BLE001 - family code reading foreign params: any failure means "not valid"
        raise SchemaError(f"{where}: not valid {family_name} parameters ({_why(error)})") from None
    for shape, dtype in declared_tensor_types(text):
        check_array_bytes(shape, dtype, f"{where}: a tensor of the rendered module")
    # `?` dims get their sizes from the params when inputs are built: check those before any is built.
    if all_static(params) != params:
        try:
            sized = family.sized_tensor_types(params)
        except Exception:  # noqa: BLE001 - a family whose static form differs: the check above stands
            return
        for shape, dtype in sized:
            check_array_bytes(shape, dtype, f"{where}: a tensor of the module (with its '?' sizes)")


def _why(error: BaseException) -> str:
    detail = str(error).strip().splitlines()
    return f"{type(error).__name__}: {detail[0][:120]}" if detail else type(error).__name__


def guarded(family_name: str, what: str, call: Callable[[], T]) -> T:
    """Runs family code on params that came from a file; any failure is one InvalidInputError line."""
    from shapefuzz.errors import InvalidInputError, ShapefuzzError

    try:
        return call()
    except ShapefuzzError:
        raise
    except MemoryError:
        raise InvalidInputError(f"{family_name} case: {what} ran out of memory (the arrays are too large)") from None
    except Exception as error:  # noqa: BLE001 - family code reading foreign params
        raise InvalidInputError(f"{family_name} case: {what} failed on these parameters ({_why(error)})") from None


def render_case(case: Case) -> str:
    """The full MLIR file for a case: the header line carrying its parameters, then the module."""
    body = get_family(case.family).render(case.params)
    return case.header() + "\n" + body


def linalg_spelling(case_text: str | None) -> str | None:
    """A frontend-spelled case's own linalg spelling, as a full case file (the family's hand-written
    forms, its frontend taken away), or None: no case, a linalg case already, or one this version no
    longer renders."""
    case = case_from_mlir(case_text) if case_text is not None else None
    if case is None or frontend_of(case.params) == LINALG:
        return None
    try:
        family = get_family(case.family)
        return render_case(Case.make(case.family, linalg_params(family.load(case.params))))
    except Exception:  # noqa: BLE001 - a case this version no longer renders: no evidence either way
        return None


__all__ = ["Family", "FamilyParams", "all_families", "get_family", "linalg_spelling", "render_case", "FAMILY_MODULES", "DEFAULT_FAMILIES", "validate_params",
           "validate_case", "forget_validated", "guarded"]
