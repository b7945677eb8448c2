"""The Claude Code hook protocol: event names, the JSON a hook reads, the verdict it prints.

What a hook script sees and answers is Claude Code's; the process that runs it is
``harness.hooks.command``'s. This module is pure: bytes in, a verdict out::

    from harness.hooks._claude_code import stdin_json, verdict

    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    data = stdin_json("pre_tool_use", payload, "/srv/app", "./guard")
    assert b'"hook_event_name": "PreToolUse"' in data
    stdout = b'\\xef\\xbb\\xbf{"decision": "block", "reason": "no"}'  # a BOM first
    halt = verdict(payload, 0, stdout, b"", "./guard")
    assert halt.reason == "no"

Verdicts: exit 0 continues, unless stdout, after whitespace and a byte order mark, starts with
``{``: then it must be a JSON object, and ``decision: block``, ``continue: false`` or a
``permissionDecision`` of ``deny``/``ask`` halt, ``updatedInput`` rewrites ``tool_input``.
Exit 2 halts with stderr as the reason. Everything else raises ``CommandHookError``, so the
chain fails closed with a reason naming the hook (its command) and the cause.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Mapping
from dataclasses import is_dataclass, replace
from typing import Any, Final

from harness.hooks._errors import CommandHookError
from harness.hooks._matching import payload_field
from harness.hooks._outcome import Halt
from harness.hooks._registration import PHASES

__all__ = ["EVENT_NAMES", "PHASE_OF_EVENT", "TOOL_EVENTS", "stdin_json", "verdict"]

# A phase's Claude Code event name is its own name in CamelCase (pre_tool_use: PreToolUse),
# so the table of phases is written once, in harness.hooks._registration.
EVENT_NAMES: Final[Mapping[str, str]] = {
    phase: "".join(word.title() for word in phase.split("_")) for phase in PHASES
}
PHASE_OF_EVENT: Final[Mapping[str, str]] = {event: phase for phase, event in EVENT_NAMES.items()}
TOOL_EVENTS: Final = frozenset({EVENT_NAMES["pre_tool_use"], EVENT_NAMES["post_tool_use"]})

_EXCERPT: Final = 500  # characters of stderr quoted in a failure's reason
_LEADING: Final = re.compile(r"[\s\ufeff]*")  # whitespace and byte order marks before a verdict
_UTF16_BOMS: Final = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def stdin_json(phase: str, payload: Any, cwd: str, command: str) -> bytes:
    """The one JSON object a hook reads on stdin for ``payload`` in ``phase``."""
    data: dict[str, Any] = {
        "hook_event_name": EVENT_NAMES[phase],
        "session_id": payload_field(payload, "session_id") or "",
        "cwd": cwd,
    }
    if phase in ("pre_tool_use", "post_tool_use"):
        data["tool_name"] = payload_field(payload, "tool_name")
        data["tool_input"] = payload_field(payload, "tool_input")
        if phase == "post_tool_use":
            data["tool_response"] = payload_field(payload, "tool_response")
    else:
        key = "source" if phase == "session_start" else "reason"
        value = payload_field(payload, key)
        if value is not None:
            data[key] = value
    try:
        return json.dumps(data, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError) as exc:
        cause = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise CommandHookError(
            f"command hook {command!r} was not run: the payload is not JSON ({cause}); "
            "pass JSON-compatible tool_input and tool_response"
        ) from None


def verdict(payload: Any, code: int, stdout: bytes, stderr: bytes, command: str) -> Any:
    """What a hook's exit status and output mean: ``None`` (continue), a ``Halt``, or the
    payload with a new ``tool_input``; ``CommandHookError`` for anything else (fail closed)."""
    if code == 2:
        reason = stderr.decode("utf-8", "replace").strip()
        return Halt(reason or f"command hook {command!r} exited with 2 (block)")
    if code != 0:
        cause = f"exited with status {code}" if code > 0 else f"was killed by signal {-code}"
        if code == 127:
            cause += " (command not found)"
        excerpt = stderr.decode("utf-8", "replace").strip()[:_EXCERPT]
        raise _error(command, cause + (f": {excerpt}" if excerpt else ""))
    text = _decode(stdout)
    text = text[_LEADING.match(text).end() :]  # type: ignore[union-attr]
    if not text.startswith("{"):
        return None
    try:
        output = json.loads(text)
    except RecursionError:
        raise _error(command, "printed JSON nested too deeply to read") from None
    except ValueError as exc:
        raise _error(command, f"printed invalid JSON on stdout: {exc}") from None
    return _json_verdict(payload, output, command)


def _decode(stdout: bytes) -> str:
    # PowerShell and .NET tools may print UTF-16 with a byte order mark; UTF-8 otherwise.
    if stdout.startswith(_UTF16_BOMS):
        return stdout.decode("utf-16", "replace")
    return stdout.decode("utf-8", "replace")


def _json_verdict(payload: Any, output: dict[str, Any], command: str) -> Any:
    keep_going = output.get("continue", True)
    if not isinstance(keep_going, bool):
        raise _error(command, f'"continue" must be true or false, got {keep_going!r}')
    if not keep_going:
        stop = output.get("stopReason")
        return Halt(_text(stop) or f"command hook {command!r} stopped the run")
    decision = output.get("decision")
    if decision == "block":
        return Halt(_text(output.get("reason")) or f"command hook {command!r} blocked")
    if decision not in (None, "approve"):
        raise _error(command, f'unknown "decision" {decision!r} (expected "block")')
    specific = output.get("hookSpecificOutput")
    if specific is None:
        return None
    if not isinstance(specific, dict):
        raise _error(command, '"hookSpecificOutput" must be an object')
    return _specific_verdict(payload, specific, command)


def _specific_verdict(payload: Any, specific: dict[str, Any], command: str) -> Any:
    permission = specific.get("permissionDecision")
    if permission in ("deny", "ask"):
        reason = _text(specific.get("permissionDecisionReason"))
        return Halt(reason or f"command hook {command!r} answered {permission}")
    if permission not in (None, "allow"):
        raise _error(
            command, f'unknown "permissionDecision" {permission!r} (expected allow, deny or ask)'
        )
    if "updatedInput" not in specific:
        return None
    updated = specific["updatedInput"]
    if not isinstance(updated, dict):
        raise _error(command, '"updatedInput" must be an object')
    return _with_tool_input(payload, updated, command)


def _with_tool_input(payload: Any, updated: dict[str, Any], command: str) -> Any:
    if isinstance(payload, Mapping):
        return {**payload, "tool_input": updated}
    if is_dataclass(payload) and not isinstance(payload, type):
        return replace(payload, tool_input=updated)
    raise CommandHookError(
        f"command hook {command!r} returned updatedInput, but a {type(payload).__name__} "
        "payload cannot be rewritten; pass a dict or a dataclass payload"
    )


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _error(command: str, cause: str) -> CommandHookError:
    return CommandHookError(f"command hook {command!r} {cause}")
