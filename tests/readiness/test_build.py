"""``Harness.build_prompt(request=, evidence=, require_ready=)``: readiness before the model
call, recorded in the manifest; denied text never rendered, hashed or stored."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from harness import EXTENDED_LAYOUT, Harness, HarnessConfig, NotReady, Unit
from harness.config import Envelope
from tests.cli import ACME, ACME_DB
from tests.readiness.scenarios import (
    parser_evidence,
    parser_request,
    production_config,
    timeout_evidence,
    timeout_request,
)

EXTENDED = HarnessConfig(
    layout=EXTENDED_LAYOUT,
    envelope=Envelope(
        model_context_limit=131072, reserved_response=8192, reserved_tool_observations=16384
    ),
)


async def test_not_ready_raises_only_when_asked() -> None:
    with anyio.fail_after(20):
        async with Harness(EXTENDED, database=ACME_DB) as h:
            options = {"agent": "reviewer", "project_id": "acme", "request": timeout_request()}
            with pytest.raises(NotReady) as caught:
                await h.build_prompt(
                    ACME, evidence=timeout_evidence(), require_ready=True, **options
                )
            assert caught.value.readiness.status == "NEEDS_MORE_CONTEXT"
            prompt = await h.build_prompt(ACME, evidence=timeout_evidence(), **options)
            # not ready, yet the prompt is there when not required
            assert "Reduced the timeout to 5 s" in prompt.text
            recorded = prompt.manifest()["request"]
            assert recorded["readiness"]["status"] == "NEEDS_MORE_CONTEXT"
            assert recorded["request"]["action"] == "change_production_config"
            ready = await h.build_prompt(
                ACME,
                evidence=[*timeout_evidence(), production_config(observed=datetime.now(UTC))],
                require_ready=True,
                **options,
            )
    assert ready.manifest()["request"]["readiness"]["status"] == "READY"
    assert "payment.timeout: 5s" in ready.layer("evidence").text


async def test_evidence_needs_the_evidence_layer() -> None:
    with anyio.fail_after(20):
        async with Harness(database=ACME_DB) as h:
            with pytest.raises(ValueError, match=r"'evidence' layer.*EXTENDED_LAYOUT"):
                await h.build_prompt(ACME, agent="reviewer", evidence=timeout_evidence())


async def test_denied_text_reaches_neither_the_manifest_nor_the_store(tmp_path: Path) -> None:
    secret = parser_evidence()[1]
    digest = hashlib.sha256(secret.text.encode()).hexdigest()
    store = tmp_path / "manifests.db"
    with anyio.fail_after(30):
        async with Harness(EXTENDED, database=ACME_DB, manifests=store) as h:
            prompt = await h.build_prompt(
                ACME,
                agent="reviewer",
                project_id="acme",
                request=parser_request(),
                evidence=parser_evidence(),
            )
    manifest = prompt.manifest()
    assert "postgres://secret" not in prompt.text
    excluded = manifest["request"]["excluded"]
    assert {"layer": "evidence", "id": ".env.production", "reason": "denied"} in excluded
    assert ".env.production" in manifest["request"]["readiness"]["denied"]
    blob = repr(manifest)
    assert "postgres://secret" not in blob and digest not in blob
    _assert_absent(tmp_path, [b"postgres://secret", digest.encode()])


async def test_repeated_information_is_rendered_once_and_corroborates() -> None:
    rule = Unit("rule", "Refunds never exceed captures.")
    again = Unit("evidence-copy", "Refunds never exceed captures.", kind="policy")
    with anyio.fail_after(20):
        async with Harness(EXTENDED, database=ACME_DB) as h:
            prompt = await h.build_prompt(
                ACME, agent="reviewer", business_rules=[rule], evidence=[again]
            )
    assert prompt.text.count("Refunds never exceed captures.") == 1
    record = prompt.manifest()["request"]
    assert record["corroborating"] == {"rule": ["evidence-copy"]}
    assert {"layer": "evidence", "id": "evidence-copy", "reason": "duplicate", "of": "rule"} in (
        record["excluded"]
    )


def _assert_absent(directory: Path, needles: list[bytes]) -> None:
    """No file under ``directory`` (the database and its journal files) holds a needle."""
    for path in directory.iterdir():
        data = path.read_bytes()
        assert not [needle for needle in needles if needle in data], path


async def test_outranked_evidence_is_not_rendered_unless_a_requirement_asks_for_it() -> None:
    """The incident outranks README, source and spec for the claim: they are not rendered
    (reason outranked); the incident, which a requirement names, stays even once the
    production config outranks it."""
    with anyio.fail_after(20):
        async with Harness(EXTENDED, database=ACME_DB) as h:
            options = {"agent": "reviewer", "project_id": "acme", "request": timeout_request()}
            config = production_config(observed=datetime.now(UTC))
            prompt = await h.build_prompt(ACME, evidence=[*timeout_evidence(), config], **options)
    evidence = prompt.layer("evidence")
    assert evidence.kept == ("incidents/INC-2211.md", "config/prod/payment.yaml")
    assert "30 s" not in prompt.text and "DEFAULT_TIMEOUT" not in prompt.text
    excluded = prompt.manifest()["request"]["excluded"]
    outranked = [e["id"] for e in excluded if e["reason"] == "outranked"]
    assert outranked == ["README.md", "src/payment/client.py", "api/payment.yaml"]
