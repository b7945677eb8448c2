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
from datetime import datetime, timedelta
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
_observed_at = operator.attrgetter("observed_at")
_kind = operator.attrgetter("kind")
_Key = tuple[str | None, str | None]  # (kind, claim); claim None: any claim of the kind
_Quad = tuple[str | None, str | None, str | None, str | None]  # kind, claim, authority, value
_Sink = list[object]
_ByKind = Mapping[str | None, list[Unit]]

# Readiness sees thousands of units per build. Every per-unit step below is one C-level pass
# (``map`` over an attribute getter, ``zip``, ``compress``); every decision is taken on the
# few distinct (kind, claim, authority, value) combinations, never per unit; units are only
# named afterwards, in a pass that routes each to the list its combination says.


def _spread(keys: Iterable[object], items: Iterable[object], into: Mapping[Any, list[Any]]) -> None:
    """Append each item to the list its key names in ``into`` (others are discarded), in
    one C-level pass."""
    _route(keys, items, {key: bucket.append for key, bucket in into.items()})


def _route(keys: Iterable[object], items: Iterable[object], appenders: Mapping[Any, Any]) -> None:
    """Call ``appenders[key](item)`` for each pair (keys without an appender: nothing)."""
    sink: _Sink = []
    calls = map(appenders.get, keys, repeat(sink.append))
    deque(map(operator.call, calls, items), maxlen=0)


@dataclass(slots=True)
class _Sorted:
    """The units after the gates. Per position of the input: ``kinds`` and ``claims``
    (``None`` for a denied or expired unit, so it matches nothing), and the denied and
    expired units themselves; ``quads`` are the distinct combinations of the others."""

    units: list[Unit]
    kinds: list[str | None]
    claims: list[str | None]
    denied: list[Unit] = field(default_factory=list)
    expired: list[Unit] = field(default_factory=list)
    authorities: list[str | None] = field(default_factory=list)
    values: list[str | None] = field(default_factory=list)
    quads: set[_Quad] = field(default_factory=set)


def _gates(request: ContextRequest, units: Iterable[Unit], now: datetime | None) -> _Sorted:
    """Permissions first (a denied unit is never looked at further), then freshness. Only
    the units with ``requires`` or ``max_age`` are looked at further."""
    every = list(units)
    if not set(map(type, every)) <= {Unit}:
        for unit in every:
            if not isinstance(unit, Unit):
                raise ArgumentTypeError(f"readiness: expected Unit items, got {unit!r}")
    result = _Sorted(every, list(map(_kind, every)), list(map(_claim, every)))
    denied = _denied(every, request.principal)
    expired = _expired(every, denied, now)
    for index in (*denied, *expired):
        result.kinds[index] = result.claims[index] = None
    result.denied = list(map(every.__getitem__, denied))
    result.expired = list(map(every.__getitem__, expired))
    if any(result.claims):
        result.authorities = list(map(_authority, every))
        result.values = list(map(_value, every))
        result.quads = set(
            zip(result.kinds, result.claims, result.authorities, result.values, strict=True)
        )
    else:  # no claim anywhere: nothing to rank or to conflict, only kinds to match
        result.quads = {(kind, None, None, None) for kind in set(result.kinds)}
    return result


def _denied(every: list[Unit], principal: frozenset[str]) -> list[int]:
    """Positions of the units needing a permission ``principal`` lacks."""
    needing = list(compress(range(len(every)), map(_requires, every)))  # non-empty: true
    if not needing:
        return needing
    held = map(principal.issuperset, map(_requires, map(every.__getitem__, needing)))
    return list(compress(needing, map(operator.not_, held)))


def _expired(every: list[Unit], denied: list[int], now: datetime | None) -> list[int]:
    """Positions of the units, not denied, observed more than their ``max_age`` before
    ``now`` (a unit with a ``max_age`` always has an ``observed_at``)."""
    aged = list(
        compress(range(len(every)), map(operator.is_not, map(_max_age, every), repeat(None)))
    )
    if aged and denied:
        shut = set(denied)
        aged = [index for index in aged if index not in shut]
    if not aged:
        return aged
    if now is None:
        raise ArgumentError(
            f"unit {every[aged[0]].id!r} has a max_age, so readiness needs the time: pass "
            "now=datetime.now(timezone.utc)"
        )
    units = list(map(every.__getitem__, aged))
    seconds = map(timedelta.total_seconds, map(now.__sub__, map(_observed_at, units)))
    fresh = map(operator.le, seconds, map(_max_age, units))
    return list(compress(aged, map(operator.not_, fresh)))


def _losers(request: ContextRequest, quads: Iterable[_Quad]) -> set[tuple[str, str | None]]:
    """The (claim, authority) pairs that lose to a higher authority present for the claim."""
    present: dict[str, set[str | None]] = {}
    for _, claim, authority, _ in quads:
        if claim is not None:
            present.setdefault(claim, set()).add(authority)
    losers: set[tuple[str, str | None]] = set()
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
    """Per claim: the ids in conflict (the top authority's units with a value, disagreeing),
    and the ids of units outranked by a higher authority class present for their claim."""
    if not any(gated.claims):
        return {}, []
    units, claims, authorities = gated.units, gated.claims, gated.authorities
    losers = _losers(request, gated.quads)
    outranked: list[str] = []
    if losers:
        lost = map(losers.__contains__, zip(claims, authorities, strict=True))
        outranked = list(map(_id, compress(units, lost)))
    seen: dict[str, set[str]] = {}
    for _, claim, authority, value in gated.quads:
        if claim is not None and value is not None and (claim, authority) not in losers:
            seen.setdefault(claim, set()).add(value)
    split = sorted(claim for claim, found in seen.items() if len(found) > 1)
    if not split:
        return {}, outranked
    conflicts: dict[str, list[str]] = {claim: [] for claim in split}
    # A claim whose units all take part is routed by the claim alone (no per-unit tuple);
    # one with outranked or valueless units by (claim, authority, value).
    mixed = {
        claim
        for _, claim, authority, value in gated.quads
        if claim in conflicts and (value is None or (claim, authority) in losers)
    }
    if mixed:
        route = {
            (claim, authority, value): conflicts[claim].append
            for _, claim, authority, value in gated.quads
            if claim in mixed and value is not None and (claim, authority) not in losers
        }
        _route(zip(claims, authorities, gated.values, strict=True), map(_id, units), route)
    if len(mixed) < len(split):
        _spread(claims, map(_id, units), {c: conflicts[c] for c in split if c not in mixed})
    return {claim: tuple(ids) for claim, ids in conflicts.items()}, outranked


def _few(requirement: Requirement, by_kind: Mapping[str | None, list[Unit]]) -> list[Unit]:
    """The units of ``by_kind`` (few: expired or denied, by kind) ``requirement`` matches."""
    units, claim = by_kind.get(requirement.kind, []), requirement.claim
    return units if claim is None else [unit for unit in units if unit.claim == claim]


def _by_kind(units: list[Unit]) -> _ByKind:
    grouped: dict[str | None, list[Unit]] = {kind: [] for kind in set(map(_kind, units))}
    _spread(map(_kind, units), units, grouped)
    return grouped


def _statuses(
    request: ContextRequest, gated: _Sorted, conflicts: Mapping[str, tuple[str, ...]]
) -> tuple[RequirementStatus, ...]:
    """A fresh permitted match (outranked or not: it is evidence) is present unless its claim
    is in conflict; with none, stale matches make it ``stale`` and only denied ones
    ``denied``. Matching units are gathered only for the requirements found present."""
    decided: dict[Requirement, RequirementStatus] = {}
    present: list[Requirement] = []
    by_kind: dict[str | None, set[str | None]] = {}
    expired, denied = _by_kind(gated.expired), _by_kind(gated.denied)
    for kind, claim, _, _ in gated.quads:
        by_kind.setdefault(kind, set()).add(claim)
    for requirement in request.requirements:
        claims = by_kind.get(requirement.kind, set())
        if requirement.claim is not None:
            claims = claims & {requirement.claim}
        if not claims:
            decided[requirement] = _unmatched(requirement, expired, denied)
            continue
        hit = claims & conflicts.keys()
        in_conflict = sorted({i for claim in hit if claim for i in conflicts[claim]})
        if in_conflict:
            decided[requirement] = RequirementStatus(requirement, "conflict", tuple(in_conflict))
        else:
            present.append(requirement)
    for requirement, matching in _gather(present, gated).items():
        decided[requirement] = _distinct(requirement, matching)
    return tuple(decided[r] for r in request.requirements)


def _unmatched(
    requirement: Requirement, expired_by_kind: _ByKind, denied_by_kind: _ByKind
) -> RequirementStatus:
    expired = _few(requirement, expired_by_kind)
    if expired:
        return RequirementStatus(requirement, "stale", tuple(map(_id, expired)))
    denied = _few(requirement, denied_by_kind)
    if denied:
        return RequirementStatus(requirement, "denied", tuple(map(_id, denied)))
    return RequirementStatus(requirement, "missing")


def _gather(requirements: list[Requirement], gated: _Sorted) -> dict[Requirement, list[Unit]]:
    """Each requirement's fresh permitted matches, in input order."""
    keys = {(r.kind, r.claim) for r in requirements}
    usable: dict[_Key, _Sink] = {key: [] for key in keys if key[1] is not None}
    if usable:
        _spread(zip(gated.kinds, gated.claims, strict=True), gated.units, usable)
    any_claim: dict[str | None, _Sink] = {kind: [] for kind, claim in keys if claim is None}
    if any_claim:
        _spread(gated.kinds, gated.units, any_claim)
    usable.update(((kind, None), bucket) for kind, bucket in any_claim.items())
    return {r: cast(list[Unit], usable[r.kind, r.claim]) for r in requirements}


def _distinct(requirement: Requirement, matching: list[Unit]) -> RequirementStatus:
    """Present: equal text is a copy, recorded as corroborating, not a second confirmation."""
    distinct: dict[str, str] = {}
    repeats: list[str] = []
    for unit in matching:
        if unit.text in distinct:
            repeats.append(unit.id)
        else:
            distinct[unit.text] = unit.id
    return RequirementStatus(requirement, "present", tuple(distinct.values()), tuple(repeats))


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
    statuses = _statuses(request, gated, conflicts)
    return Readiness(
        status=_overall(statuses),
        requirements=statuses,
        conflicts=MappingProxyType(conflicts),
        expired=tuple(map(_id, gated.expired)),
        outranked=tuple(outranked),
        denied=tuple(map(_id, gated.denied)),
    )
