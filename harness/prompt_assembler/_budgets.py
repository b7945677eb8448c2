"""The one budget check: per-layer budgets merged over a base, and the input-envelope rule.

Config files, per-call ``budgets=`` and ``--budget`` on the command line all go through
:func:`merge_budgets`, so one value is accepted or refused the same way wherever it is given::

    from harness.prompt_assembler import merge_budgets

    merged = merge_budgets({"identity": 800})
    assert merged["identity"] == 800 and merged["task_state"] == 2000

Every refusal is a :class:`BudgetError`, a ``ValueError`` and a ``HarnessError``; the
envelope is anything with the three fields (this module imports no configuration).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from harness.prompt_assembler._layout import DEFAULT_LAYOUT, Layout, layout_budgets, layout_names
from harness.prompt_assembler._values import AssemblyError

__all__ = [
    "ENVELOPE_HINT",
    "PER_CALL_HINT",
    "BudgetError",
    "EnvelopeLike",
    "check_envelope",
    "merge_budgets",
]

ENVELOPE_HINT = "lower [budgets] or raise model_context_limit"
"""The hint for budgets over the envelope in a config file."""
PER_CALL_HINT = (
    "lower the per-call budgets (budgets= or --budget LAYER=N) or raise model_context_limit "
    "in the config"
)
"""The hint for per-call budgets over the envelope."""


class BudgetError(AssemblyError):
    """A budget for an unknown layer, a value that is not a whole number >= 0, or budgets that
    total more than the input envelope."""


class EnvelopeLike(Protocol):
    """The model's context limit and its reserves (``harness.config.Envelope`` is one)."""

    @property
    def model_context_limit(self) -> int: ...
    @property
    def reserved_response(self) -> int: ...
    @property
    def reserved_tool_observations(self) -> int: ...


def check_envelope(
    budgets: Mapping[str, int], envelope: EnvelopeLike, *, hint: str = ENVELOPE_HINT
) -> None:
    """Raise :class:`BudgetError` saying by how much ``budgets`` overflow the input envelope
    (``model_context_limit - reserved_response - reserved_tool_observations``)."""
    total = sum(budgets.values())
    limit = envelope.model_context_limit
    room = limit - envelope.reserved_response - envelope.reserved_tool_observations
    if total > room:
        raise BudgetError(
            f"the layer budgets total {total} tokens but the input envelope is {room} "
            f"(model_context_limit {limit} - reserved_response "
            f"{envelope.reserved_response} - reserved_tool_observations "
            f"{envelope.reserved_tool_observations}): over by {total - room} tokens; {hint}"
        )


def merge_budgets(
    budgets: Mapping[str, int] | None,
    base: Mapping[str, int] | None = None,
    *,
    layout: Layout = DEFAULT_LAYOUT,
    envelope: EnvelopeLike | None = None,
    hint: str = ENVELOPE_HINT,
) -> dict[str, int]:
    """``budgets`` (partial) over ``base`` (default: the layout's own budgets), checked; with
    ``envelope``, the total must fit it.

    Layers outside ``layout``, values that are not ints (bools included) and negative values
    raise :class:`BudgetError` naming the layer; so does a total over the envelope (with
    ``hint``).
    """
    merged = dict(layout_budgets(layout) if base is None else base)
    if budgets:
        names = layout_names(layout)
        for name, budget in budgets.items():
            if name not in names:
                raise BudgetError(
                    f"budget for unknown layer {name!r}; the layout's layers: {names}"
                )
            if isinstance(budget, bool) or not isinstance(budget, int):
                raise BudgetError(f"budget for layer {name!r} must be an int, got {budget!r}")
            if budget < 0:
                raise BudgetError(f"budget for layer {name!r} cannot be negative, got {budget}")
            merged[name] = budget
    if envelope is not None:
        check_envelope(merged, envelope, hint=hint)
    return merged
