"""``allocation="ceilings"``: budgets are ceilings, and what a layer leaves unused is lent on.

::

    from harness.prompt_assembler import Unit, assemble

    layers = {"identity": "You are the reviewer.", "task_state": [Unit("s", "x" * 4000)]}
    fixed = assemble(layers, budgets={"task_state": 900})
    lent = assemble(layers, budgets={"task_state": 900}, allocation="ceilings")
    assert fixed.layer("task_state").kept == () and lent.layer("task_state").kept == ("s",)
    assert lent.layer("task_state").borrowed == 100 and lent.layer("identity").lent > 0
    assert lent.manifest()["loans"][0]["to"] == "task_state"

Layers are filled in layout order. The tokens a layer leaves unused go to a pool; the next
information layer that does not fit its own ceiling is trimmed again with its ceiling plus the
pool, and borrows what it then uses beyond its ceiling, from the earliest lenders first.
Instruction layers lend but never borrow. Nothing is created: the budgets in use never exceed
the sum of the ceilings, so a build within its input envelope stays within it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

from harness.prompt_assembler.layout import LayerSpec
from harness.prompt_assembler.prompt import LayerTrim
from harness.prompt_assembler.values import AssemblyError, LayerReport

__all__ = ["ALLOCATIONS", "Allocation", "Ledger", "check_allocation"]

Allocation = Literal["fixed", "ceilings"]
ALLOCATIONS: tuple[str, ...] = ("fixed", "ceilings")

Relayer = Callable[[int], tuple[LayerReport, LayerTrim]]


def check_allocation(allocation: object) -> Allocation:
    if allocation == "fixed":
        return "fixed"
    if allocation == "ceilings":
        return "ceilings"
    raise AssemblyError(f"unknown allocation {allocation!r}; choose 'fixed' or 'ceilings'")


def _needs_more(trim: LayerTrim) -> bool:
    _, fresh, _, result = trim
    return result.truncated or len(result.kept_indexes()) < len(fresh)


class Ledger:
    """The pool of unused tokens, by lender in layout order, and the loans made from it."""

    __slots__ = ("loans", "pool")

    def __init__(self) -> None:
        self.pool: list[list[str | int]] = []  # [lender, tokens left], layout order
        self.loans: list[tuple[str, str, int]] = []  # (from, to, tokens)

    def available(self) -> int:
        return sum(int(entry[1]) for entry in self.pool)

    def settle(
        self, spec: LayerSpec, report: LayerReport, trim: LayerTrim, relayer: Relayer
    ) -> tuple[LayerReport, LayerTrim]:
        """The layer after borrowing what it needs (information layers only), and its unused
        tokens added to the pool."""
        ceiling = report.budget
        pool = self.available()
        if spec.authority == "information" and pool and _needs_more(trim):
            wider, wider_trim = relayer(ceiling + pool)
            borrowed = max(0, wider.tokens - ceiling)
            if borrowed:
                lenders = self._take(spec.name, borrowed)
                note = f"borrowed {borrowed} unused token(s) from {lenders} (allocation=ceilings)"
                report = dataclasses.replace(
                    wider,
                    budget=ceiling + borrowed,
                    borrowed=borrowed,
                    notes=(*wider.notes, note),
                )
                return report, wider_trim
        if report.tokens < ceiling:
            self.pool.append([spec.name, ceiling - report.tokens])
        return report, trim

    def _take(self, borrower: str, tokens: int) -> str:
        """Take ``tokens`` from the earliest lenders, recording each loan; their names."""
        names: list[str] = []
        while tokens:
            entry = self.pool[0]
            lender, left = str(entry[0]), int(entry[1])
            taken = min(left, tokens)
            self.loans.append((lender, borrower, taken))
            names.append(lender)
            tokens -= taken
            if taken == left:
                self.pool.pop(0)
            else:
                entry[1] = left - taken
        return ", ".join(names)

    def lent(self, reports: list[LayerReport]) -> list[LayerReport]:
        """``reports`` with each lender's ``lent`` filled in."""
        given: dict[str, int] = {}
        for lender, _, tokens in self.loans:
            given[lender] = given.get(lender, 0) + tokens
        if not given:
            return reports
        return [
            dataclasses.replace(r, lent=given[r.name]) if r.name in given else r for r in reports
        ]
