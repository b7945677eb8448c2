"""An agent engine's sessions on harness.runtime: one supervised actor per session id.

Each session is an ``Actor`` started under a ``DynamicSupervisor`` and registered in a
``Registry`` under its session id (``child_spec(name=(registry, session_id))``), so a request
finds the running session by id and never a dead one. A turn builds the prompt for the files
the tool call will touch (``Harness.build_prompt(targets=...)``, recorded in the manifest
store), then runs the ``pre_tool_use`` hook chain (command hooks from ``settings.json``) and
the tool in a ``start_nolink`` task: a crashing tool never crashes the session.

Run ``python examples/engine/driver.py`` to see 100 of them at work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import Harness
from harness.hooks import Hooks, load_hook_settings
from harness.runtime import Actor, TaskSupervisor

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent / "acme"


class ToolCrashed(RuntimeError):
    """The scripted tool failed (inside its task: the session survives it)."""


class SessionCrashed(RuntimeError):
    """The session was told to crash (its supervisor restarts it)."""


@dataclass(frozen=True)
class ToolCall:
    """A tool call the (scripted) model asked for."""

    tool: str
    command: str
    target: str  # the workspace file it touches: its instruction files go in the prompt


@dataclass(frozen=True)
class Turn:
    """What one turn did."""

    session_id: str
    manifest_id: str | None
    tokens: int
    verdict: str  # "ran", "blocked: <reason>" or "tool crashed: <error>"


def load_hooks() -> Hooks:
    """The engine's hook chain, read from the Claude Code settings file beside this module."""
    settings = load_hook_settings(HERE / "settings.json", cwd=HERE)
    if settings.skipped:
        raise RuntimeError(f"settings.json: could not honour {settings.skipped}")
    return settings.hooks


async def run_tool(hooks: Hooks, call: ToolCall) -> str:
    """Run the pre_tool_use chain on ``call``, then the (scripted) tool itself."""
    payload = {"tool_name": call.tool, "tool_input": {"command": call.command}}
    outcome = await hooks.run("pre_tool_use", payload)
    if outcome.halted:
        return f"blocked: {(outcome.reason or '').strip()}"
    if call.tool == "Crash":
        raise ToolCrashed(f"tool {call.tool!r} failed on {call.command!r}")
    return "ran"


class Session(Actor):
    """One agent session: its turns, the prompt of each, and its tool calls in tasks."""

    def __init__(self, session_id: str, harness: Harness, tasks: TaskSupervisor, hooks: Hooks):
        super().__init__()
        self.session_id = session_id
        self.harness = harness
        self.tasks = tasks
        self.hooks = hooks

    async def init(self) -> None:
        self.turns = 0  # a restarted session starts its count again

    async def handle_call(self, msg: Any) -> Any:
        if msg == "crash":
            raise SessionCrashed(f"session {self.session_id} was told to crash")
        if msg == "turns":
            return self.turns
        assert isinstance(msg, ToolCall)
        return await self.turn(msg)

    async def turn(self, call: ToolCall) -> Turn:
        prompt = await self.harness.build_prompt(
            WORKSPACE,
            agent="implementer",
            project_id="acme",
            targets=[call.target],
            task_state=[f"session {self.session_id}, turn {self.turns + 1}: {call.command}"],
        )
        task = await self.tasks.start_nolink(run_tool, self.hooks, call)
        try:
            verdict = await task.result(timeout=60)
        except ToolCrashed as exc:
            verdict = f"tool crashed: {exc}"
        self.turns += 1
        return Turn(self.session_id, prompt.manifest_id, prompt.tokens, verdict)
