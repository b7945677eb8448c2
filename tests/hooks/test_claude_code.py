"""The Claude Code protocol, pure: event names, the stdin object and every verdict's edge."""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest

from harness.hooks import PHASES, CommandHookError, Halt
from harness.hooks._claude_code import EVENT_NAMES, PHASE_OF_EVENT, stdin_json, verdict

BASH = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
BLOCK = b'{"decision": "block", "reason": "bom"}'


def test_the_event_names_are_claude_codes_for_the_phases() -> None:
    assert EVENT_NAMES == {
        "pre_tool_use": "PreToolUse",
        "post_tool_use": "PostToolUse",
        "session_start": "SessionStart",
        "session_end": "SessionEnd",
    }
    assert tuple(PHASE_OF_EVENT.values()) == PHASES


@pytest.mark.parametrize(
    "stdout",
    [
        codecs.BOM_UTF8 + BLOCK,
        b"  \n" + codecs.BOM_UTF8 + b" \t" + BLOCK + b"\n",
        codecs.BOM_UTF8 + codecs.BOM_UTF8 + BLOCK,
        BLOCK.decode().encode("utf-16"),  # a BOM, little or big endian by platform
        codecs.BOM_UTF16_BE + BLOCK.decode().encode("utf-16-be"),
    ],
)
def test_a_byte_order_mark_before_a_verdict_is_skipped(stdout: bytes) -> None:
    result = verdict(BASH, 0, stdout, b"", "guard")
    assert isinstance(result, Halt) and result.reason == "bom"


@pytest.mark.parametrize(
    "stdout", [codecs.BOM_UTF8 + b'{"decision": "block"', codecs.BOM_UTF8 + b" {nope}"]
)
def test_anything_that_looks_like_a_json_object_is_parsed_or_fails_closed(stdout: bytes) -> None:
    with pytest.raises(CommandHookError, match="invalid JSON"):
        verdict(BASH, 0, stdout, b"", "guard")


def test_json_nested_too_deeply_fails_closed_with_a_hook_error() -> None:
    deep = b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    with pytest.raises(
        CommandHookError, match="command hook 'guard' printed JSON nested too deeply"
    ):
        verdict(BASH, 0, deep, b"", "guard")


def test_a_payload_nested_too_deeply_is_not_run() -> None:
    nested: Any = []
    for _ in range(100_000):
        nested = [nested]
    payload = {"tool_name": "Bash", "tool_input": {"deep": nested}}
    with pytest.raises(CommandHookError, match="was not run: the payload is not JSON"):
        stdin_json("pre_tool_use", payload, "/srv", "guard")


def test_plain_text_and_a_bom_alone_continue() -> None:
    assert verdict(BASH, 0, codecs.BOM_UTF8 + b"all good\n", b"", "guard") is None
    assert verdict(BASH, 0, codecs.BOM_UTF8, b"", "guard") is None


def test_updated_input_rewrites_the_tool_input() -> None:
    out = json.dumps({"hookSpecificOutput": {"updatedInput": {"command": "ls -a"}}}).encode()
    assert verdict(BASH, 0, out, b"", "guard") == {**BASH, "tool_input": {"command": "ls -a"}}


def test_the_stdin_object_of_a_session_phase() -> None:
    data = json.loads(stdin_json("session_end", {"reason": "exit"}, "/srv", "guard"))
    assert data == {
        "hook_event_name": "SessionEnd",
        "session_id": "",
        "cwd": "/srv",
        "reason": "exit",
    }
