"""Benchmark: the Hooks run loop against pluggy 1.x, measured in the same run.

Cases (same payload, same number of calls for each side):

* ``sync x10``: a ``pre_tool_use`` chain of 10 sync handlers that all continue, each call being
  ``await hooks.run(...)`` inside one running event loop; the peer is pluggy calling 10
  hook implementations of one hook (``pm.hook.pre_tool_use(payload=...)``). Target ratio <= 0.6,
  with public APIs of anyio and asyncio only.
* ``async x10``: the same chain with ``async def`` handlers, for comparison (same pluggy peer).
* ``sync x10 + match``: 10 sync handlers with ``match="Bash|Edit"`` (all match), for comparison.

* ``command hook 'true'``: a settings-loaded command hook running ``true`` through
  ``Hooks.run`` (spawn in its own process group, JSON on stdin, both pipes read, reaped)
  against its floor, a bare ``anyio.open_process`` of the same command with three pipes in its
  own session (the event loop's own spawn), in the same run. Target ratio <= 1.35.
  ``subprocess.run(["/bin/sh", "-c", "true"])`` is printed for comparison.

``--before CHECKOUT`` adds a column: the same chains built with the ``Hooks`` of another
checkout of harness (e.g. ``--before ../harness-before``, the code before a change), loaded
from its ``harness/hooks/_hooks.py`` and timed in the same run. That module imports its siblings
from this checkout's package, so the other checkout must agree with this one on them (for a
change to ``hooks.py`` alone); otherwise run this script in each checkout.

Usage: ``python benchmarks/hooks.py [--quick] [--before CHECKOUT]``. Timings are best-of-N
rounds, per call.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import pluggy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.hooks import Hooks, load_hook_settings

HANDLERS = 10
PAYLOAD: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": "ls -la"}}

hookspec = pluggy.HookspecMarker("bench")
hookimpl = pluggy.HookimplMarker("bench")


class Spec:
    @hookspec
    def pre_tool_use(self, payload: dict[str, Any]) -> None:
        """One hook taking the payload, like a pre_tool_use phase."""


def make_plugin(index: int) -> object:
    class Plugin:
        @hookimpl
        def pre_tool_use(self, payload: dict[str, Any]) -> None:
            return None

    Plugin.__name__ = f"Plugin{index}"
    return Plugin()


def pluggy_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager("bench")
    pm.add_hookspecs(Spec)
    for i in range(HANDLERS):
        pm.register(make_plugin(i), name=f"plugin{i}")
    return pm


def sync_handler(payload: dict[str, Any]) -> None:
    return None


async def async_handler(payload: dict[str, Any]) -> None:
    return None


def load_before(checkout: str) -> Any:
    """The ``Hooks`` class of another checkout (its siblings are this checkout's modules)."""
    path = Path(checkout) / "harness" / "hooks" / "hooks.py"
    spec = importlib.util.spec_from_file_location("before_hooks", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules["before_hooks"] = module
    spec.loader.exec_module(module)
    return module.Hooks


def build_hooks(handler: Any, match: str | None = None, hooks_class: Any = Hooks) -> Any:
    hooks = hooks_class()
    for i in range(HANDLERS):
        hooks = hooks.register("pre_tool_use", handler, name=f"h{i}", match=match)
    return hooks


def time_pluggy(pm: pluggy.PluginManager, calls: int, rounds: int) -> float:
    hook = pm.hook.pre_tool_use
    payload = PAYLOAD
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            hook(payload=payload)
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


async def time_hooks(hooks: Any, calls: int, rounds: int) -> float:
    run = hooks.run
    payload = PAYLOAD
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            await run("pre_tool_use", payload)
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


async def main_async(
    calls: int, rounds: int, before: Any | None
) -> list[tuple[str, float, float, float | None]]:
    pm = pluggy_manager()
    assert pm.hook.pre_tool_use(payload=PAYLOAD) == []
    cases = [
        ("sync x10 (all continue)", sync_handler, None),
        ("async x10 (all continue)", async_handler, None),
        ("sync x10, match='Bash|Edit'", sync_handler, "Bash|Edit"),
    ]
    rows: list[tuple[str, float, float, float | None]] = []
    for label, handler, match in cases:
        hooks = build_hooks(handler, match)
        old = None if before is None else build_hooks(handler, match, before)
        for chain in (hooks, old):
            if chain is not None:
                outcome = await chain.run("pre_tool_use", PAYLOAD)
                assert not outcome.halted and len(outcome.ran) == HANDLERS
        # Warm up every side, then alternate round by round so machine noise hits all alike.
        time_pluggy(pm, calls // 10, 1)
        await time_hooks(hooks, calls // 10, 1)
        peer = ours = then_best = float("inf")
        for _ in range(rounds):
            peer = min(peer, time_pluggy(pm, calls, 1))
            ours = min(ours, await time_hooks(hooks, calls, 1))
            if old is not None:
                then_best = min(then_best, await time_hooks(old, calls, 1))
        rows.append((label, ours, peer, None if old is None else then_best))
    return rows


async def bare_spawn() -> None:
    """The floor under any command hook on anyio: spawn ``/bin/sh -c true`` with three pipes
    in its own session, close stdin, wait (no reading, no JSON, no hook logic)."""
    pipe = subprocess.PIPE
    command = ["/bin/sh", "-c", "true"]
    async with await anyio.open_process(
        command, stdin=pipe, stdout=pipe, stderr=pipe, start_new_session=True
    ) as process:
        assert process.stdin is not None
        await process.stdin.aclose()
        await process.wait()


async def time_command_hook(spawns: int, rounds: int) -> tuple[float, float, float]:
    """(ours, peer, floor) ns per spawn: a ``true`` command hook vs ``subprocess.run`` of it,
    and a bare ``anyio.open_process`` of it (the floor of any anyio-based runner)."""
    with tempfile.TemporaryDirectory() as cwd:
        group = {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}
        hooks = load_hook_settings({"PreToolUse": [group]}, cwd=cwd).hooks
        outcome = await hooks.run("pre_tool_use", PAYLOAD)
        assert not outcome.halted and outcome.ran == ("true",), outcome
        ours = peer = floor = float("inf")
        for _ in range(rounds):  # interleaved, so machine noise hits all alike
            start = time.perf_counter_ns()
            for _ in range(spawns):
                await bare_spawn()
            floor = min(floor, (time.perf_counter_ns() - start) / spawns)
            start = time.perf_counter_ns()
            for _ in range(spawns):
                subprocess.run(["/bin/sh", "-c", "true"], check=True)  # noqa: ASYNC221 (the peer)
            peer = min(peer, (time.perf_counter_ns() - start) / spawns)
            start = time.perf_counter_ns()
            for _ in range(spawns):
                await hooks.run("pre_tool_use", PAYLOAD)
            ours = min(ours, (time.perf_counter_ns() - start) / spawns)
    return ours, peer, floor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small, fast run")
    parser.add_argument("--before", metavar="CHECKOUT", help="also time another checkout")
    args = parser.parse_args(argv)
    calls, rounds = (5_000, 3) if args.quick else (50_000, 7)
    before = None if args.before is None else load_before(args.before)

    rows = anyio.run(main_async, calls, rounds, before)
    print(
        f"Hooks.run vs pluggy {pluggy.__version__}: {HANDLERS} handlers, {calls} calls, "
        f"best of {rounds} rounds, ns per call"
    )
    header = f"{'case':<30} {'harness ns':>11} {'pluggy ns':>10} {'ratio':>6}"
    if before is not None:
        header += f" {'before ns':>10} {'now/before':>10}"
    print(header)
    print("-" * len(header))
    for label, ours, peer, then in rows:
        line = f"{label:<30} {ours:>11.0f} {peer:>10.0f} {ours / peer:>6.2f}"
        if then is not None:
            line += f" {then:>10.0f} {ours / then:>10.2f}"
        print(line)
    print("ratio = harness / pluggy; target for 'sync x10 (all continue)': <= 0.60")
    spawns = 20 if args.quick else 100
    ours, peer, floor = anyio.run(time_command_hook, spawns, rounds)
    print(
        f"\ncommand hook 'true' via Hooks.run: {ours / 1000:.0f} us per run; "
        f"subprocess.run(['/bin/sh', '-c', 'true']): {peer / 1000:.0f} us; "
        f"ratio {ours / peer:.2f} (best of {rounds} rounds of {spawns})"
    )
    print(
        f"floor: bare anyio.open_process of it (3 pipes, own session, wait): "
        f"{floor / 1000:.0f} us, {floor / peer:.2f}x subprocess.run; the hook is "
        f"{ours / floor:.2f}x the floor (target <= 1.35)"
    )
    if before is not None:
        print("now/before: this checkout / the --before one; target for the match row: <= 0.50")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
