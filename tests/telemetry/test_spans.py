"""Spans and metrics of builds, loads and hook runs, through the real OpenTelemetry SDK."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import harness.telemetry
from harness._harness import Harness, PromptBuild
from harness.errors import HarnessError
from harness.hooks import Halt, Hooks, load_hook_settings
from harness.prompt_assembler import Unit
from tests.cli import ACME, ACME_DB
from tests.telemetry.conftest import Sdk

MARKER = "ZQX-marker-7781"
RULES = [Unit(id="rule-1", text=f"refunds over 500 need approval {MARKER}")]


async def build(
    tmp_path: Path, *, times: int = 1, budgets: dict[str, int] | None = None, **kwargs: Any
) -> PromptBuild:
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB, manifests=tmp_path / "m.db") as harness:
            for _ in range(times):
                result = await harness.build(
                    ACME,
                    agent="reviewer",
                    project_id="acme",
                    business_rules=RULES,
                    budgets=budgets,
                    **kwargs,
                )
    return result


async def test_build_span_carries_manifest_id_digest_and_layer_figures(
    tmp_path: Path, instrument: Callable[..., Sdk]
) -> None:
    sdk = instrument()
    result = await build(tmp_path, budgets={"instruction_files": 300})
    (span,) = sdk.spans("harness.build")
    attributes = dict(span.attributes or {})
    prompt = result.prompt
    assert attributes["harness.manifest.id"] == prompt.manifest_id is not None
    assert attributes["harness.prompt.digest"] == prompt.digest
    assert attributes["harness.prompt.tokens"] == prompt.tokens
    assert attributes["gen_ai.agent.name"] == "reviewer"
    for layer in prompt.layers:
        assert attributes[f"harness.layer.{layer.name}.tokens"] == layer.tokens
        assert attributes[f"harness.layer.{layer.name}.budget"] == layer.budget
    files = next(layer for layer in prompt.layers if layer.name == "instruction_files")
    assert files.dropped  # the budget of 300 drops a file
    assert attributes["harness.layer.instruction_files.dropped"] == len(files.dropped)
    assert attributes["harness.layer.instruction_files.kept"] == len(files.kept)
    assert attributes["harness.layer.instruction_files.cut"] == 0
    metrics = sdk.metrics()
    assert metrics["harness.builds"] == [({"gen_ai.agent.name": "reviewer"}, 1)]
    drops = metrics["harness.build.drops"]
    assert [point[0]["harness.layer"] for point in drops] == ["instruction_files"]
    tokens = {point[0]["harness.layer"]: point[1] for point in metrics["harness.build.tokens"]}
    assert tokens["instruction_files"] == files.tokens


async def test_load_spans_are_children_of_the_build_and_say_cache_hit(
    tmp_path: Path, instrument: Callable[..., Sdk]
) -> None:
    sdk = instrument()
    await build(tmp_path, times=2)
    builds = sdk.spans("harness.build")
    loads = sdk.spans("harness.instruction_files.load")
    assert len(builds) == len(loads) == 2
    for parent, child in zip(builds, loads, strict=True):
        assert child.parent is not None and child.parent.span_id == parent.context.span_id
    first, second = (dict(span.attributes or {}) for span in loads)
    assert first["harness.instruction_files.cache_hit"] is False
    assert first["harness.instruction_files.files_read"] == 5
    assert second["harness.instruction_files.cache_hit"] is True
    assert second["harness.instruction_files.files_read"] == 0
    assert first["harness.instruction_files.scoped"] is False
    metrics = sdk.metrics()
    assert metrics["harness.instruction_files._cache.hits"] == [({}, 1)]
    assert metrics["harness.instruction_files._cache.misses"] == [({}, 1)]
    assert metrics["harness.instruction_files.reload.duration"] == [({}, 1)]  # one recorded


async def test_a_scoped_load_says_so(tmp_path: Path, instrument: Callable[..., Sdk]) -> None:
    sdk = instrument()
    await build(tmp_path, targets=["services/billing/api/handler.py"])
    (load,) = sdk.spans("harness.instruction_files.load")
    assert (load.attributes or {})["harness.instruction_files.scoped"] is True


async def test_no_unit_text_in_telemetry_unless_capture_content(
    tmp_path: Path, instrument: Callable[..., Sdk]
) -> None:
    sdk = instrument()
    result = await build(tmp_path)
    assert MARKER in result.prompt.text
    assert sdk.spans("harness.build")
    assert MARKER not in sdk.everything()
    harness.telemetry.uninstrument()
    captured = instrument(capture_content=True)
    await build(tmp_path)
    assert MARKER in captured.everything()
    (span,) = captured.spans("harness.build")
    assert MARKER in str((span.attributes or {})["gen_ai.system_instructions"])


async def test_hook_run_span(instrument: Callable[..., Sdk]) -> None:
    sdk = instrument()
    hooks = (
        Hooks()
        .register("pre_tool_use", lambda payload: None, name="audit")
        .register("pre_tool_use", lambda payload: Halt(f"no {MARKER}"), name="guard")
    )
    with anyio.fail_after(10):
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash", "command": MARKER})
    assert outcome.halted
    (span,) = sdk.spans("harness.hooks.run")
    assert dict(span.attributes or {}) == {
        "harness.hooks.phase": "pre_tool_use",
        "gen_ai.tool.name": "Bash",
        "harness.hooks.halted": True,
        "harness.hooks.handlers_run": 2,
        "harness.hooks.halted_by": "guard",
    }
    assert MARKER not in sdk.everything()
    (point,) = sdk.metrics()["harness.hooks.duration"]
    assert point == ({"harness.hooks.phase": "pre_tool_use"}, 1)


async def test_command_hook_span_is_a_child_of_the_run(
    tmp_path: Path, instrument: Callable[..., Sdk]
) -> None:
    sdk = instrument()
    settings = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]
    }
    loaded = load_hook_settings(json.loads(json.dumps(settings)), cwd=tmp_path)
    with anyio.fail_after(20):
        outcome = await loaded.hooks.run("pre_tool_use", {"tool_name": "Bash"})
    assert outcome.halted
    (command,) = sdk.spans("harness.hooks.command")
    (run,) = sdk.spans("harness.hooks.run")
    assert command.parent is not None and command.parent.span_id == run.context.span_id
    attributes = dict(command.attributes or {})
    assert attributes["harness.hooks.command.exit_status"] == 2
    assert attributes["harness.hooks.command.duration"] > 0
    assert "harness.hooks.command" not in attributes  # the command line is content


def test_uninstrument_puts_every_original_back(instrument: Callable[..., Sdk]) -> None:
    original = Hooks.__dict__["run"], Harness.__dict__["build"]
    instrument()
    assert harness.telemetry.instrumented()
    assert (Hooks.__dict__["run"], Harness.__dict__["build"]) != original
    instrument()  # again: replaces, never wraps twice
    harness.telemetry.uninstrument()
    assert not harness.telemetry.instrumented()
    assert (Hooks.__dict__["run"], Harness.__dict__["build"]) == original


async def test_a_failed_build_says_its_error_type_not_its_message(
    tmp_path: Path, instrument: Callable[..., Sdk]
) -> None:
    from opentelemetry.trace import StatusCode

    sdk = instrument()
    with anyio.fail_after(30), pytest.raises(HarnessError) as raised:
        async with Harness(database=ACME_DB) as harness:
            await harness.build(ACME, agent="reviewer", budgets={MARKER: 5})
    assert MARKER in str(raised.value)
    (span,) = sdk.spans("harness.build")
    assert span.status.status_code is StatusCode.ERROR
    assert (span.attributes or {})["error.type"] == type(raised.value).__qualname__
    assert MARKER not in sdk.everything() and not span.events
