"""What one op family provides. Everything about a family lives in its own package:
its typed parameters, template, Hypothesis strategy, input generator, NumPy reference and
comparison rule (NNSmith's "one op = one place"), and the data its contract tests read.
`FamilyHooks` is the contract as a type checker sees it; `Family.define` collects the hooks from
the package and checks them against it at import.

Parameters are a frozen dataclass per family (`FamilyParams`); the `// shapefuzz-case:` header
carries them as JSON (`to_json` / `from_json`, which also reads the names older headers used).
Every `Family` method accepts the typed value or its JSON dict, so stored cases load anywhere."""

from __future__ import annotations

import dataclasses
import inspect
import itertools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Iterable, Literal, Protocol, TypeVar, get_args

import numpy as np

from shapefuzz.case import freeze, thaw
from shapefuzz.model import Mismatch

if TYPE_CHECKING:
    from hypothesis import strategies as st

P = TypeVar("P", bound="FamilyParams")


def all_static(value: Any, key: str = "") -> Any:
    """The params with every dynamic-dim flag (a key naming "dyn": a bool, or a list or object of
    bools) set to False; the families spell them in_dyn, dyn_x, orig_dyn, dynamic, ..."""
    if "dyn" in key.lower():
        if isinstance(value, bool):
            return False
        if isinstance(value, list) and all(isinstance(v, bool) for v in value):
            return [False] * len(value)
        if isinstance(value, dict) and all(isinstance(v, bool) for v in value.values()):
            return {k: False for k in value}
    if isinstance(value, dict):
        return {k: all_static(v, k) for k, v in value.items()}
    return value


LINALG = "linalg"  # the frontend of the hand-written forms
# A root-operand form (`operands.py`): "" the plain operands, else an operand as a dense non-splat
# constant, computed inside the graph from constants, a 0-d tensor, or (torch) without static rank.
Operand = Literal["", "const", "folded", "scalar", "unranked"]
OPERANDS: tuple[str, ...] = get_args(Operand)[1:]
FRONTEND_OPERANDS = ("unranked",)  # forms of a frontend's spelling, not of the family's linalg forms


@dataclasses.dataclass(frozen=True)
class FamilyParams:
    """Base of each family's frozen-dataclass parameters. Lists become tuples (hashable,
    immutable). `p["k"]` reads a field by name, for code that walks fields by name.

    `frontend` says how the case is spelled: "linalg" (the family's own forms; left out of the
    JSON) or a frontend dialect ("torch", see frontends.py) rendering the same computation.
    `context` is the producer/consumer chain drawn around the root op (`context/chain.py`: a
    tuple of `ContextOp`, JSON a list of op objects; left out of the JSON when empty).
    `operand` is the root-operand form (`operands.py`; left out of the JSON when plain, "")."""

    # Names older case headers used for a field: {old name: field name}.
    RENAMED: ClassVar[dict[str, str]] = {}

    frontend: str = dataclasses.field(default=LINALG, kw_only=True)
    context: tuple[Any, ...] = dataclasses.field(default=(), kw_only=True)
    operand: Operand = dataclasses.field(default="", kw_only=True)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "context":
                if value:  # a JSON list from a header, or a chain: ValueError names the bad op
                    from shapefuzz.families.context.chain import chain_from_json
                    from shapefuzz.families.context.ops import OPS

                    object.__setattr__(self, f.name, chain_from_json(value, OPS))
                continue
            frozen = freeze(value)
            if frozen is not value:
                object.__setattr__(self, f.name, frozen)

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Old header spellings -> current field names (a family may override to convert values)."""
        for old, new in cls.RENAMED.items():
            if old in data and new not in data:
                data[new] = data.pop(old)
        return data

    @classmethod
    def from_json(cls: type[P], data: P | Mapping[str, Any]) -> P:
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"{cls.__name__}: parameters must be a JSON object, got {type(data).__name__}")
        fixed = cls.upgrade(dict(data))
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(fixed) - set(names))
        missing = [f.name for f in dataclasses.fields(cls)
                   if f.name not in fixed and f.default is dataclasses.MISSING
                   and f.default_factory is dataclasses.MISSING]
        if unknown or missing:
            raise ValueError(f"{cls.__name__}: unknown parameters {unknown}, missing {missing}")
        from shapefuzz.families.field_types import check_fields

        check_fields(cls, fixed)  # `"k": true` is not an integer, whatever Python says
        return cls(**{k: fixed[k] for k in names if k in fixed})

    def to_json(self) -> dict[str, Any]:
        out = {f.name: thaw(getattr(self, f.name)) for f in dataclasses.fields(self)
               if f.name != "context"}
        if out.get("frontend") == LINALG:
            del out["frontend"]  # linalg cases keep the headers they always had
        if not out.get("operand"):
            del out["operand"]  # and so do cases with plain operands
        if self.context:  # context-free cases too
            out["context"] = [op.to_json() for op in self.context]
        return out

    def replace(self: P, **changes: Any) -> P:
        return dataclasses.replace(self, **changes)

    def __getitem__(self, key: str) -> Any:
        if key not in self._names():
            raise KeyError(key)
        return getattr(self, key)

    @classmethod
    def _names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))


def distinct_valid(candidates: Iterable[P], original: P, is_valid: Callable[[P], bool]) -> list[P]:
    """The candidates, in order, that are valid, differ from `original` and are not repeated."""
    out: list[P] = []
    for candidate in candidates:
        if candidate != original and candidate not in out and is_valid(candidate):
            out.append(candidate)
    return out


# Size regimes a strategy draws from: "small" for lanes that execute (the NumPy reference and a
# CPU run stay quick), "large" for compile-only lanes (GPU targets: shared-memory and tiling bugs
# need sizes too slow to execute here).
REGIMES = ("small", "large")


class FamilyHooks(Protocol[P]):
    """The functions a family package defines (its `__init__` imports them), all on typed params.
    A type checker holds a package against it as a module: `hooks: FamilyHooks[pool.Params] = pool`."""

    def strategy(self, regime: str) -> st.SearchStrategy[P]:
        """Draws only cases whose MLIR verifies, sized for the regime (REGIMES)."""

    def render(self, p: P) -> str:
        """The module (without the case header); deterministic."""

    def make_inputs(self, p: P, seed: int) -> list[np.ndarray]:
        """The function's arguments, concrete sizes for `?` dims."""

    def reference(self, p: P, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """The expected results, from the op's definition."""

    def compare(self, p: P, inputs: list[np.ndarray], expected: list[np.ndarray],
                actual: list[np.ndarray]) -> Mismatch | None:
        """None when right, else a typed Mismatch; never a false alarm (topk ties, duplicate
        scatter indices, rounding)."""

    def equivalent_forms(self, p: P) -> Iterable[P]:
        """Other formulations of the same computation."""

    def features(self, p: P) -> Iterable[str]:
        """Coverage labels the campaign steers by."""

    def shrink_candidates(self, p: P) -> Iterable[P]:
        """Simpler params, most aggressive first (proposals only: `Family.shrink_candidates`
        keeps the valid, distinct ones)."""

    def is_valid(self, p: P) -> bool:
        """Whether the params describe a sound computation."""


_HOOKS = tuple(name for name, value in vars(FamilyHooks).items() if inspect.isfunction(value) and name[0] != "_")


class HookTable(dict[str, Any]):
    """A family's hooks by name, also read as attributes (`FamilyHooks`)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _check_hooks(name: str, namespace: Mapping[str, Any]) -> None:
    """Each hook is there and takes the arguments `FamilyHooks` gives it (checked at import)."""
    missing = [h for h in _HOOKS if not callable(namespace.get(h))]
    assert not missing, f"family {name} lacks {missing}"
    for hook in _HOOKS:
        wanted = len(inspect.signature(getattr(FamilyHooks, hook)).parameters) - 1  # less `self`
        try:
            inspect.signature(namespace[hook]).bind(*range(wanted))
        except TypeError as error:
            raise AssertionError(f"family {name}: {hook} does not take {wanted} argument(s) ({error})") from None

Release = tuple[int, int]


@dataclasses.dataclass(frozen=True)
class ReleaseGate:
    """A form of a family (or the family itself: `applies` always true, no `instead`) that some
    releases cannot parse (families declare them as RELEASE_GATES; `gates.py` decides them)."""

    what: str  # what is off, as the lines say it: "form linalg_ext", "torch argsort spelling", "family"
    needs: str  # what the release must parse: "iree_linalg_ext.gather as rendered"
    applies: Callable[[Any], bool]  # the family's params this gate is about
    example: Callable[[], Any]  # params of that form (its rendering is verified with the release)
    instead: Callable[[Any], Any] | None = None  # the same computation in a form older releases parse
    since: Release | None = None  # the first release that parses it, where known (no verify then)


# Comparison rules as exported tests apply them (`export_checks.compare`): the family's `compare`
# written as data. Element-wise with (rtol, atol); None is the result dtype's tolerance (exact for
# integers), 0 and 0 is exact.
DTYPE_TOLERANCE: Mapping[str, Any] = {"kind": "elementwise", "rtol": None, "atol": None}
EXACT: Mapping[str, Any] = {"kind": "elementwise", "rtol": 0.0, "atol": 0.0}


def elementwise_rule(rtol: float | None, atol: float | None) -> dict[str, Any]:
    return {"kind": "elementwise", "rtol": rtol, "atol": atol}


def dtype_tolerance_rule(p: Any) -> dict[str, Any]:
    """The rule of a family that declares none: each result's dtype tolerance."""
    return dict(DTYPE_TOLERANCE)


def no_operand_forms(p: Any) -> tuple[str, ...]:
    """The root-operand forms of a family that declares none: no case takes one."""
    return ()


def no_fixed_operands(p: Any) -> tuple[int, ...]:
    """The operands of a family that declares none: every float operand's values are free."""
    return ()


@dataclasses.dataclass(frozen=True, eq=False)
class Family(Generic[P]):
    """One op family: its hooks (`FamilyHooks`, the package's functions), optionally
    export_rule(p) -> dict (`compare` as a rule exported tests apply, export_checks.compare;
    default: the dtype's tolerance), and its tables, by the names `define` reads in the package:

    FEATURES        what the strategy must reach, within FEATURE_DRAWS draws (default 200)
    SWARM           swarm testing (Groce et al., ISSTA 2012): {knob: p -> p without that
                    feature}, e.g. "static": every dim static
    RARE_CONJUNCTION  features, each a knob's, drawn together far more often with swarm than without
    largest_operand(p) -> [int]  the shape the "large" regime makes big (most draws over 64 KB)
    RELEASE_GATES   (optional) forms older releases cannot parse (gates.py)
    EXAMPLE         one small case (params as in a case header) whose linalg forms and frontend
                    spellings all pass on llvm-cpu with the pinned release
    NO_SPELLING     (optional) {frontend: why it cannot write this family's cases}
    context_fixed_operands(p) -> (int, ...)  (optional) float operands whose values the family
                    chooses: no context producer on them (`context/`)
    context_nonnegative_operands(p) -> (int, ...)  (optional) float operands whose values must
                    stay >= 0 (the reference takes a root of them): no producer puts a negative
                    value into them (`context/`)
    NO_CONTEXT      (optional) why the family's cases are never drawn inside a chain (`context/`)
    mismatch_label(p) -> str  (optional) what a wrong result's signature names instead of the family
                    (a family of many ops: its op)
    INT_LIMIT       (optional) the largest magnitude an integer of its params may have read back
                    from a file (default 2**31; onnx_op's constants span int64)
    operand_forms(p) -> (str, ...)  (optional) the root-operand forms of its linalg forms that write
                    the case (`operands.py`: "const", "folded", "scalar"), p's own form ignored
    OPERAND_EXAMPLES  (optional) {form: params of one small case in it} (the form's release gate)
    """

    name: str
    params_type: type[P]
    # The `FamilyHooks` functions by name, and any a wrapper adds (`context_onnx_model`, ...): a
    # HookTable, so read by name or as attributes (any mapping given is made one).
    hooks: HookTable
    # Features the strategy must reach within `feature_draws` draws (checked by the contract test).
    reached_features: tuple[str, ...] = ()
    feature_draws: int = 200
    # Params of one small case whose forms and spellings all pass on llvm-cpu (tests/families/test_torch_forms.py).
    example: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    # Frontends that cannot write this family's cases, and why: {frontend: reason}.
    no_spelling: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Swarm knobs: name -> a projection that removes one feature (kept only when still valid).
    swarm_knobs: Mapping[str, Callable[[Any], Any]] = dataclasses.field(default_factory=dict)
    rare_conjunction: tuple[str, ...] = ()
    largest_operand: Callable[[Any], list[int]] | None = None
    # The family's comparison as data, for exported tests (see `comparison_rule`).
    export_rule: Callable[[Any], Mapping[str, Any]] = dtype_tolerance_rule
    # Forms (or the family) some releases cannot parse, and what is drawn instead (gates.py).
    release_gates: tuple[Any, ...] = ()
    # Float operands whose values the family chooses (an attention mask): no context producer
    # goes on them (the module's `context_fixed_operands`; integer operands never get one).
    fixed_operands: Callable[[Any], tuple[int, ...]] = no_fixed_operands
    # Float operands whose values must stay >= 0 (a batch norm's variance): a producer on them never
    # puts a negative value in (the module's `context_nonnegative_operands`).
    nonnegative_operands: Callable[[Any], tuple[int, ...]] = no_fixed_operands
    # Why no producer/consumer chain is ever drawn around the family's op ("": chains are drawn).
    no_context: str = ""
    int_limit: int = 1 << 31
    # What a mismatch's signature names (None: the family's name), from typed params.
    mismatch_label: Callable[[Any], str] | None = None
    # The root-operand forms that write a case (`operands.py`), and a small example of each.
    operand_forms: Callable[[Any], tuple[str, ...]] = no_operand_forms
    operand_examples: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.hooks, HookTable):
            object.__setattr__(self, "hooks", HookTable(self.hooks))

    @staticmethod
    def define(name: str, params_type: type[P], namespace: Mapping[str, Any]) -> "Family[P]":
        """The family whose hooks are the like-named functions in `namespace` (a package's
        globals()), checked against `FamilyHooks`, with the tables the class names."""
        _check_hooks(name, namespace)
        return Family(
            name, params_type, HookTable({h: namespace[h] for h in _HOOKS}),
            reached_features=tuple(namespace.get("FEATURES", ())),
            feature_draws=namespace.get("FEATURE_DRAWS", 200),
            example=dict(namespace.get("EXAMPLE", {})),
            no_spelling=dict(namespace.get("NO_SPELLING", {})),
            swarm_knobs=dict(namespace.get("SWARM", {})),
            rare_conjunction=tuple(namespace.get("RARE_CONJUNCTION", ())),
            largest_operand=namespace.get("largest_operand"),
            export_rule=namespace.get("export_rule", dtype_tolerance_rule),
            release_gates=tuple(namespace.get("RELEASE_GATES", ())),
            fixed_operands=namespace.get("context_fixed_operands", no_fixed_operands),
            nonnegative_operands=namespace.get("context_nonnegative_operands", no_fixed_operands),
            no_context=namespace.get("NO_CONTEXT", ""),
            int_limit=namespace.get("INT_LIMIT", 1 << 31),
            mismatch_label=namespace.get("mismatch_label"),
            operand_forms=namespace.get("operand_forms", no_operand_forms),
            operand_examples=dict(namespace.get("OPERAND_EXAMPLES", {})),
        )

    def label(self, params: P | Mapping[str, Any]) -> str:
        """What a mismatch's signature names for these params: `mismatch_label`'s, else the family's name."""
        return self.mismatch_label(self.load(params)) if self.mismatch_label is not None else self.name

    def load(self, params: P | Mapping[str, Any]) -> P:
        """Typed params from a typed value or a (possibly old) JSON dict; ValueError if malformed."""
        return self.params_type.from_json(params)

    def strategy(self, regime: str = "small") -> st.SearchStrategy[P]:
        if regime not in REGIMES:
            raise ValueError(f"unknown size regime {regime!r}; choose from {', '.join(REGIMES)}")
        return self.hooks.strategy(regime)

    def swarm_strategy(self, regime: str = "small") -> st.SearchStrategy[P]:
        """Swarm testing: each draw first picks which features it may use (every knob off with
        probability 1/2), then draws a case and removes the features switched off. Omitting
        features makes rare conjunctions of the others common."""
        from hypothesis import strategies as st

        knobs = sorted(self.swarm_knobs)

        @st.composite
        def swarm(draw: Any) -> P:
            off = [knob for knob in knobs if draw(st.booleans())]
            return self.apply_swarm(draw(self.strategy(regime)), off)

        return swarm()

    def apply_swarm(self, params: P | Mapping[str, Any], off: Iterable[str]) -> P:
        """The params with each switched-off knob's feature removed, where that stays valid."""
        p = self.load(params)
        for knob in off:
            q = self.swarm_knobs[knob](p)
            if q != p and self.is_valid(q):
                p = q
        return p

    def render(self, params: P | Mapping[str, Any]) -> str:
        return self.hooks.render(self.load(params))

    def sized_tensor_types(self, params: P | Mapping[str, Any]) -> list[tuple[tuple[int, ...], np.dtype]]:
        """Every tensor the module declares, its `?` dims at the sizes the params give them when
        inputs are built (the case rendered with every dynamic flag off), known before any array
        is: what the array cap and the context draw check. Raises what `render` raises."""
        from shapefuzz.iree.mlirinfo import declared_tensor_types

        data = params.to_json() if isinstance(params, FamilyParams) else dict(params)
        return declared_tensor_types(self.render(all_static(data)))

    def make_inputs(self, params: P | Mapping[str, Any], seed: int) -> list[np.ndarray]:
        return self.hooks.make_inputs(self.load(params), seed)

    def reference(self, params: P | Mapping[str, Any], inputs: list[np.ndarray]) -> list[np.ndarray]:
        return self.hooks.reference(self.load(params), inputs)

    def compare(self, params: P | Mapping[str, Any], inputs: list[np.ndarray], expected: list[np.ndarray],
                actual: list[np.ndarray]) -> Mismatch | None:
        return self.hooks.compare(self.load(params), inputs, expected, [np.asarray(a) for a in actual])

    def equivalent_forms(self, params: P | Mapping[str, Any]) -> list[P]:
        p = self.load(params)
        return distinct_valid(self.hooks.equivalent_forms(p), p, self.hooks.is_valid)

    def features(self, params: P | Mapping[str, Any]) -> list[str]:
        return list(self.hooks.features(self.load(params)))

    def feature_pairs(self, params: P | Mapping[str, Any]) -> list[str]:
        """Every unordered pair of the case's features, as `a&b` (sorted): what swarm steering
        counts, so a rare conjunction of common features is seen as rare."""
        feats = sorted(set(self.features(params)))
        return [f"{a}&{b}" for a, b in itertools.combinations(feats, 2)]

    def is_valid(self, params: P | Mapping[str, Any]) -> bool:
        try:
            p = self.load(params)
            return bool(self.hooks.is_valid(p))
        except (ValueError, TypeError, KeyError, IndexError):
            return False

    def comparison_rule(self, params: P | Mapping[str, Any]) -> dict[str, Any]:
        """How exported tests compare results for these params: the same verdicts as `compare`
        on right and wrong answers (top-k indices by what they select, exact where the inputs
        keep every sum exact, a tolerance elsewhere)."""
        return dict(self.export_rule(self.load(params)))

    def shrink_candidates(self, params: P | Mapping[str, Any]) -> list[P]:
        """The family's proposals that are valid, differ from the params and are not repeated:
        validity is checked here, once, for every family."""
        p = self.load(params)
        return distinct_valid(self.hooks.shrink_candidates(p), p, self.is_valid)
