"""Benchmark PostgreSQL for many nodes (issue 15): change-to-load latency, and reads vs SQLite.

Run: ``python benchmarks/postgres.py`` (``--quick`` for a short run). Uses the server of
``HARNESS_TEST_POSTGRES_URL`` if set, else starts a throwaway one with ``.ci/postgres start``
(stopped at the end). Prints a table; always exits 0.

- Propagation: two ``Harness`` nodes on one database, both with the row cached. Another
  connection commits an UPDATE; the time from the commit (the UPDATE's ``execute`` returning)
  to each node's ``load`` returning the new text, polling ``load`` as an engine would, over
  at least 200 updates; p50 and p99. Also from the UPDATE being sent. Goal: p99 <= 50 ms.
  Writer and nodes share one process and event loop (as two nodes never would), so the loop
  is the only thing they contend for.
- A database read that no cache answers, against SQLite's in the same run: the store's
  ``read`` (PostgreSQL with a warm pool: three round trips on a Unix socket), the first read of
  a fresh store (connect included), and a whole uncached ``load`` (``invalidate`` first) of a
  one-file workspace. Medians; the ratio is PostgreSQL / SQLite.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
import anyio.lowlevel
import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)

from harness import Harness
from harness.instruction_files import create_schema
from harness.instruction_files.stores._sqlite import SqliteInstructionStore
from harness.instruction_files.stores.postgres import PostgresInstructionStore

ROOT = Path(__file__).resolve().parents[1]
PROJECT, AGENT = "acme", "reviewer"
UPSERT = (
    "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES ($1, $2, $3) "
    "ON CONFLICT (project_id, agent_slug) DO UPDATE SET content = EXCLUDED.content"
)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def database_row(harness: Harness, workspace: Path) -> str | None:
    found = await harness.instruction_files.load(workspace, agent=AGENT, project_id=PROJECT)
    return next((source.content for source in found if source.kind == "database"), None)


async def propagation(url: str, workspace: Path, updates: int) -> dict[str, list[float]]:
    """Per node, seconds from each UPDATE's commit (and send) to its load showing the text."""
    times: dict[str, list[float]] = {"node 1": [], "node 2": [], "both, from send": []}
    writer = await asyncpg.connect(url)
    try:
        await writer.execute(UPSERT, PROJECT, AGENT, "v-start")
        async with AsyncExitStack() as stack:
            nodes = [await stack.enter_async_context(Harness(database=url)) for _ in range(2)]
            for node in nodes:
                while not (node.store is not None and node.store.cache_rows):  # noqa: ASYNC110
                    await anyio.sleep(0.01)
                while await database_row(node, workspace) != "v-start":  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            for number in range(updates):
                text = f"v{number}"
                sent = time.perf_counter()
                await writer.execute(UPSERT, PROJECT, AGENT, text)
                committed = time.perf_counter()
                pending = {0, 1}
                while pending:
                    for index in sorted(pending):
                        if await database_row(nodes[index], workspace) == text:
                            times[f"node {index + 1}"].append(time.perf_counter() - committed)
                            pending.discard(index)
                    await anyio.lowlevel.checkpoint()  # let the listeners' notices in
                times["both, from send"].append(time.perf_counter() - sent)
    finally:
        await writer.close()
    return times


async def median_of(action: Callable[[], Awaitable[object]], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        await action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def reads(
    url: str, sqlite: Path, workspace: Path, rounds: int
) -> list[tuple[str, float, float]]:
    """(what, PostgreSQL seconds, SQLite seconds) medians."""
    rows: list[tuple[str, float, float]] = []
    pg = PostgresInstructionStore(url, timeout=5)
    lite = SqliteInstructionStore(sqlite, timeout=5)
    try:
        await pg.read(PROJECT, AGENT)
        rows.append(
            (
                "store.read (warm pool)",
                await median_of(lambda: pg.read(PROJECT, AGENT), rounds),
                await median_of(lambda: lite.read(PROJECT, AGENT), rounds),
            )
        )
    finally:
        await pg.aclose()
        await lite.aclose()

    async def first_read() -> None:
        fresh = PostgresInstructionStore(url, timeout=5)
        try:
            await fresh.read(PROJECT, AGENT)
        finally:
            await fresh.aclose()

    async def first_sqlite_read() -> None:
        fresh = SqliteInstructionStore(sqlite, timeout=5)
        try:
            await fresh.read(PROJECT, AGENT)
        finally:
            await fresh.aclose()

    few = max(10, rounds // 10)
    rows.append(
        (
            "first read of a new store",
            await median_of(first_read, few),
            await median_of(first_sqlite_read, few),
        )
    )
    loads = []
    for database in (url, str(sqlite)):
        async with Harness(database=database) as harness:
            files = harness.instruction_files

            async def uncached_load(files=files) -> None:  # type: ignore[no-untyped-def]
                files.invalidate()
                await files.load(workspace, agent=AGENT, project_id=PROJECT)

            await uncached_load()
            loads.append(await median_of(uncached_load, rounds))
    rows.append(("uncached load (invalidate first)", loads[0], loads[1]))
    return rows


def private_server(directory: Path) -> str:
    script = ROOT / ".ci" / "postgres"
    done = subprocess.run(
        [str(script), "start", str(directory)], capture_output=True, text=True, check=True
    )
    for line in done.stdout.splitlines():
        name, _, value = line.removeprefix("export ").partition("=")
        if name == "HARNESS_TEST_POSTGRES_URL":
            return value.strip("'")
    raise SystemExit(f"{script} printed no URL")


async def run(url: str, quick: bool) -> None:
    updates, rounds = (200, 100) if quick else (500, 400)
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "ws"
        workspace.mkdir()
        (workspace / "AGENTS.md").write_text("Use ruff.\n", encoding="utf-8")
        sqlite = Path(scratch) / "rows.db"
        create_schema(sqlite)
        text = "Review every diff for missing tests.\n" * 20
        with sqlite3.connect(sqlite) as connection:
            connection.execute(
                "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES (?, ?, ?)",
                (PROJECT, AGENT, text),
            )
        await create_schema(url)
        writer = await asyncpg.connect(url)
        try:
            await writer.execute(UPSERT, PROJECT, AGENT, text)
        finally:
            await writer.close()
        read_rows = await reads(url, sqlite, workspace, rounds)
        times = await propagation(url, workspace, updates)

    print(f"propagation over {updates} updates (ms)     p50      p99      max")
    for what, samples in times.items():
        label = f"commit -> {what}" if what.startswith("node") else f"UPDATE sent -> {what}"
        print(
            f"  {label:34s} {percentile(samples, 0.5) * 1e3:7.2f}  "
            f"{percentile(samples, 0.99) * 1e3:7.2f}  {max(samples) * 1e3:7.2f}"
        )
    worst = max(percentile(samples, 0.99) for samples in times.values()) * 1e3
    print(f"  goal p99 <= 50 ms: {'met' if worst <= 50 else 'NOT met'} (worst p99 {worst:.2f} ms)")
    print(f"\nreads no cache answers, medians of {rounds}   PostgreSQL    SQLite   ratio")
    for what, pg, lite in read_rows:
        print(f"  {what:36s} {pg * 1e3:8.3f} ms {lite * 1e3:8.3f} ms  {pg / lite:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 updates, 100 read rounds")
    args = parser.parse_args()
    url = os.environ.get("HARNESS_TEST_POSTGRES_URL")
    if url:
        anyio.run(run, url, args.quick)
        return
    with tempfile.TemporaryDirectory(prefix="harness-bench-pg-") as directory:
        try:
            url = private_server(Path(directory))
            anyio.run(run, url, args.quick)
        finally:
            subprocess.run([str(ROOT / ".ci" / "postgres"), "stop", directory], check=False)


if __name__ == "__main__":
    main()
