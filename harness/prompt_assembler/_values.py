"""The assembler's value types: the five layers, the trimming strategies, units and reports.

Everything here is a plain immutable value::

    from harness.prompt_assembler import LAYERS, Strategy, Unit

    rule = Unit("refunds", "Refunds above $500 need finance approval.", source="rules.md")
    assert LAYERS[0] == "identity" and Strategy("truncate_tail") is Strategy.TRUNCATE_TAIL

What the lazy manifest needs beyond a layer's report lives in the prompt (``prompt.py``).
"""

# ``fast_new`` exists because a frozen dataclass's ``__init__`` sets each field through
# ``object.__setattr__``: for the reports and the prompt built on every call that is most of
# a small call's cost (``benchmarks/assemble.py``, row 0). It fills the instance's ``__dict__``
# in one update instead, from every field by name (generated from the fields: a field added
# later and not passed raises), and refuses a class that validates in ``__post_init__``.
# ``tests/prompt_assembler/test_assembler_package.py`` checks that it equals the constructor.

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, fields
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Literal, TypeVar, cast

from harness.errors import HarnessError

__all__ = [
    "AUTHORITY",
    "DEFAULT_BUDGETS",
    "DEFAULT_STRATEGIES",
    "INSTRUCTION_LAYERS",
    "LAYERS",
    "LAYER_SEPARATOR",
    "TRUNCATION_MARKER",
    "UNIT_SEPARATOR",
    "AssemblyError",
    "AssemblyTypeError",
    "LayerReport",
    "Strategy",
    "Trust",
    "Unit",
    "fast_new",
    "fast_replace",
    "require_aware",
]

T = TypeVar("T")

LAYERS: tuple[str, ...] = (
    "identity",
    "instruction_files",
    "project_context",
    "business_rules",
    "task_state",
)


class AssemblyError(HarnessError, ValueError):
    """Bad input to ``assemble`` (an unknown layer or strategy, a bad budget, a duplicate id)."""


class AssemblyTypeError(HarnessError, TypeError):
    """An argument of the wrong type (a layer that is not units, a unit field not a str)."""


class Strategy(StrEnum):
    """How a layer is trimmed when it does not fit its budget.

    Each member is also the registry of its implementation: the module
    ``harness.prompt_assembler.strategies.<value>`` (see that package).
    """

    DROP_WHOLE_UNITS = "drop_whole_units"
    TRUNCATE_TAIL = "truncate_tail"
    KEEP_OR_DROP = "keep_or_drop"
    FIT_WHOLE_UNITS = "fit_whole_units"


DEFAULT_STRATEGIES: Mapping[str, Strategy] = MappingProxyType(
    {
        "identity": Strategy.KEEP_OR_DROP,  # half an identity is useless
        "instruction_files": Strategy.DROP_WHOLE_UNITS,  # least authoritative discarded first
        "project_context": Strategy.TRUNCATE_TAIL,  # a blob: keep its head
        "business_rules": Strategy.DROP_WHOLE_UNITS,  # oldest rule discarded first
        "task_state": Strategy.DROP_WHOLE_UNITS,  # oldest state discarded first
    }
)

DEFAULT_BUDGETS: Mapping[str, int] = MappingProxyType(
    {
        "identity": 500,
        "instruction_files": 8192,  # about 32 KiB of text: what Codex reads of AGENTS.md
        "project_context": 8192,
        "business_rules": 4000,
        "task_state": 4000,
    }
)

LAYER_SEPARATOR = "\n\n"
"""Joins the non-empty layer texts into the prompt."""
UNIT_SEPARATOR = "\n\n"
"""Joins the rendered units of one layer."""
TRUNCATION_MARKER = "\n[… truncated …]"
"""Follows the cut text of a ``truncate_tail`` layer (inside the unit's block, if it has one)."""


Trust = Literal["trusted", "untrusted"]
"""A unit's trust: ``untrusted`` text is rendered inside a data boundary, never as instructions."""

INSTRUCTION_LAYERS: frozenset[str] = frozenset({"identity", "instruction_files"})
"""The layers whose text carries instruction authority; untrusted units are refused there."""

AUTHORITY: Mapping[str, str] = MappingProxyType(
    {name: "instruction" if name in INSTRUCTION_LAYERS else "information" for name in LAYERS}
)
"""Each layer's authority, as the manifest records it: ``instruction`` or ``information``."""


@dataclass(frozen=True, slots=True)
class Unit:
    """One indivisible piece of a layer; ``source`` (e.g. a file path) adds attribution.

    Keyword-only provenance: ``trust`` (``"untrusted"`` text is shown
    inside a data boundary and refused in the instruction layers), ``version`` (the source's
    revision or digest), ``observed_at`` (when it was read, timezone-aware) and ``max_age``
    (seconds after ``observed_at`` the unit stays fresh; needs ``observed_at``).

    Keyword-only evidence: ``kind`` (the evidence type, e.g. ``"effective_config"``),
    ``claim`` (the claim type, e.g. ``"timeout.production"``), ``value`` (the claimed value,
    compared for conflicts), ``authority`` (the source's authority class for its claim, e.g.
    ``"runtime_control_plane"``) and ``requires`` (the permissions a principal needs to see
    the unit at all; a build whose principal lacks one removes the unit before reading it).
    """

    id: str
    text: str
    source: str | None = None
    _: KW_ONLY
    trust: Trust = "trusted"
    version: str | None = None
    observed_at: datetime | None = None
    max_age: float | None = None
    kind: str | None = None
    claim: str | None = None
    value: str | None = None
    authority: str | None = None
    requires: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise AssemblyTypeError(f"Unit.id must be a str, got {type(self.id).__name__}")
        if not isinstance(self.text, str):
            raise AssemblyTypeError(
                f"Unit {self.id!r}: text must be a str, got {type(self.text).__name__}"
            )
        if self.source is not None and not isinstance(self.source, str):
            raise AssemblyTypeError(
                f"Unit {self.id!r}: source must be a str or None, got {type(self.source).__name__}"
            )
        if (
            self.trust != "trusted"
            or self.max_age is not None
            or self.observed_at is not None
            or self.version is not None
        ):
            self._check_provenance()
        if (
            self.kind is not None
            or self.claim is not None
            or self.value is not None
            or self.authority is not None
            or self.requires
        ):
            self._check_evidence()

    def _check_evidence(self) -> None:
        for name in ("kind", "claim", "value", "authority"):
            field_value = getattr(self, name)
            if field_value is not None and not isinstance(field_value, str):
                raise AssemblyTypeError(
                    f"Unit {self.id!r}: {name} must be a str or None, "
                    f"got {type(field_value).__name__}"
                )
        requires = self.requires
        if not isinstance(requires, frozenset) or not all(isinstance(p, str) for p in requires):
            raise AssemblyTypeError(
                f"Unit {self.id!r}: requires must be a frozenset of permission names (str), "
                f"got {requires!r}"
            )

    def _check_provenance(self) -> None:
        if self.trust not in ("trusted", "untrusted"):
            raise AssemblyError(
                f"Unit {self.id!r}: trust must be 'trusted' or 'untrusted', got {self.trust!r}"
            )
        if self.version is not None and not isinstance(self.version, str):
            raise AssemblyTypeError(
                f"Unit {self.id!r}: version must be a str or None, "
                f"got {type(self.version).__name__}"
            )
        observed = self.observed_at
        if observed is not None:
            if not isinstance(observed, datetime):
                raise AssemblyTypeError(
                    f"Unit {self.id!r}: observed_at must be a datetime, "
                    f"got {type(observed).__name__}"
                )
            require_aware(observed, f"Unit {self.id!r}: observed_at")
        age = self.max_age
        if age is not None:
            if isinstance(age, bool) or not isinstance(age, int | float):
                raise AssemblyTypeError(
                    f"Unit {self.id!r}: max_age must be a number of seconds, "
                    f"got {type(age).__name__}"
                )
            try:
                finite = math.isfinite(age)
            except OverflowError:  # an int too large for a float (10**400)
                finite = False
            if not finite or age < 0:
                raise AssemblyError(
                    f"Unit {self.id!r}: max_age must be a finite number of seconds >= 0, "
                    f"got {age!r}"
                )
            if observed is None:
                raise AssemblyError(
                    f"Unit {self.id!r}: max_age needs observed_at (when the text was read), "
                    "or drop max_age"
                )


def fast_new(cls: type[T]) -> Callable[..., T]:
    """A constructor of the frozen dataclass ``cls`` taking every field positionally, in field
    order, that gives what ``cls(...)`` gives at a fraction of the cost."""
    if "__post_init__" in vars(cls) or "__slots__" in vars(cls):
        raise TypeError(f"{cls.__name__} validates or has slots: build it with its constructor")
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    # Generated from the fields, as dataclasses generate ``__init__``: a call that misses a
    # field raises TypeError (missing argument), and no field can be forgotten here.
    source = (
        f"def make({', '.join(names)}):\n"
        "    made = new(cls)\n"
        f"    made.__dict__.update({', '.join(f'{n}={n}' for n in names)})\n"
        "    return made\n"
    )
    scope: dict[str, object] = {"new": object.__new__, "cls": cls}
    exec(source, scope)
    return cast(Callable[..., T], scope["make"])


def fast_replace(cls: type[T], *names: str) -> Callable[..., T]:
    """``replace(obj, values)``: a copy of ``obj``, an instance of the frozen slotted dataclass
    ``cls``, with the fields ``names`` set to ``values`` (positionally, in that order), as
    ``dataclasses.replace`` gives it at a fraction of the cost (each slot set through its
    descriptor, no ``__init__``: for classes that validate nothing)."""
    if "__post_init__" in vars(cls) or not hasattr(cls, "__slots__"):
        raise TypeError(f"{cls.__name__} validates or has no slots: use dataclasses.replace")
    every = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    unknown = set(names) - set(every)
    if unknown:
        raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))}")
    # Generated from the fields, as dataclasses generate ``__init__``: no field is forgotten.
    lines = [f"    set_{n}(made, {n if n in names else f'obj.{n}'})\n" for n in every]
    head = f"def replace(obj, {', '.join(names)}):\n    made = new(cls)\n"
    source = f"{head}{''.join(lines)}    return made\n"
    scope: dict[str, object] = {"new": object.__new__, "cls": cls}
    scope.update({f"set_{n}": getattr(cls, n).__set__ for n in every})
    exec(source, scope)
    return cast(Callable[..., T], scope["replace"])


def require_aware(moment: datetime, what: str) -> None:
    """Raise ``AssemblyError`` unless ``moment`` is timezone-aware."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise AssemblyError(
            f"{what} is a naive datetime; give it a timezone, e.g. datetime.now(timezone.utc)"
        )


@dataclass(frozen=True)
class LayerReport:
    """What one layer became: its text, its count against its budget, and every unit's fate.

    ``notes`` says in words what was dropped or cut and why; it is empty when everything fit.
    """

    name: str
    strategy: Strategy
    budget: int
    tokens: int
    estimated: bool
    text: str
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    truncated: bool
    notes: tuple[str, ...] = ()
    lent: int = 0  # tokens later layers borrowed from this one (allocation="ceilings")
    borrowed: int = 0  # tokens this layer borrowed; ``budget`` is its ceiling plus these


new_report: Callable[..., LayerReport] = fast_new(LayerReport)
"""``LayerReport(...)`` with every field given positionally, at a fraction of the cost."""
