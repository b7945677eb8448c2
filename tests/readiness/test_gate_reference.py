"""``harness.readiness`` equals a plain reference written unit by unit, on random evidence.

The gate decides on distinct (kind, claim, authority, value) combinations and names units in
C-level passes; this reference walks the units one at a time, as the rules read.
"""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ContextRequest, Requirement, Unit, readiness
from tests.readiness.scenarios import NOW

CLAIMS = [None, "", "c", "d"]


@st.composite
def evidence(draw: st.DrawFn) -> list[Unit]:
    made = []
    for index in range(draw(st.integers(0, 12))):
        made.append(
            Unit(
                draw(st.sampled_from([f"u{index}", f"u{index % 3}"])),
                draw(st.sampled_from(["x", "y", "z"])),
                kind=draw(st.sampled_from([None, "k1", "k2"])),
                claim=draw(st.sampled_from(CLAIMS)),
                value=draw(st.sampled_from([None, "1", "2"])),
                authority=draw(st.sampled_from([None, "high", "low", "other"])),
                requires=draw(st.sampled_from([frozenset(), frozenset({"p"})])),
                observed_at=NOW - timedelta(seconds=draw(st.integers(0, 200))),
                max_age=draw(st.sampled_from([None, 0.0, 100.0])),
            )
        )
    return made


@st.composite
def requests(draw: st.DrawFn) -> ContextRequest:
    wanted = draw(
        st.lists(
            st.builds(
                Requirement,
                st.sampled_from(["k1", "k2"]),
                claim=st.sampled_from([None, "c", "d"]),
                required=st.booleans(),
            ),
            max_size=4,
        )
    )
    return ContextRequest(
        "t",
        requirements=wanted,
        principal=draw(st.sampled_from([frozenset(), frozenset({"p"})])),
        authority={"c": ["high", "low"], "d": ["low"]},
    )


def _reference(request: ContextRequest, units: list[Unit]) -> dict[str, object]:
    denied = [u for u in units if not u.requires <= request.principal]
    expired = [
        u
        for u in units
        if u not in denied
        and u.max_age is not None
        and u.observed_at is not None
        and (NOW - u.observed_at).total_seconds() > u.max_age
    ]
    usable = [u for u in units if u not in denied and u not in expired]
    ranks: dict[str, int] = {}
    for u in usable:
        if u.claim is not None:
            order = list(request.authority.get(u.claim, ()))
            rank = order.index(u.authority) if u.authority in order else len(order)
            ranks[u.claim] = min(ranks.get(u.claim, rank), rank)

    def place(u: Unit) -> int:
        order = list(request.authority.get(u.claim or "", ()))
        return order.index(u.authority) if u.authority in order else len(order)

    claimed = any(u.claim for u in usable)
    outranked = [
        u for u in usable if claimed and u.claim is not None and place(u) != ranks[u.claim]
    ]
    top = [u for u in usable if u.claim is not None and u not in outranked and u.value is not None]
    split = sorted(
        {u.claim or "" for u in top if len({t.value for t in top if t.claim == u.claim}) > 1}
    )
    conflicts = {c: [u.id for u in top if u.claim == c] for c in split} if claimed else {}
    statuses = []
    for r in request.requirements:

        def hit(u: Unit, r: Requirement = r) -> bool:
            return u.kind == r.kind and r.claim in (None, u.claim)

        matching = [u for u in usable if hit(u)]
        units_of: list[str] = []
        repeats: list[str] = []
        if matching:
            ids = {
                i for u in matching if u.claim and u.claim in conflicts for i in conflicts[u.claim]
            }
            if ids:
                status, units_of = "conflict", sorted(ids)
            else:
                status, texts = "present", {}
                for u in matching:
                    if u.text in texts:
                        repeats.append(u.id)
                    else:
                        texts[u.text] = u.id
                units_of = list(texts.values())
        elif any(hit(u) for u in expired):
            status, units_of = "stale", [u.id for u in expired if hit(u)]
        elif any(hit(u) for u in denied):
            status, units_of = "denied", [u.id for u in denied if hit(u)]
        else:
            status = "missing"
        statuses.append((r, status, units_of, repeats))
    found = {status for r, status, _, _ in statuses if r.required}
    overall = (
        "BLOCKED_BY_PERMISSION"
        if "denied" in found
        else "BLOCKED_BY_CONFLICT"
        if "conflict" in found
        else "NEEDS_MORE_CONTEXT"
        if found & {"missing", "stale"}
        else "READY"
    )
    return {
        "status": overall,
        "requirements": [
            {
                "kind": r.kind,
                "claim": r.claim,
                "required": r.required,
                "status": status,
                "units": units_of,
                "corroborating": repeats,
            }
            for r, status, units_of, repeats in statuses
        ],
        "conflicts": conflicts,
        "expired": [u.id for u in expired],
        "outranked": [u.id for u in outranked],
        "denied": [u.id for u in denied],
    }


@settings(max_examples=400)
@given(requests(), evidence())
def test_the_gate_equals_the_unit_by_unit_reference(
    request: ContextRequest, units: list[Unit]
) -> None:
    assert readiness(request, units, now=NOW).to_dict() == _reference(request, units)
