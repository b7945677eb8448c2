"""Command hooks: a Claude Code hook script run as a handler of the hooks chain (the effect).

A ``CommandHook`` is an async handler: it runs its command with ``/bin/sh -c`` in ``cwd``, in
its own process group, writes the payload as one JSON object to its stdin and turns the exit
status and output into a verdict::

    import anyio
    from harness.hooks import Hooks
    from harness.hooks.command import CommandHook

    guard = CommandHook("grep -q 'rm -rf' && exit 2 || exit 0", "/srv/app", "pre_tool_use")
    hooks = Hooks().register("pre_tool_use", guard, name=guard.command, timeout=60)
    outcome = anyio.run(hooks.run, "pre_tool_use", {"tool_name": "Bash", "tool_input": {}})

Design notes:

- Verdicts (CONTRACT section 13): exit 0 continues, unless stdout (after leading whitespace)
  starts with ``{``: then it is JSON, and ``decision: block``, ``continue: false`` or a
  ``permissionDecision`` of ``deny``/``ask`` halt, ``updatedInput`` rewrites ``tool_input``.
  Exit 2 halts with stderr as the reason. Everything else raises ``CommandHookError``, so the
  chain fails closed with a reason naming the hook (its command) and the cause.
- The timeout is the chain's own (``register(timeout=)``): its cancel scope cancels the run,
  and cancellation from any side kills the whole process group (SIGKILL) and reaps the shell,
  shielded, before it propagates. After the shell exits the group is killed too, so no
  process of the hook outlives its run (orphans the group leaves are reaped by init).
- stdin is written, and stdout and stderr are read, concurrently (no pipe deadlock); each
  output is capped at ``OUTPUT_LIMIT`` bytes as it arrives: one byte more kills the hook.
- Nothing from the payload reaches the command line: only stdin and ``CLAUDE_PROJECT_DIR``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, is_dataclass, replace
from typing import Any, Final

import anyio
import anyio.abc

from harness.errors import HarnessError, describe
from harness.hooks.errors import CommandHookError
from harness.hooks.hooks import Halt
from harness.hooks.matching import payload_field

__all__ = ["EVENT_NAMES", "OUTPUT_LIMIT", "CommandHook"]

OUTPUT_LIMIT: Final = 1 << 20  # bytes, for stdout and for stderr each
EVENT_NAMES: Final[Mapping[str, str]] = {
    "pre_tool_use": "PreToolUse",
    "post_tool_use": "PostToolUse",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
}
_EXCERPT: Final = 500  # characters of stderr quoted in a failure's reason


class _TooMuchOutput(HarnessError):
    """A stream went over the cap (internal: turned into a halt, never raised to a caller)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


@dataclass(frozen=True, slots=True)
class CommandHook:
    """A hook handler that runs ``command`` (see the module docstring for the rules)."""

    command: str
    cwd: str
    phase: str

    async def __call__(self, payload: Any) -> Halt | Any | None:
        data = _stdin_json(self.phase, payload, self.cwd, self.command)
        code, stdout, stderr = await self._run(data)
        return self._verdict(payload, code, stdout, stderr)

    async def _run(self, data: bytes) -> tuple[int, bytes, bytes]:
        env = {**os.environ, "CLAUDE_PROJECT_DIR": self.cwd}
        try:
            # Shielded: cancelled half-way, the process would run on unkilled; a cancellation
            # lands at the first checkpoint below instead, where the group is killed.
            with anyio.CancelScope(shield=True):
                process = await anyio.open_process(
                    ["/bin/sh", "-c", self.command],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=self.cwd,
                    env=env,
                    start_new_session=True,
                )
        except OSError as exc:
            raise self._error(f"could not start: {describe(exc)}") from exc
        outputs: dict[str, bytearray] = {"stdout": bytearray(), "stderr": bytearray()}
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_feed, process, data)
                assert process.stdout is not None and process.stderr is not None
                group.start_soon(_drain, process.stdout, outputs["stdout"], "stdout")
                group.start_soon(_drain, process.stderr, outputs["stderr"], "stderr")
                code = await process.wait()
                _kill_group(process.pid)  # leftovers would hold the pipes open
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                _kill_group(process.pid)
                await process.wait()
                await process.aclose()
            too_much = _find_too_much(exc)
            if too_much is not None:
                raise self._error(
                    f"wrote more than {OUTPUT_LIMIT} bytes to {too_much.stream}; it was killed"
                ) from None
            raise
        await process.aclose()
        return code, bytes(outputs["stdout"]), bytes(outputs["stderr"])

    def _verdict(self, payload: Any, code: int, stdout: bytes, stderr: bytes) -> Halt | Any | None:
        if code == 2:
            reason = stderr.decode("utf-8", "replace").strip()
            return Halt(reason or f"command hook {self.command!r} exited with 2 (block)")
        if code != 0:
            cause = f"exited with status {code}" if code > 0 else f"was killed by signal {-code}"
            if code == 127:
                cause += " (command not found)"
            excerpt = stderr.decode("utf-8", "replace").strip()[:_EXCERPT]
            raise self._error(cause + (f": {excerpt}" if excerpt else ""))
        text = stdout.decode("utf-8", "replace").lstrip()
        if not text.startswith("{"):
            return None
        try:
            output = json.loads(text)
        except ValueError as exc:
            raise self._error(f"printed invalid JSON on stdout: {exc}") from None
        return self._json_verdict(payload, output)

    def _json_verdict(self, payload: Any, output: dict[str, Any]) -> Halt | Any | None:
        keep_going = output.get("continue", True)
        if not isinstance(keep_going, bool):
            raise self._error(f'"continue" must be true or false, got {keep_going!r}')
        if not keep_going:
            stop = output.get("stopReason")
            return Halt(_text(stop) or f"command hook {self.command!r} stopped the run")
        decision = output.get("decision")
        if decision == "block":
            return Halt(_text(output.get("reason")) or f"command hook {self.command!r} blocked")
        if decision not in (None, "approve"):
            raise self._error(f'unknown "decision" {decision!r} (expected "block")')
        specific = output.get("hookSpecificOutput")
        if specific is None:
            return None
        if not isinstance(specific, dict):
            raise self._error('"hookSpecificOutput" must be an object')
        permission = specific.get("permissionDecision")
        if permission in ("deny", "ask"):
            reason = _text(specific.get("permissionDecisionReason"))
            return Halt(reason or f"command hook {self.command!r} answered {permission}")
        if permission not in (None, "allow"):
            raise self._error(
                f'unknown "permissionDecision" {permission!r} (expected allow, deny or ask)'
            )
        if "updatedInput" not in specific:
            return None
        updated = specific["updatedInput"]
        if not isinstance(updated, dict):
            raise self._error('"updatedInput" must be an object')
        return _with_tool_input(payload, updated, self.command)

    def _error(self, cause: str) -> CommandHookError:
        return CommandHookError(f"command hook {self.command!r} {cause}")


def _stdin_json(phase: str, payload: Any, cwd: str, command: str) -> bytes:
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
    except (TypeError, ValueError) as exc:
        raise CommandHookError(
            f"command hook {command!r} was not run: the payload is not JSON ({exc}); "
            "pass JSON-compatible tool_input and tool_response"
        ) from None


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


async def _feed(process: anyio.abc.Process, data: bytes) -> None:
    assert process.stdin is not None
    try:
        await process.stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the hook did not read its stdin: its right
    finally:
        await process.stdin.aclose()


async def _drain(stream: anyio.abc.ByteReceiveStream, into: bytearray, name: str) -> None:
    async for chunk in stream:
        into += chunk
        if len(into) > OUTPUT_LIMIT:
            raise _TooMuchOutput(name)


def _find_too_much(exc: BaseException) -> _TooMuchOutput | None:
    if isinstance(exc, _TooMuchOutput):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find_too_much(inner)
            if found is not None:
                return found
    return None


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(pgid, signal.SIGKILL)
