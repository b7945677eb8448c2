"""Benchmark: the Hooks run loop against pluggy 1.x, measured in the same run.

Cases (same payload, same number of calls for each side):

* ``sync x10``: a ``pre_tool_use`` chain of 10 sync handlers that all continue, each call being
  ``await hooks.run(...)`` inside one running event loop; the peer is pluggy calling 10
  hook implementations of one hook (``pm.hook.pre_tool_use(payload=...)``). Target ratio <= 1.0.
* ``async x10``: the same chain with ``async def`` handlers, for comparison (same pluggy peer).
* ``sync x10 + match``: 10 sync handlers with ``match="Bash|Edit"`` (all match), for comparison.

Usage: ``python benchmarks/hooks.py [--quick]``. Timings are best-of-N rounds, per call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pluggy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.hooks import Hooks

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


def build_hooks(handler: Any, match: str | None = None) -> Hooks:
    hooks = Hooks()
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


async def time_hooks(hooks: Hooks, calls: int, rounds: int) -> float:
    run = hooks.run
    payload = PAYLOAD
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(calls):
            await run("pre_tool_use", payload)
        best = min(best, (time.perf_counter_ns() - start) / calls)
    return best


async def main_async(calls: int, rounds: int) -> list[tuple[str, float, float]]:
    pm = pluggy_manager()
    assert pm.hook.pre_tool_use(payload=PAYLOAD) == []
    cases = [
        ("sync x10 (all continue)", build_hooks(sync_handler)),
        ("async x10 (all continue)", build_hooks(async_handler)),
        ("sync x10, match='Bash|Edit'", build_hooks(sync_handler, "Bash|Edit")),
    ]
    rows: list[tuple[str, float, float]] = []
    for label, hooks in cases:
        outcome = await hooks.run("pre_tool_use", PAYLOAD)
        assert not outcome.halted and len(outcome.ran) == HANDLERS
        # Warm up both sides, then interleave so machine noise hits both alike.
        time_pluggy(pm, calls // 10, 1)
        await time_hooks(hooks, calls // 10, 1)
        peer = time_pluggy(pm, calls, rounds)
        ours = await time_hooks(hooks, calls, rounds)
        rows.append((label, ours, peer))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small, fast run")
    args = parser.parse_args(argv)
    calls, rounds = (5_000, 3) if args.quick else (50_000, 7)

    rows = anyio.run(main_async, calls, rounds)
    print(
        f"Hooks.run vs pluggy {pluggy.__version__}: {HANDLERS} handlers, {calls} calls, "
        f"best of {rounds} rounds, ns per call"
    )
    header = f"{'case':<30} {'harness ns':>11} {'pluggy ns':>10} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    for label, ours, peer in rows:
        print(f"{label:<30} {ours:>11.0f} {peer:>10.0f} {ours / peer:>6.2f}")
    print("ratio = harness / pluggy; target for 'sync x10 (all continue)': <= 1.00")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
