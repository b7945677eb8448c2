"""Benchmark: tool catalogs, each measured against its floor in the same run.

Cases:

* ``digest 1000 tools``: ``ToolCatalog.from_tools`` of 1,000 realistic tool definitions
  (validation, plain copy, per-tool and catalog digests) against canonicalising and hashing
  the same definitions with ``rfc8785`` and ``hashlib`` alone. Target ratio <= 2.0.
* ``list_changed -> check``: from the server sending ``notifications/tools/list_changed``
  (a real MCP server over stdio, ``tests/tools/server.py``, 4 tools in pages of 2) to
  ``ToolCatalog.watch`` yielding the new ``CatalogCheck`` (re-listing every page, checking
  against a SQLite pin store), p50 and p99, against the bare SDK ``list_tools`` round trip of
  the same catalog. Target p99 <= 100 ms.

Usage: ``python benchmarks/tools.py [--quick]``. Digest timings are best-of-N rounds.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import rfc8785

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.tools import PinStore, ToolCatalog, ToolPolicy
from tests.tools.session import connected


def _tools(count: int) -> list[dict[str, Any]]:
    return [
        {
            "name": f"tool_{index}",
            "title": f"Tool {index}",
            "description": f"Does thing {index} to the repository; returns a summary.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Repository-relative path"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "flags": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["path"],
            },
            "annotations": {"readOnlyHint": index % 2 == 0, "destructiveHint": False},
        }
        for index in range(count)
    ]


def _best(rounds: int, call: Any) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def digest_case(rounds: int) -> None:
    tools = _tools(1000)

    def floor() -> None:
        digests = {t["name"]: hashlib.sha256(rfc8785.dumps(t)).hexdigest() for t in tools}
        hashlib.sha256(rfc8785.dumps(digests)).hexdigest()

    ours = _best(rounds, lambda: ToolCatalog.from_tools("bench", tools))
    base = _best(rounds, floor)
    print(
        f"digest 1000 tools      harness {ours * 1e3:8.2f} ms   rfc8785+sha256 "
        f"{base * 1e3:8.2f} ms   ratio {ours / base:5.2f} (target <= 2.0)"
    )


async def change_case(samples: int) -> None:
    policy = ToolPolicy({"repo": ["read_file", "search", "list_dir"]})
    with tempfile.TemporaryDirectory() as scratch, anyio.fail_after(120):
        async with (
            await PinStore.open(Path(scratch) / "pins.db") as pins,
            connected(2) as (session, listener),
        ):
            checks = ToolCatalog.watch(
                session, server="repo", pins=pins, policy=policy, listener=listener
            )
            await anext(checks)
            floor: list[float] = []
            latency: list[float] = []
            for _ in range(samples):
                start = time.perf_counter()
                await ToolCatalog.from_mcp(session, server="repo")
                floor.append(time.perf_counter() - start)
                await session.call_tool("mutate", {"change": "announce"})
                # the notification precedes the call's response on the wire
                start = time.perf_counter()
                await anext(checks)
                latency.append(time.perf_counter() - start)
            await checks.aclose()  # type: ignore[attr-defined]
    print(
        f"list_changed -> check  p50 {_pct(latency, 50):6.2f} ms  p99 {_pct(latency, 99):6.2f} ms"
        f"   bare list_tools p50 {_pct(floor, 50):6.2f} ms  p99 {_pct(floor, 99):6.2f} ms"
        "   (target p99 <= 100 ms)"
    )


def _pct(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))
    return ordered[index] * 1e3 if pct != 50 else statistics.median(values) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds and samples")
    args = parser.parse_args()
    digest_case(3 if args.quick else 10)
    anyio.run(change_case, 30 if args.quick else 200)


if __name__ == "__main__":
    main()
