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
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress, repeat
from types import MappingProxyType
from typing import Any, Literal, cast

from harness.context_requests._request import ContextRequest, Requirement
from harness.errors import ArgumentError, ArgumentTypeError, HarnessError
from harness.prompt_assembler._values import Unit, require_aware

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
_Key = tuple[str | None, str | None]  # (kind, claim); claim None: any claim of the kind
_Sink = list[object]


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


def _spread(keys: Iterable[object], items: Iterable[object], into: Mapping[Any, _Sink]) -> None:
    """Append each item to the list its key names in ``into`` (others are discarded), as
    one C-level pass: ``readiness`` sees thousands of units and must stay cheap."""
    sink: _Sink = []
    appenders = {key: bucket.append for key, bucket in into.items()}
    calls = map(appenders.get, keys, repeat(sink.append))
    deque(map(operator.call, calls, items), maxlen=0)


@dataclass(slots=True)
class _Sorted:
    """The units after the gates. Per position of the input: ``kinds`` and ``claims``
    (``None`` for a denied or expired unit, so it matches nothing), and the denied and
    expired units themselves."""

    units: list[Unit]
    kinds: list[str | None]
    claims: list[str | None]
    denied: list[Unit] = field(default_factory=list)
    expired: list[Unit] = field(default_factory=list)


def _gates(request: ContextRequest, units: Iterable[Unit], now: datetime | None) -> _Sorted:
    """Permissions first (a denied unit is never looked at further), then freshness. Only
    the units with ``requires`` or ``max_age`` are looked at one by one."""
    every = list(units)
    if not set(map(type, every)) <= {Unit}:
        for unit in every:
            if not isinstance(unit, Unit):
                raise ArgumentTypeError(f"readiness: expected Unit items, got {unit!r}")
    result = _Sorted(every, list(map(_kind, every)), list(map(_claim, every)))
    positions = range(len(every))
    principal = request.principal
    denied: set[int] = set()
    for index in compress(positions, map(_requires, every)):  # a non-empty set is true
        if not every[index].requires <= principal:
            denied.add(index)
            result.denied.append(every[index])
            result.kinds[index] = result.claims[index] = None
    ages = list(map(_max_age, every))
    if 0 in ages:  # compress would skip a max_age of 0
        aged: Iterable[int] = [i for i, age in enumerate(ages) if age is not None]
    else:
        aged = compress(positions, ages)
    for index in aged:
        unit = every[index]
        if index not in denied and not _fresh(unit, now):
            result.expired.append(unit)
            result.kinds[index] = result.claims[index] = None
    return result


def _buckets(
    requirements: Iterable[Requirement], gated: _Sorted
) -> dict[_Key, tuple[list[Unit], list[Unit], list[Unit]]]:
    """Per requirement key: its fresh permitted, its expired and its denied matches."""
    keys = {(r.kind, r.claim) for r in requirements}
    usable: dict[_Key, _Sink] = {key: [] for key in keys if key[1] is not None}
    if usable:
        _spread(zip(gated.kinds, gated.claims, strict=True), gated.units, usable)
    any_claim: dict[str | None, _Sink] = {kind: [] for kind, claim in keys if claim is None}
    if any_claim:
        _spread(gated.kinds, gated.units, any_claim)
    usable.update(((kind, None), bucket) for kind, bucket in any_claim.items())
    return {
        key: (cast(list[Unit], usable[key]), _few(key, gated.expired), _few(key, gated.denied))
        for key in keys
    }


def _few(key: _Key, units: list[Unit]) -> list[Unit]:
    """The ``units`` (few: expired or denied) a requirement's key matches."""
    kind, claim = key
    if claim is None:
        return [unit for unit in units if unit.kind == kind]
    return [unit for unit in units if unit.kind == kind and unit.claim == claim]


def _winners(
    request: ContextRequest, pairs: Iterable[tuple[str | None, str | None]]
) -> set[tuple[str | None, str | None]]:
    """The (claim, authority) pairs that lose to a higher authority present for the claim."""
    present: dict[str, set[str | None]] = {}
    for claim, authority in pairs:
        if claim is not None:
            present.setdefault(claim, set()).add(authority)
    losers: set[tuple[str | None, str | None]] = set()
    for claim, classes in present.items():
        order = request.authority.get(claim, ())
        places: dict[str | None, int] = {name: place for place, name in enumerate(order)}
        rank = {a: places.get(a, len(order)) for a in classes}
        top = min(rank.values())
        losers.update((claim, a) for a, place in rank.items() if place != top)
    return losers


def _resolve(
    request: ContextRequest, gated: _Sorted
) -> tuple[dict[str, tuple[str, ...]], list[str]]:
    """Per claim: the ids in conflict (the top authority's units disagreeing), and the ids
    of units outranked by a higher authority class present for their claim.

    The decisions are taken on the small set of distinct (claim, authority) and (claim,
    value) pairs; units are named in masked C-level passes."""
    claims = gated.claims
    if not any(claims):
        return {}, []
    units = gated.units
    authorities = list(map(_authority, units))
    losers = _winners(request, set(zip(claims, authorities, strict=True)))
    outranked: list[str] = []
    if losers:
        lost = list(map(losers.__contains__, zip(claims, authorities, strict=True)))
        outranked = list(map(_id, compress(units, lost)))
        claims = [None if gone else claim for claim, gone in zip(claims, lost, strict=True)]
    values = list(map(_value, units))
    seen: dict[str, set[str]] = {}
    for claim, value in set(zip(claims, values, strict=True)):
        if claim is not None and value is not None:
            seen.setdefault(claim, set()).add(value)
    split = sorted(claim for claim, found in seen.items() if len(found) > 1)
    if not split:
        return {}, outranked
    if None in values:  # a top-authority unit without a value is in no conflict
        claims = [None if v is None else c for c, v in zip(claims, values, strict=True)]
    conflicts: dict[str, _Sink] = {claim: [] for claim in split}
    _spread(claims, map(_id, units), conflicts)
    return {claim: tuple(cast(list[str], ids)) for claim, ids in conflicts.items()}, outranked


def _status(
    requirement: Requirement,
    buckets: Mapping[_Key, tuple[list[Unit], list[Unit], list[Unit]]],
    conflicts: Mapping[str, tuple[str, ...]],
) -> RequirementStatus:
    """A fresh permitted match (outranked or not: it is evidence) is present unless its claim
    is in conflict; with none, stale matches make it ``stale`` and only denied ones
    ``denied``."""
    matching, expired, denied_units = buckets[requirement.kind, requirement.claim]
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
    if expired:
        return RequirementStatus(requirement, "stale", tuple(map(_id, expired)))
    if denied_units:
        return RequirementStatus(requirement, "denied", tuple(map(_id, denied_units)))
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
    conflicts, outranked = _resolve(request, gated)
    buckets = _buckets(request.requirements, gated)
    statuses = tuple(_status(r, buckets, conflicts) for r in request.requirements)
    return Readiness(
        status=_overall(statuses),
        requirements=statuses,
        conflicts=MappingProxyType(conflicts),
        expired=tuple(map(_id, gated.expired)),
        outranked=tuple(outranked),
        denied=tuple(map(_id, gated.denied)),
    )
