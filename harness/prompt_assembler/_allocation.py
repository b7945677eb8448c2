"""``allocation="ceilings"``: budgets are ceilings, and what a layer leaves unused is lent on.

::

    from harness.prompt_assembler import Unit, assemble

    layers = {"identity": "You are the reviewer.", "task_state": [Unit("s", "x" * 4000)]}
    fixed = assemble(layers, budgets={"task_state": 900})
    lent = assemble(layers, budgets={"task_state": 900}, allocation="ceilings")
    assert fixed.layer("task_state").kept == () and lent.layer("task_state").kept == ("s",)
    assert lent.layer("task_state").borrowed == 100 and lent.layer("identity").lent > 0
    assert lent.manifest()["loans"][0]["to"] == "task_state"

Layers are filled in layout order. The tokens a layer leaves unused go to a pool; each
information layer is trimmed to its ceiling plus the pool and borrows what it then uses
beyond its ceiling, from the earliest lenders first.
Instruction layers lend but never borrow. Nothing is created: the budgets in use never exceed
the sum of the ceilings, so a build within its input envelope stays within it.
"""

from __future__ import annotations

from typing import Literal

from harness.prompt_assembler._layout import LayerSpec
from harness.prompt_assembler._values import AssemblyError, LayerReport, new_report

__all__ = ["ALLOCATIONS", "Allocation", "Ledger", "check_allocation"]

Allocation = Literal["fixed", "ceilings"]
ALLOCATIONS: tuple[str, ...] = ("fixed", "ceilings")


def check_allocation(allocation: object) -> Allocation:
    if allocation == "fixed":
        return "fixed"
    if allocation == "ceilings":
        return "ceilings"
    raise AssemblyError(f"unknown allocation {allocation!r}; choose 'fixed' or 'ceilings'")


class Ledger:
    """The pool of unused tokens, by lender in layout order, and the loans made from it."""

    __slots__ = ("loans", "pool")

    def __init__(self) -> None:
        self.pool: list[list[str | int]] = []  # [lender, tokens left], layout order
        self.loans: list[tuple[str, str, int]] = []  # (from, to, tokens)

    def available(self) -> int:
        return sum(int(entry[1]) for entry in self.pool)

    def offer(self, spec: LayerSpec) -> int:
        """What the layer may borrow: the whole pool for an information layer, else 0."""
        return self.available() if spec.authority == "information" else 0

    def settle(
        self, spec: LayerSpec, ceiling: int, offered: int, report: LayerReport
    ) -> LayerReport:
        """The layer's report (its budget the ceiling) once trimmed to ``ceiling + offered``:
        what it used beyond its ceiling is borrowed (and its budget is its ceiling plus that);
        what it left unused goes to the pool."""
        # A strategy trimmed to a wider budget that uses no more than the ceiling keeps what
        # it keeps at the ceiling (every strategy is monotone in its budget), so one trim
        # serves both cases.
        borrowed = max(0, report.tokens - ceiling) if offered else 0
        if borrowed:
            lenders = self._take(spec.name, borrowed)
            note = f"borrowed {borrowed} unused token(s) from {lenders} (allocation=ceilings)"
            notes = (*report.notes, note)
            return _changed(report, ceiling + borrowed, notes, report.lent, borrowed)
        if report.tokens < ceiling:
            self.pool.append([spec.name, ceiling - report.tokens])
        return report

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
            _changed(r, r.budget, r.notes, given[r.name], r.borrowed) if r.name in given else r
            for r in reports
        ]


def _changed(
    r: LayerReport, budget: int, notes: tuple[str, ...], lent: int, borrowed: int
) -> LayerReport:
    """``dataclasses.replace(r, ...)`` of the fields allocation changes, built as the
    assembler builds reports (``replace`` goes through every field by name: most of what a
    ``"ceilings"`` build costs beyond a ``"fixed"`` one)."""
    return new_report(
        r.name,
        r.strategy,
        budget,
        r.tokens,
        r.estimated,
        r.text,
        r.kept,
        r.dropped,
        r.truncated,
        notes,
        lent,
        borrowed,
    )
