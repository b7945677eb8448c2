"""The readiness gate: before the model call, is the evidence a decision needs all there?

::

    from harness.context_requests import ContextRequest, Requirement, readiness
    from harness.prompt_assembler import Unit

    request = ContextRequest("read the timeout", requirements=[Requirement("effective_config")])
    assert readiness(request, []).status == "NEEDS_MORE_CONTEXT"
    config = Unit("prod", "timeout: 5s", kind="effective_config", claim="timeout", value="5")
    assert readiness(request, [config]).status == "READY"

Pure: units in, a :class:`Readiness` out. Gates run first (a unit the principal may not see is
``denied``; a unit older than its ``max_age`` is ``expired``), then authority is resolved per
claim type (the highest-ranked class present wins, lower ones are ``outranked``, and the
winners disagreeing is a ``conflict`` kept visible, never settled by ranking), then each
requirement gets its status. Only units' metadata and, for matching units, their text (to
tell a duplicate from an independent confirmation) are read.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress, groupby, repeat
from types import MappingProxyType
from typing import Literal

from harness.context_requests.request import ContextRequest, Requirement
from harness.errors import ArgumentError, ArgumentTypeError, HarnessError
from harness.prompt_assembler.values import Unit, require_aware

__all__ = ["NotReady", "Readiness", "RequirementStatus", "Status", "readiness"]

Status = Literal["READY", "NEEDS_MORE_CONTEXT", "BLOCKED_BY_CONFLICT", "BLOCKED_BY_PERMISSION"]
UnitStatus = Literal["present", "missing", "stale", "denied", "conflict"]


@dataclass(frozen=True, slots=True)
class RequirementStatus:
    """One requirement's fate: ``units`` are the fresh, permitted units satisfying it (for a
    conflict: those in conflict); ``corroborating`` are matching units whose text repeats one
    of them (recorded, never counted as independent confirmation)."""

    requirement: Requirement
    status: UnitStatus
    units: tuple[str, ...] = ()
    corroborating: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.requirement.kind,
            "claim": self.requirement.claim,
            "required": self.requirement.required,
            "status": self.status,
            "units": list(self.units),
            "corroborating": list(self.corroborating),
        }


@dataclass(frozen=True, slots=True)
class Readiness:
    """The gate's answer: ``status`` and why (per requirement, per claim, per unit)."""

    status: Status
    requirements: tuple[RequirementStatus, ...] = ()
    conflicts: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    expired: tuple[str, ...] = ()
    outranked: tuple[str, ...] = ()
    denied: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return self.status == "READY"

    def to_dict(self) -> dict[str, object]:
        """JSON types, as the manifest records the readiness."""
        return {
            "status": self.status,
            "requirements": [r.to_dict() for r in self.requirements],
            "conflicts": {claim: list(ids) for claim, ids in sorted(self.conflicts.items())},
            "expired": list(self.expired),
            "outranked": list(self.outranked),
            "denied": list(self.denied),
        }

    def explain(self) -> str:
        """One line per requirement that is not present, for an error or the debug print."""
        lines = [f"readiness: {self.status}"]
        for item in self.requirements:
            if item.status != "present":
                ids = f" ({', '.join(item.units)})" if item.units else ""
                need = "required" if item.requirement.required else "optional"
                lines.append(f"  {item.requirement.label()} [{need}]: {item.status}{ids}")
        return "\n".join(lines)


class NotReady(HarnessError, RuntimeError):
    """A build with ``require_ready=True`` whose evidence is not ready; ``.readiness`` says why."""

    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness
        super().__init__(
            f"{readiness.explain()}\nthe model must not be called yet: add the missing "
            "evidence, refresh the stale or conflicting sources, or grant the permission, "
            "then build again (or pass require_ready=False to get the prompt anyway)"
        )


_id = operator.attrgetter("id")
_claim = operator.attrgetter("claim")
_value = operator.attrgetter("value")
_authority = operator.attrgetter("authority")
_requires = operator.attrgetter("requires")
_max_age = operator.attrgetter("max_age")
_kind = operator.attrgetter("kind")


def _fresh(unit: Unit, now: datetime | None) -> bool:
    max_age, observed = unit.max_age, unit.observed_at
    if max_age is None or observed is None:
        return True
    if now is None:
        raise ArgumentError(
            f"unit {unit.id!r} has a max_age, so readiness needs the time: pass "
            "now=datetime.now(timezone.utc)"
        )
    return (now - observed).total_seconds() <= max_age


@dataclass(slots=True)
class _Sorted:
    """The units after the gates: permitted and fresh (in order), and the ids of the rest;
    ``by_kind`` indexes each list by kind, so a requirement looks at its own units only."""

    usable: list[Unit] = field(default_factory=list)
    denied: list[Unit] = field(default_factory=list)
    expired: list[Unit] = field(default_factory=list)
    by_kind: dict[str, tuple[list[Unit], list[Unit], list[Unit]]] = field(default_factory=dict)

    def index(self, wanted: frozenset[str]) -> None:
        """Index the units of the ``wanted`` kinds (those the requirements name)."""
        by_kind = self.by_kind = {kind: ([], [], []) for kind in wanted}
        for position, units in enumerate((self.usable, self.expired, self.denied)):
            for unit, kind in zip(units, map(_kind, units), strict=True):
                if kind in wanted:
                    by_kind[kind][position].append(unit)


def _gates(request: ContextRequest, units: Iterable[Unit], now: datetime | None) -> _Sorted:
    """Permissions first (a denied unit is never looked at further), then freshness."""
    result = _Sorted()
    every = list(units)
    if not set(map(type, every)) <= {Unit}:
        for unit in every:
            if not isinstance(unit, Unit):
                raise ArgumentTypeError(f"readiness: expected Unit items, got {unit!r}")
    principal = request.principal
    if any(map(_requires, every)):  # most units need no permission: one C-level pass
        allowed = [not u.requires or u.requires <= principal for u in every]
        result.denied = list(compress(every, map(operator.not_, allowed)))
        every = list(compress(every, allowed))
    ages = list(map(_max_age, every))
    if set(ages) != {None}:
        fresh = [age is None or _fresh(u, now) for u, age in zip(every, ages, strict=True)]
        result.expired = list(compress(every, map(operator.not_, fresh)))
        every = list(compress(every, fresh))
    result.usable = every
    result.index(frozenset(r.kind for r in request.requirements))
    return result


def _resolve(
    request: ContextRequest, usable: list[Unit]
) -> tuple[dict[str, tuple[str, ...]], set[str]]:
    """Per claim: the ids in conflict (the top authority's units disagreeing), and the ids
    of units outranked by a higher authority class present for their claim."""
    # C-level passes per claim (sorted by claim, grouped): thousands of units are common.
    claimed_units = sorted(compress(usable, map(_claim, usable)), key=_claim)
    conflicts: dict[str, tuple[str, ...]] = {}
    outranked: set[str] = set()
    for claim, group in groupby(claimed_units, key=_claim):
        claimed = list(group)
        order = request.authority.get(claim, ())
        places = {name: place for place, name in enumerate(order)}
        ranks = list(map(places.get, map(_authority, claimed), repeat(len(order))))
        top = min(ranks)
        winners = list(compress(claimed, map(operator.eq, repeat(top), ranks)))
        if len(winners) < len(claimed):
            outranked.update(map(_id, compress(claimed, map(operator.ne, repeat(top), ranks))))
        valued = list(compress(winners, map(_value, winners)))
        if len(set(map(_value, valued))) > 1:
            conflicts[claim] = tuple(map(_id, valued))
    return conflicts, outranked


def _matching(requirement: Requirement, units: list[Unit]) -> list[Unit]:
    """The ``units`` (all of the requirement's kind) of its claim, when it names one."""
    claim = requirement.claim
    if claim is None:
        return units
    return list(compress(units, map(operator.eq, repeat(claim), map(_claim, units))))


def _status(
    requirement: Requirement,
    gated: _Sorted,
    conflicts: Mapping[str, tuple[str, ...]],
) -> RequirementStatus:
    """A fresh permitted match (outranked or not: it is evidence) is present unless its claim
    is in conflict; with none, stale matches make it ``stale`` and only denied ones
    ``denied``."""
    usable, expired, denied_units = gated.by_kind.get(requirement.kind, ([], [], []))
    matching = _matching(requirement, usable)
    if matching:
        claims = {u.claim for u in matching} & conflicts.keys()
        in_conflict = sorted({i for claim in claims if claim for i in conflicts[claim]})
        if in_conflict:
            return RequirementStatus(requirement, "conflict", tuple(in_conflict))
        distinct: dict[str, str] = {}
        repeats: list[str] = []
        for unit in matching:  # equal text: a copy, not a second confirmation
            if unit.text in distinct:
                repeats.append(unit.id)
            else:
                distinct[unit.text] = unit.id
        return RequirementStatus(requirement, "present", tuple(distinct.values()), tuple(repeats))
    stale = tuple(map(_id, _matching(requirement, expired)))
    if stale:
        return RequirementStatus(requirement, "stale", stale)
    denied = tuple(map(_id, _matching(requirement, denied_units)))
    if denied:
        return RequirementStatus(requirement, "denied", denied)
    return RequirementStatus(requirement, "missing")


def _overall(statuses: Iterable[RequirementStatus]) -> Status:
    found = {item.status for item in statuses if item.requirement.required}
    if "denied" in found:
        return "BLOCKED_BY_PERMISSION"
    if "conflict" in found:
        return "BLOCKED_BY_CONFLICT"
    if found & {"missing", "stale"}:
        return "NEEDS_MORE_CONTEXT"
    return "READY"


def readiness(
    request: ContextRequest, units: Iterable[Unit], *, now: datetime | None = None
) -> Readiness:
    """Whether ``units`` give ``request`` what it requires, judged at ``now``.

    ``BLOCKED_BY_PERMISSION`` when a required requirement's only matching units were denied;
    else ``BLOCKED_BY_CONFLICT`` when a required claim is in conflict; else
    ``NEEDS_MORE_CONTEXT`` when a required requirement has no fresh permitted unit; else
    ``READY``. ``now`` (timezone-aware) is needed as soon as a unit has a ``max_age``.
    """
    if not isinstance(request, ContextRequest):
        raise ArgumentTypeError(f"readiness: request must be a ContextRequest, got {request!r}")
    if now is not None:
        if not isinstance(now, datetime):
            raise ArgumentTypeError(f"now must be a datetime or None, got {now!r}")
        require_aware(now, "now")
    gated = _gates(request, units, now)
    conflicts, outranked = _resolve(request, gated.usable)
    statuses = tuple(_status(r, gated, conflicts) for r in request.requirements)
    return Readiness(
        status=_overall(statuses),
        requirements=statuses,
        conflicts=MappingProxyType(conflicts),
        expired=tuple(map(_id, gated.expired)),
        outranked=tuple(filter(outranked.__contains__, map(_id, gated.usable))),
        denied=tuple(map(_id, gated.denied)),
    )
