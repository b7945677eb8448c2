"""Start 100 agent sessions, give each a turn, crash some, and print what happened.

Run: ``python examples/engine/driver.py [--sessions N]`` (from anywhere). Manifests are
recorded in a SQLite file in a temporary directory, removed at the end.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections import Counter
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engine import Session, ToolCall, Turn, load_hooks

from harness import Harness
from harness.runtime import (
    ActorExited,
    DynamicSupervisor,
    Registry,
    TaskSupervisor,
    monitor,
)


def scripted_call(n: int) -> ToolCall:
    """The tool call session ``n``'s model asks for: most run, some are blocked, some crash."""
    if n % 10 == 3:
        return ToolCall("Bash", "rm -rf build/", "web/src/money.ts")
    if n % 10 == 7:
        return ToolCall("Crash", "flaky-tool --now", "services/billing/src/refunds.py")
    return ToolCall("Bash", "pytest -q", "services/billing/src/refunds.py")


async def main(count: int) -> None:
    hooks = load_hooks()
    registry = Registry()
    ids = [f"session-{n:03d}" for n in range(count)]
    with tempfile.TemporaryDirectory() as tmp:
        manifests = Path(tmp) / "manifests.db"
        async with (
            Harness(manifests=manifests) as harness,
            TaskSupervisor(shutdown=5.0) as tasks,
            DynamicSupervisor(max_children=count, max_restarts=count, max_seconds=5) as sup,
        ):
            for session_id in ids:
                session = Session(session_id, harness, tasks, hooks)
                spec = session.child_spec(id=session_id, name=(registry, session_id))
                await sup.start_child(spec)
            print(f"started {sup.count_children()['active']} sessions")
            report_turns(await first_turns(registry, ids))
            crashed = ids[::9]
            await crash(registry, crashed)
            restarted = await count_restarted(registry, crashed)
            others = sum(1 for sid in ids if sid not in crashed and registry.lookup(sid))
            print(f"restarted {restarted} of them (found again by id); {others} others untouched")
            restarts = sum(c.restarts for c in sup.which_children())
            print(f"supervisor: {sup.count_children()['active']} running, {restarts} restarts")
        still = sum(registry.lookup(sid) is not None for sid in ids)
        print(f"stopped: {still} sessions still found by id")
        print(f"manifest store: {manifests.stat().st_size} bytes on disk")


async def first_turns(registry: Registry, ids: list[str]) -> list[Turn]:
    """One turn in every session, all at once."""
    turns: list[Turn] = []

    async def take_turn(n: int, session_id: str) -> None:
        session = registry.lookup(session_id)
        assert session is not None
        turns.append(await session.call(scripted_call(n), timeout=120))

    async with anyio.create_task_group() as group:
        for n, session_id in enumerate(ids):
            group.start_soon(take_turn, n, session_id)
    return turns


async def crash(registry: Registry, crashed: list[str]) -> None:
    """Crash these sessions, each watched by a monitor that does not share its fate."""
    watches = []
    for session_id in crashed:
        session = registry.lookup(session_id)
        assert session is not None
        watches.append(monitor(session))
        try:
            await session.call("crash")
        except ActorExited as exc:
            assert isinstance(exc.reason, Exception)
    reasons = Counter([type(await watch.down()).__name__ for watch in watches])
    print(f"crashed {len(crashed)} sessions on purpose: down reasons {dict(reasons)}")


async def count_restarted(registry: Registry, crashed: list[str]) -> int:
    """How many crashed sessions run again as a fresh incarnation, found by their id."""
    restarted = 0
    with anyio.fail_after(30):
        for session_id in crashed:
            while (session := registry.lookup(session_id)) is None:  # noqa: ASYNC110
                await anyio.sleep(0.01)  # restarting: no event announces it to a bystander
            restarted += await session.call("turns") == 0
    return restarted


def report_turns(turns: list[Turn]) -> None:
    verdicts = Counter(turn.verdict.split(":")[0] for turn in turns)
    recorded = {turn.manifest_id for turn in turns if turn.manifest_id}
    print(
        f"{len(turns)} turns: {verdicts['ran']} tool calls ran, {verdicts['blocked']} blocked "
        f"by the pre_tool_use hook, {verdicts['tool crashed']} tools crashed in their task "
        "(their sessions kept running)"
    )
    print(f"recorded {len(recorded)} manifests, {sum(t.tokens for t in turns)} prompt tokens")
    blocked = next((t for t in turns if t.verdict.startswith("blocked")), None)
    if blocked is not None:
        print(f"  e.g. {blocked.session_id}: {blocked.verdict}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # the crashes are on purpose: keep logs quiet
    anyio.run(main, args.sessions)
