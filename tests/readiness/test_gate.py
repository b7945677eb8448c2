"""``harness.readiness``: gates, authority per claim type, conflicts, the status order."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

import harness
from harness import ContextRequest, NotReady, Readiness, Requirement, Unit, readiness
from harness.errors import HarnessError
from tests.readiness.scenarios import (
    CLAIM,
    NOW,
    parser_evidence,
    parser_request,
    production_config,
    timeout_evidence,
    timeout_request,
)


def test_the_timeout_needs_the_configuration_owner() -> None:
    result = readiness(timeout_request(), timeout_evidence(), now=NOW)
    assert result.status == "NEEDS_MORE_CONTEXT"
    config, incident = result.requirements
    assert (config.status, incident.status) == ("missing", "present")
    assert result.conflicts == {}  # README 30 vs source 10: different authority, no conflict


def test_the_production_config_settles_the_claim_and_outranks_the_rest() -> None:
    result = readiness(timeout_request(), [*timeout_evidence(), production_config()], now=NOW)
    assert result.status == "READY"
    assert result.requirements[0].units == ("config/prod/payment.yaml",)
    assert set(result.outranked) == {
        "README.md",
        "src/payment/client.py",
        "api/payment.yaml",
        "incidents/INC-2211.md",
    }


def test_a_second_runtime_config_disagreeing_blocks() -> None:
    second = production_config("config/prod/override.yaml", "7")
    evidence = [*timeout_evidence(), production_config(), second]
    result = readiness(timeout_request(), evidence, now=NOW)
    assert result.status == "BLOCKED_BY_CONFLICT"
    assert result.conflicts == {CLAIM: ("config/prod/payment.yaml", "config/prod/override.yaml")}
    assert result.requirements[0].status == "conflict"


def test_agreeing_sources_of_the_top_authority_do_not_conflict() -> None:
    again = production_config("config/prod/mirror.yaml", "5")
    result = readiness(timeout_request(), [production_config(), again], now=NOW)
    assert result.status == "READY" and result.conflicts == {}


def test_an_expired_config_never_satisfies_the_requirement() -> None:
    old = production_config()
    result = readiness(timeout_request(), [old], now=NOW + timedelta(hours=2))
    assert result.status == "NEEDS_MORE_CONTEXT"
    assert result.requirements[0].status == "stale"
    assert result.expired == (old.id,)


def test_a_config_only_the_owner_may_read_blocks_by_permission() -> None:
    config = production_config()
    locked = Unit(
        config.id,
        config.text,
        kind=config.kind,
        claim=CLAIM,
        value="5",
        requires=frozenset({"prod:read"}),
    )
    assert readiness(timeout_request(), [locked], now=NOW).status == "BLOCKED_BY_PERMISSION"
    granted = readiness(timeout_request(frozenset({"prod:read"})), [locked], now=NOW)
    assert granted.status == "READY"


def test_the_parser_repair_keeps_the_secret_denied_and_the_summary_expired() -> None:
    result = readiness(parser_request(), parser_evidence(), now=NOW)
    assert result.denied == (".env.production",)
    assert result.expired == ("summary-r39",)
    assert result.status == "NEEDS_MORE_CONTEXT"  # the summary must be refreshed
    assert [r.status for r in result.requirements] == ["present", "stale"]


def test_duplicates_corroborate_and_are_not_independent() -> None:
    first = Unit("a", "same text", kind="incident")
    copy = Unit("b", "same text", kind="incident")
    other = Unit("c", "different", kind="incident")
    request = ContextRequest("t", requirements=[Requirement("incident")])
    result = readiness(request, [first, copy, other])
    assert result.requirements[0].units == ("a", "c")
    assert result.requirements[0].corroborating == ("b",)


def test_max_age_needs_now_and_not_ready_is_a_harness_error() -> None:
    with pytest.raises(ValueError, match="now="):
        readiness(timeout_request(), [production_config()])
    error = NotReady(readiness(timeout_request(), [], now=NOW))
    assert isinstance(error, HarnessError) and isinstance(error, RuntimeError)
    assert "effective_config[timeout.production]" in str(error)
    assert harness.NotReady is NotReady and harness.readiness is readiness


def test_bad_requests_are_refused() -> None:
    with pytest.raises(TypeError):
        ContextRequest("t", requirements=[("kind",)])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="twice"):
        ContextRequest("t", authority={"c": ["a", "a"]})
    with pytest.raises(TypeError):
        Unit("u", "t", requires={"x"})  # type: ignore[arg-type]


# --- properties ------------------------------------------------------------------------------

KINDS = ["k1", "k2"]


@st.composite
def units(draw: st.DrawFn) -> list[Unit]:
    made = []
    for index in range(draw(st.integers(0, 8))):
        observed = NOW - timedelta(seconds=draw(st.integers(0, 200)))
        made.append(
            Unit(
                f"u{index}",
                draw(st.sampled_from(["x", "y", "z"])),
                kind=draw(st.sampled_from(KINDS)),
                claim=draw(st.sampled_from([None, "c"])),
                value=draw(st.sampled_from([None, "1", "2"])),
                authority=draw(st.sampled_from([None, "high", "low"])),
                requires=draw(st.sampled_from([frozenset(), frozenset({"p"})])),
                observed_at=observed,
                max_age=draw(st.sampled_from([None, 100.0])),
            )
        )
    return made


REQUEST = ContextRequest(
    "t",
    requirements=[Requirement("k1"), Requirement("k2", claim="c")],
    authority={"c": ["high", "low"]},
)


def _expected(result: Readiness) -> str:
    found = {r.status for r in result.requirements if r.requirement.required}
    for status, overall in (
        ("denied", "BLOCKED_BY_PERMISSION"),
        ("conflict", "BLOCKED_BY_CONFLICT"),
        ("missing", "NEEDS_MORE_CONTEXT"),
        ("stale", "NEEDS_MORE_CONTEXT"),
    ):
        if status in found:
            return overall
    return "READY"


@given(units())
def test_status_follows_the_priority_order(evidence: list[Unit]) -> None:
    result = readiness(REQUEST, evidence, now=NOW)
    assert result.status == _expected(result)


@given(units())
def test_no_denied_or_expired_unit_ever_satisfies(evidence: list[Unit]) -> None:
    result = readiness(REQUEST, evidence, now=NOW)
    unusable = set(result.denied) | set(result.expired)
    for item in result.requirements:
        if item.status in ("present", "conflict"):
            assert not unusable & {*item.units, *item.corroborating}


@given(units())
def test_only_the_top_authority_conflicts_and_order_does_not_matter(evidence: list[Unit]) -> None:
    result = readiness(REQUEST, evidence, now=NOW)
    by_id = {unit.id: unit for unit in evidence}
    for ids in result.conflicts.values():
        assert len({by_id[i].value for i in ids}) > 1
        assert len({by_id[i].authority for i in ids}) == 1
        assert not set(ids) & set(result.outranked)
    backwards = readiness(REQUEST, list(reversed(evidence)), now=NOW)
    assert backwards.status == result.status
    assert set(backwards.outranked) == set(result.outranked)


@given(units())
def test_denied_units_are_only_ever_denied(evidence: list[Unit]) -> None:
    result = readiness(REQUEST, evidence, now=NOW)
    granted = readiness(
        ContextRequest(
            "t",
            requirements=REQUEST.requirements,
            principal=frozenset({"p"}),
            authority=REQUEST.authority,
        ),
        evidence,
        now=NOW,
    )
    assert granted.denied == ()
    assert set(result.denied) == {u.id for u in evidence if u.requires}
