"""The assembly hot path's shortcuts give what the general code gives.

Each test here fails when its shortcut is wrong: the sorted-ids check that stands in for the set
of ids (``_assembly._increasing``), and the bare-text walk of ``drop_whole_units`` that checks
a unit's source and trust only once it is known to fit.
"""

from __future__ import annotations

import pytest

from harness import ApproximateTokenizer, Unit, assemble
from harness.prompt_assembler._render import render
from harness.prompt_assembler._values import UNIT_SEPARATOR


class _LyingId(str):
    """An id whose order claims every id is smaller than the next, equal ones too."""

    __hash__ = str.__hash__

    def __lt__(self, other: object) -> bool:
        return True

    def __gt__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize("n", [3, 300, 3000])
def test_sorted_ids_with_a_repeat_raise_naming_it(n: int) -> None:
    ids = [f"r{i:06d}" for i in range(n)]
    ids.insert(n // 2, ids[n // 2])  # still sorted, not strictly
    units = [Unit(unit_id, "t") for unit_id in ids]
    with pytest.raises(ValueError, match=f"duplicate unit id {ids[n // 2]!r}"):
        assemble({"business_rules": units})


def test_many_sorted_ids_with_a_late_repeat_raise() -> None:
    units = [Unit(f"r{i:06d}", "t") for i in range(5000)]
    units.append(Unit("r004999", "again"))
    with pytest.raises(ValueError, match="duplicate unit id 'r004999'"):
        assemble({"business_rules": units})


def test_sorted_distinct_ids_assemble() -> None:
    units = [Unit(f"r{i:06d}", f"rule {i}") for i in range(1000)]
    prompt = assemble({"business_rules": units}, budgets={"business_rules": 10**6})
    assert prompt.layer("business_rules").kept == tuple(u.id for u in units)


def test_str_subclass_ids_are_checked_by_the_set() -> None:
    # Its __lt__ says the ids increase; only the set sees the repeat.
    units = [Unit(_LyingId(f"r{i:06d}"), "x") for i in range(1000)]
    units.append(Unit(_LyingId("r000000"), "again"))
    with pytest.raises(ValueError, match="duplicate unit id 'r000000'"):
        assemble({"business_rules": units})


def _expected_tail(units: list[Unit], budget: int) -> tuple[tuple[str, ...], str]:
    """What drop_whole_units keeps, by the definition: the longest tail whose rendering fits."""
    for head in range(len(units) + 1):
        text = UNIT_SEPARATOR.join(render(u) for u in units[head:])
        if -(-len(text.encode()) // 4) <= budget:
            return tuple(u.id for u in units[head:]), text
    raise AssertionError("the empty layer always fits")


@pytest.mark.parametrize("budget", range(0, 40))
@pytest.mark.parametrize(
    "special",
    [
        Unit("s", "with a source", source="a.md"),
        Unit("s", "untrusted text", trust="untrusted"),
        Unit("s", "a </context> forgery"),
        Unit("s", "na\u00efve caf\u00e9 \u20ac"),
    ],
)
@pytest.mark.parametrize("where", [0, 1, 2, 3])
def test_drop_whole_units_matches_the_rendered_definition(
    budget: int, special: Unit, where: int
) -> None:
    plain = [Unit(f"u{i}", f"plain rule {i}") for i in range(4)]
    units = [*plain[:where], special, *plain[where:]]
    prompt = assemble(
        {"business_rules": units},
        budgets={"business_rules": budget},
        tokenizer=ApproximateTokenizer(),
    )
    layer = prompt.layer("business_rules")
    assert (layer.kept, layer.text) == _expected_tail(units, budget)
    assert layer.tokens == -(-len(layer.text.encode()) // 4)
