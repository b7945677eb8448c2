"""Command hooks: a Claude Code hook script run as a handler of the hooks chain (the effect).

A ``CommandHook`` is an async handler: it runs its command with ``/bin/sh -c`` in ``cwd``, in
its own session and process group, writes the payload as one JSON object to its stdin and
turns the exit status and output into a verdict (``harness.hooks._claude_code``)::

    import anyio
    from harness.hooks import Hooks
    from harness.hooks.command import CommandHook

    guard = CommandHook("grep -q 'rm -rf' && exit 2 || exit 0", "/srv/app", "pre_tool_use")
    hooks = Hooks().register("pre_tool_use", guard, name=guard.command, timeout=60)
    outcome = anyio.run(hooks.run, "pre_tool_use", {"tool_name": "Bash", "tool_input": {}})

The environment: by default a hook inherits the whole environment of the process that runs
it (as in Claude Code), secrets included, plus ``CLAUDE_PROJECT_DIR``. With ``env_allowlist``
it gets only the listed variables (those that are set) plus ``CLAUDE_PROJECT_DIR``.

What is left of a hook after its run: when the shell exits, its process group is killed; its
output is read for a short grace (``OUTPUT_GRACE``) and then no longer waited for, so a
leftover that keeps the pipes open cannot stall the chain, and its result is the shell's own.
If something still held the pipes, every process of the hook's session and every process
holding one of its pipes is killed too (Linux, through ``/proc``; ``harness.hooks._leftovers``).
A halt by timeout or cancellation kills all of that as well. What cannot be reached: a
process that left the session (``setsid()``) and closed or replaced the hook's pipes has no
link back to the hook, and runs on; so does anything the hook started through another service
(``systemd-run``, ``at``, a container runtime). On other systems than Linux only the process
group is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import anyio.abc

from harness.errors import HarnessError, describe_reason
from harness.hooks._claude_code import EVENT_NAMES, stdin_json, verdict
from harness.hooks._errors import CommandHookError, HookSettingsError
from harness.hooks._leftovers import kill_leftovers

__all__ = ["EVENT_NAMES", "OUTPUT_GRACE", "OUTPUT_LIMIT", "CommandHook", "from_settings"]

OUTPUT_LIMIT: Final = 1 << 20  # bytes, for stdout and for stderr each
OUTPUT_GRACE: Final = 0.2  # seconds the output is still read after the shell exited
_CHUNK: Final = 1 << 16


class _TooMuchOutput(HarnessError):
    """A stream went over the cap (internal: turned into a halt, never raised to a caller)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.stream = stream


@dataclass(frozen=True, slots=True)
class CommandHook:
    """A hook handler that runs ``command`` (see the module docstring for the rules).

    ``env_allowlist``: ``None`` (the default) passes the whole environment on; a sequence of
    names passes only those (that are set), plus ``CLAUDE_PROJECT_DIR``.
    """

    command: str
    cwd: str
    phase: str
    env_allowlist: tuple[str, ...] | None = None

    async def __call__(self, payload: Any) -> Any:
        data = stdin_json(self.phase, payload, self.cwd, self.command)
        code, stdout, stderr = await self._run(data)
        return verdict(payload, code, stdout, stderr, self.command)

    def environment(self) -> dict[str, str]:
        """The environment the command gets, read from ``os.environ`` now."""
        if self.env_allowlist is None:
            return {**os.environ, "CLAUDE_PROJECT_DIR": self.cwd}
        env = {name: os.environ[name] for name in self.env_allowlist if name in os.environ}
        env["CLAUDE_PROJECT_DIR"] = self.cwd
        return env

    async def _run(self, data: bytes) -> tuple[int, bytes, bytes]:
        # stdout and stderr are pipes of our own (not the event loop's), so the shell's exit
        # is seen whoever else holds them, and their inodes find who still does.
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            process = await self._spawn(out_write, err_write)
        except BaseException:
            for fd in (out_read, err_read):
                os.close(fd)
            raise
        finally:
            os.close(out_write)
            os.close(err_write)
        try:
            return await self._supervise(process, data, out_read, err_read)
        finally:
            os.close(out_read)
            os.close(err_read)

    async def _spawn(self, stdout: int, stderr: int) -> anyio.abc.Process:
        try:
            # Shielded: cancelled half-way, the process would run on unkilled; a cancellation
            # lands at the first checkpoint of the run instead, where the group is killed.
            with anyio.CancelScope(shield=True):
                process = await anyio.open_process(
                    ["/bin/sh", "-c", self.command],
                    stdin=subprocess.PIPE,
                    stdout=stdout,
                    stderr=stderr,
                    cwd=self.cwd,
                    env=self.environment(),
                    start_new_session=True,
                )
        except OSError as exc:
            raise self._error(f"could not start: {describe_reason(exc)}") from exc
        return process

    async def _supervise(
        self, process: anyio.abc.Process, data: bytes, out_read: int, err_read: int
    ) -> tuple[int, bytes, bytes]:
        outputs = (bytearray(), bytearray())
        drained = anyio.Event()
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(_feed, process, data)
                streams = _Streams(drained)
                group.start_soon(_drain, out_read, outputs[0], "stdout", streams)
                group.start_soon(_drain, err_read, outputs[1], "stderr", streams)
                code = await process.wait()
                _kill_group(process.pid)  # leftovers of the group would hold the pipes open
                if not drained.is_set():
                    with anyio.move_on_after(OUTPUT_GRACE):
                        await drained.wait()
                    group.cancel_scope.cancel()  # stop reading: whoever holds them is left
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                _kill_group(process.pid)
                await process.wait()
                await process.aclose()
                await kill_leftovers(process.pid, (out_read, err_read))
            too_much = _find_too_much(exc)
            if too_much is not None:
                raise self._error(
                    f"wrote more than {OUTPUT_LIMIT} bytes to {too_much.stream}; it was killed"
                ) from None
            raise
        await process.aclose()
        if not drained.is_set():
            with anyio.CancelScope(shield=True):
                await kill_leftovers(process.pid, (out_read, err_read))
        return code, bytes(outputs[0]), bytes(outputs[1])

    def _error(self, cause: str) -> CommandHookError:
        return CommandHookError(f"command hook {self.command!r} {cause}")


def from_settings(
    entry: Mapping[str, Any], at: str, cwd: str, phase: str, env_allowlist: Sequence[str] | None
) -> tuple[CommandHook, str]:
    """The ``"type": "command"`` entry of a settings file at JSON path ``at``: the handler
    and its name (the command string)."""
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookSettingsError(f"{at}.command", "must be a non-empty string")
    allow = None if env_allowlist is None else tuple(env_allowlist)
    return CommandHook(command, cwd, phase, allow), command


async def _feed(process: anyio.abc.Process, data: bytes) -> None:
    assert process.stdin is not None
    try:
        await process.stdin.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass  # the hook did not read its stdin: its right
    finally:
        await process.stdin.aclose()


class _Streams:
    """Counts the output streams still open; ``done`` is set when both reached their end."""

    __slots__ = ("done", "open")

    def __init__(self, done: anyio.Event) -> None:
        self.done = done
        self.open = 2

    def closed(self) -> None:
        self.open -= 1
        if not self.open:
            self.done.set()


async def _drain(fd: int, into: bytearray, name: str, streams: _Streams) -> None:
    os.set_blocking(fd, False)
    while True:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        if not chunk:
            streams.closed()
            return
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
