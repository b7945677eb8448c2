"""Layouts: which layers a prompt has, in which order, each with its strategy, budget and
authority.

A layout is a tuple of :class:`LayerSpec` values, so a prompt's shape is data, not code::

    from harness.prompt_assembler import EXTENDED_LAYOUT, LayerSpec, Strategy, assemble

    prompt = assemble({"evidence": "ticket #42 says the export fails"}, layout=EXTENDED_LAYOUT)
    assert [r.name for r in prompt.layers][2:4] == ["skills", "tools"]
    mine = (LayerSpec("identity", Strategy.KEEP_OR_DROP, 200, "instruction"),)
    assert assemble({"identity": "You review."}, layout=mine).text == "You review."

``DEFAULT_LAYOUT`` is the five layers of ``LAYERS``; ``EXTENDED_LAYOUT`` adds ``skills`` and
``tools`` after the instruction files and ``evidence`` before the task state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from harness.prompt_assembler._values import (
    AUTHORITY,
    DEFAULT_BUDGETS,
    DEFAULT_STRATEGIES,
    LAYERS,
    AssemblyError,
    AssemblyTypeError,
    Strategy,
)

__all__ = [
    "DEFAULT_LAYOUT",
    "EXTENDED_LAYOUT",
    "Authority",
    "LayerSpec",
    "Layout",
    "check_layout",
    "layout_budgets",
    "layout_names",
    "layout_strategies",
    "named_layout",
]

Authority = Literal["instruction", "information"]
"""``instruction`` layers are obeyed (untrusted units are refused there); ``information``
layers are read as data."""


@dataclass(frozen=True, slots=True)
class LayerSpec:
    """One layer of a layout: its name, how it is trimmed, its token budget, its authority."""

    name: str
    strategy: Strategy
    budget: int
    authority: Authority = "information"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise AssemblyTypeError(f"LayerSpec.name must be a non-empty str, got {self.name!r}")
        try:
            object.__setattr__(self, "strategy", Strategy(self.strategy))
        except ValueError:
            raise AssemblyError(
                f"layer {self.name!r}: unknown strategy {self.strategy!r}; choose one of "
                f"{', '.join(s.value for s in Strategy)}"
            ) from None
        budget = self.budget
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise AssemblyError(f"layer {self.name!r}: budget must be an int >= 0, got {budget!r}")
        if self.authority not in ("instruction", "information"):
            raise AssemblyError(
                f"layer {self.name!r}: authority must be 'instruction' or 'information', "
                f"got {self.authority!r}"
            )


Layout = tuple[LayerSpec, ...]
"""The layers of a prompt in prompt order."""


def _default(name: str) -> LayerSpec:
    authority: Authority = "instruction" if AUTHORITY[name] == "instruction" else "information"
    return LayerSpec(name, DEFAULT_STRATEGIES[name], DEFAULT_BUDGETS[name], authority)


DEFAULT_LAYOUT: Layout = tuple(_default(name) for name in LAYERS)
"""The five layers of ``LAYERS`` with ``DEFAULT_STRATEGIES`` and ``DEFAULT_BUDGETS``."""

EXTENDED_LAYOUT: Layout = (
    _default("identity"),
    LayerSpec(
        "instruction_files",
        Strategy.FIT_WHOLE_UNITS,
        DEFAULT_BUDGETS["instruction_files"],
        "instruction",
    ),
    LayerSpec("skills", Strategy.FIT_WHOLE_UNITS, 4000, "instruction"),
    LayerSpec("tools", Strategy.DROP_WHOLE_UNITS, 8000, "information"),
    _default("project_context"),
    _default("business_rules"),
    LayerSpec("evidence", Strategy.DROP_WHOLE_UNITS, 16000, "information"),
    _default("task_state"),
)
"""Identity, instruction files, skills, tools, project context, business rules, evidence and
task state; instruction files and skills keep whole units from the most authoritative down
(``fit_whole_units``)."""


def check_layout(layout: object) -> Layout:
    """``layout`` if it is a non-empty tuple of ``LayerSpec`` with distinct names, else raise."""
    if layout is DEFAULT_LAYOUT:
        return DEFAULT_LAYOUT
    if not isinstance(layout, tuple) or not layout:
        raise AssemblyTypeError(
            f"layout must be a non-empty tuple of LayerSpec, got {type(layout).__name__}"
        )
    seen: set[str] = set()
    for spec in layout:
        if not isinstance(spec, LayerSpec):
            raise AssemblyTypeError(f"layout items must be LayerSpec, got {type(spec).__name__}")
        if spec.name in seen:
            raise AssemblyError(f"layout names layer {spec.name!r} twice")
        seen.add(spec.name)
    return layout


def layout_names(layout: Layout) -> tuple[str, ...]:
    """The layout's layer names, in order."""
    return LAYERS if layout is DEFAULT_LAYOUT else tuple(spec.name for spec in layout)


def layout_budgets(layout: Layout) -> Mapping[str, int]:
    """Each layer's budget in ``layout``."""
    return DEFAULT_BUDGETS if layout is DEFAULT_LAYOUT else {s.name: s.budget for s in layout}


def layout_strategies(layout: Layout) -> Mapping[str, Strategy]:
    """Each layer's strategy in ``layout``."""
    if layout is DEFAULT_LAYOUT:
        return DEFAULT_STRATEGIES
    return {spec.name: spec.strategy for spec in layout}


def named_layout(names: Sequence[str]) -> Layout:
    """The layout of ``names`` in that order, each layer as ``DEFAULT_LAYOUT`` has it, else as
    ``EXTENDED_LAYOUT`` has it (what a config's ``[layout] layers = [...]`` means)."""
    if isinstance(names, str) or not isinstance(names, Sequence) or not names:
        raise AssemblyError(f"layout layers must be a non-empty list of names, got {names!r}")
    known = {spec.name: spec for spec in (*EXTENDED_LAYOUT, *DEFAULT_LAYOUT)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise AssemblyError(
            f"unknown layer(s) {', '.join(map(repr, unknown))} in the layout; known layers: "
            f"{', '.join(spec.name for spec in EXTENDED_LAYOUT)}"
        )
    return check_layout(tuple(known[name] for name in names))
