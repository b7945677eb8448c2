"""``required_policy_missing``: instruction files that apply to a target but did not fit.

::

    from harness.context_requests._policy import applies

    assert applies("pkg/api/AGENTS.md", "pkg/api/handler.py")
    assert applies("AGENTS.md", "pkg/x.py") and applies("db:acme/reviewer", "pkg/x.py")
    assert not applies("web/AGENTS.md", "pkg/x.py")

A chain instruction file dropped for its layer's budget is policy the agent was meant to obey
and did not get: the manifest lists it per target, and the build warns with the budget that
would have kept it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence

from harness.prompt_assembler import AssembledPrompt
from harness.prompt_assembler._render import render
from harness.prompt_assembler._values import UNIT_SEPARATOR

__all__ = [
    "NOT_MATCHED",
    "REQUIRED_POLICY_MISSING",
    "SHADOWED",
    "applies",
    "missing_policies",
    "unrendered_rules",
]

REQUIRED_POLICY_MISSING = "required_policy_missing"
NOT_MATCHED = "not_matched"
SHADOWED = "shadowed"
_LAYER = "instruction_files"


def applies(source: str, target: str) -> bool:
    """Whether the instruction file ``source`` is on ``target``'s chain (a database row, or
    a file in one of the target's directories from the root)."""
    if source.startswith("db:"):
        return True
    directory = posixpath.dirname(source)
    return not directory or target == directory or target.startswith(directory + "/")


def unrendered_rules(
    unmatched: Sequence[str], shadowed: Sequence[tuple[str, str]]
) -> list[dict[str, str]]:
    """The rule files a build read (or found) and did not render, as the manifest's
    ``excluded`` entries: a path rule no target matches is ``not_matched``; a file another
    was chosen over in its directory (``AGENTS.md`` beside ``AGENTS.override.md``) is
    ``shadowed``, ``by`` the chosen one."""
    found = [{"layer": _LAYER, "id": path, "reason": NOT_MATCHED} for path in unmatched]
    found += [{"layer": _LAYER, "id": path, "reason": SHADOWED, "by": by} for path, by in shadowed]
    return found


def missing_policies(
    prompt: AssembledPrompt, targets: Sequence[str], count: Callable[[str], int]
) -> tuple[dict[str, list[str]], list[str]]:
    """Per target (``""``: the whole workspace) the chain files dropped for budget, and one
    warning per file naming the budget that would have kept it."""
    names = [report.name for report in prompt.layers]
    if _LAYER not in names:
        return {}, []
    report = prompt.layer(_LAYER)
    if not report.dropped:
        return {}, []
    units = {unit.id: unit for unit in prompt.input_units()[_LAYER]}
    dropped = [unit_id for unit_id in report.dropped if unit_id in units]
    missing: dict[str, list[str]] = {}
    for target in targets or ("",):
        on_chain = [u for u in dropped if not target or applies(units[u].source or u, target)]
        if on_chain:
            missing[target] = on_chain
    warnings = []
    for unit_id in sorted({u for ids in missing.values() for u in ids}):
        needed = report.tokens + count(render(units[unit_id]) + UNIT_SEPARATOR)
        warnings.append(
            f"{unit_id}: {REQUIRED_POLICY_MISSING}: an instruction file on the chain was "
            f"dropped for the budget of {report.budget} tokens; a budget of {needed} would "
            f"have kept it (raise budgets.{_LAYER}, --budget {_LAYER}={needed})"
        )
    return missing, warnings
