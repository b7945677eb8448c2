"""Before assembly: remove what the principal may not see, and repeats of what is already in.

::

    from harness.context_requests._screen import screen
    from harness.prompt_assembler import EXTENDED_LAYOUT, Unit

    secret = Unit("vault", "token=abc", requires=frozenset({"secrets:read"}))
    note = Unit("note", "timeout is 5 s")
    copy = Unit("copy", "timeout is 5 s")
    layers, record = screen({"evidence": [secret, note, copy]}, EXTENDED_LAYOUT, frozenset())
    assert [u.id for u in layers["evidence"]] == ["note"]
    assert record.denied == ("vault",) and record.corroborating == {"note": ("copy",)}

A denied unit leaves here with nothing but its id: its text is never rendered, hashed or
stored. A duplicate (an information-layer unit whose text equals one earlier in layout
order) is not rendered twice; the first is kept and lists it as corroborating.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.prompt_assembler._layout import Layout
from harness.prompt_assembler._values import Unit

__all__ = ["DENIED", "DUPLICATE", "OUTRANKED", "Screened", "screen"]

DENIED = "denied"
DUPLICATE = "duplicate"
OUTRANKED = "outranked"

LayerValue = str | Unit | Sequence[Unit]


@dataclass(frozen=True, slots=True)
class Excluded:
    """A unit removed before assembly: where it was, and why (``of``: the unit it repeats)."""

    layer: str
    id: str
    reason: str
    of: str | None = None

    def to_dict(self) -> dict[str, str]:
        data = {"layer": self.layer, "id": self.id, "reason": self.reason}
        if self.of is not None:
            data["of"] = self.of
        return data


@dataclass(frozen=True, slots=True)
class Screened:
    """What the screen removed, in layout then input order, and who corroborates whom."""

    excluded: tuple[Excluded, ...] = ()
    corroborating: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def denied(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.excluded if e.reason == DENIED)

    def to_dict(self) -> dict[str, object]:
        return {
            "excluded": [e.to_dict() for e in self.excluded],
            "corroborating": {k: list(v) for k, v in sorted(self.corroborating.items())},
        }


def as_units(name: str, value: LayerValue) -> tuple[Unit, ...]:
    if isinstance(value, str):
        return (Unit(name, value),)
    if isinstance(value, Unit):
        return (value,)
    return tuple(value)


def screen(
    layers: Mapping[str, LayerValue],
    layout: Layout,
    principal: frozenset[str],
    outranked: frozenset[str] = frozenset(),
) -> tuple[dict[str, LayerValue], Screened]:
    """``layers`` without the units ``principal`` may not see, without the information units
    of ``outranked`` ids (a higher authority for their claim is present) and without repeated
    information-layer text, and the record of what was removed."""
    kept: dict[str, LayerValue] = {}
    excluded: list[Excluded] = []
    first: dict[str, str] = {}  # text -> id of the first information unit holding it
    corroborating: dict[str, list[str]] = {}
    for spec in layout:
        value = layers.get(spec.name)
        if value is None:
            continue
        units = as_units(spec.name, value)
        survivors: list[Unit] = []
        for unit in units:
            if unit.requires and not unit.requires <= principal:
                excluded.append(Excluded(spec.name, unit.id, DENIED))
                continue
            if spec.authority == "information" and unit.claim and unit.id in outranked:
                excluded.append(Excluded(spec.name, unit.id, OUTRANKED))
                continue
            if spec.authority == "information":
                original = first.setdefault(unit.text, unit.id)
                if original != unit.id:
                    excluded.append(Excluded(spec.name, unit.id, DUPLICATE, original))
                    corroborating.setdefault(original, []).append(unit.id)
                    continue
            survivors.append(unit)
        kept[spec.name] = value if len(survivors) == len(units) else survivors
    frozen = {k: tuple(v) for k, v in corroborating.items()}
    return kept, Screened(tuple(excluded), frozen)
