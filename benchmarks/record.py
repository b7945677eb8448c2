"""Benchmark: what recording every build costs, against the same builds unrecorded.

    python benchmarks/record.py            # full run
    python benchmarks/record.py --quick    # a short run

The peer is the floor: the same 64 concurrent ``build_prompt`` calls on the bundled example
workspace (``examples/acme`` with its database row, rules and task state) by a ``Harness``
without a store, measured in the same run, interleaved round by round so both see the same
machine load. Target: with ``Harness(manifests=path)`` the round takes at most 1.2x the time
(median over rounds). Every recorded build is durable before ``build_prompt`` returns (WAL,
``synchronous=FULL``); concurrent builds share transactions (group commit), which is what
keeps the ratio low. Second figure: the store's growth per additional identical build, after
a WAL checkpoint, over many builds (target: at most 2 KiB; texts and layers are shared).
Also printed, the breakdown: what a recorded build adds on the event loop, per build on fresh
prompts (its ``PromptRecord``; its encoding into a row from the layers it shares with the
build before, with the prompt's digest, which an unrecorded build never computes, of which
the layer memo's lookups; and what the general path, a ``ManifestRecord`` with its
manifest's dicts encoded, would take instead), one fsync'd commit of a round's 64 rows, how
many commits a round takes; ``floor + these`` is the ratio those alone allow (the recorder's
round trip comes on top); how long a round lasts after its last build was handed to the
recorder (the part that cannot overlap: that batch's commit and the wake-up of its builds);
the garbage collector's pauses per round, recorded and not (a recorded build's objects live
until its commit); and how long the recorder's writes took during the rounds (a writer
thread waits for the GIL at every SQLite step and ``stat`` while the loop is busy).
Always exits 0; prints PASS or MISS per target.
"""

from __future__ import annotations

import argparse
import gc
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
import anyio.to_thread  # noqa: E402

from harness import Harness  # noqa: E402
from harness.manifests import _codec as codec  # noqa: E402
from harness.manifests._prompt_codec import encode_prompt  # noqa: E402
from harness.manifests._record import ManifestRecord, PromptRecord  # noqa: E402
from harness.manifests._sqlite import open_database, write_batch  # noqa: E402
from harness.manifests._watch import FileWatch  # noqa: E402
from harness.prompt_assembler._shared import shared_layers  # noqa: E402

WORKSPACE = ROOT / "examples" / "acme"
DATABASE = ROOT / "examples" / "acme.db"
CONCURRENCY = 64
TARGET_RATIO = 1.2
TARGET_GROWTH = 2048


def _units(name: str) -> list[str]:
    lines = (WORKSPACE / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


RULES = _units("business-rules.txt")


BUILD: dict[str, Any] = {"agent": "reviewer", "project_id": "acme", "business_rules": RULES}


async def _round(harness: Harness) -> float:
    async def one() -> None:
        await harness.build_prompt(WORKSPACE, **BUILD)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(CONCURRENCY):
            group.start_soon(one)
    return time.perf_counter() - started


def _settled_size(path: Path) -> int:
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


@dataclass
class Timing:
    floor: float  # median round without a store
    store: float  # median round with one
    builds: int  # builds recorded
    batches: float  # transactions per recorded round
    parts: dict[str, float]  # per build, on the event loop: record, encode, layers, general
    commit: float  # one fsync'd transaction of a round's 64 rows (median)
    writes: list[float]  # each store write of the recorded rounds, as the recorder awaited it
    tail: float  # median, per recorded round: its end minus the last build handed to the recorder
    collected: dict[str, tuple[float, float]]  # per round, plain and recorded: (collections, s)


async def _record_cpu(harness: Harness, samples: int = 256) -> dict[str, float]:
    """Per build, on fresh prompts with a warm ``Written``, what a recorded build adds on the
    event loop: ``PromptRecord`` and ``encode_prompt`` (its row, from the layers it shares
    with the build before, and the prompt's digest, which an unrecorded build never
    computes), of which ``shared_layers`` (the layer memo's lookups); and, for
    comparison, the general path on other fresh prompts (``ManifestRecord.of`` and
    ``encode_one``, which build the record's manifest and layer dicts)."""
    context: dict[str, Any] = {
        "workspace": str(WORKSPACE),
        "agent": "reviewer",
        "project_id": "acme",
        "tokenizer_spec": "approximate",
    }
    clock = time.perf_counter
    spent = dict.fromkeys(("record", "encode", "layers", "general"), 0.0)
    written = codec.Written()
    prompts = [await harness.build_prompt(WORKSPACE, **BUILD) for _ in range(samples)]
    for prompt in prompts:
        started = clock()
        shared_layers(prompt)
        spent["layers"] += clock() - started
    for prompt in prompts:
        started = clock()
        record = PromptRecord(prompt, requested_at=datetime.now(UTC), **context)
        recorded = clock()
        encode_prompt(record, written)
        encoded = clock()
        spent["record"] += recorded - started
        spent["encode"] += encoded - recorded
    written = codec.Written()
    for prompt in [await harness.build_prompt(WORKSPACE, **BUILD) for _ in range(samples)]:
        started = clock()
        general = ManifestRecord.of(prompt, requested_at=datetime.now(UTC), **context)
        codec.encode_one(general, written)
        spent["general"] += clock() - started
    return {name: total / samples for name, total in spent.items()}


def _commit_seconds(path: Path, rounds: int) -> float:
    """One transaction of 64 rows of a round's size, committed as the store commits."""
    connection, identity = open_database(path, create=True, timeout=5.0)
    watch = FileWatch(path)
    times = []
    with closing(connection):
        for n in range(rounds):
            rows: list[tuple[str, str, str, str | None, str, str, bytes]] = [
                (f"bench{n:06d}{i:03d}", "now", "reviewer", "acme", "/w", "d", b"x" * 900)
                for i in range(CONCURRENCY)
            ]
            started = time.perf_counter()
            write_batch(connection, identity, codec.Batch(rows=rows), watch)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


class _Collections:
    """Garbage-collection pauses (count, seconds) while ``on``: a recorded build keeps its
    objects alive until its commit, and the collector goes through them meanwhile."""

    def __init__(self) -> None:
        self.on, self.count, self.seconds, self._started = False, 0, 0.0, 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if not self.on:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.count += 1
            self.seconds += time.perf_counter() - self._started

    def close(self) -> None:
        gc.callbacks.remove(self._callback)


async def timing(rounds: int, scratch: Path) -> Timing:
    plain = Harness(database=DATABASE)
    recorded = Harness(database=DATABASE, manifests=scratch / "timing.db")
    floor: list[float] = []
    store: list[float] = []
    tails: list[float] = []
    collections = {"plain": _Collections(), "recorded": _Collections()}
    async with plain, recorded:
        for harness in (plain, recorded):  # warm both: caches, tokenizer, the store's pages
            await _round(harness)
        recorder = recorded._provenance._recorder if recorded._provenance else None
        before = recorder.batches if recorder else 0
        writes = _timed_writes(recorder.store) if recorder and recorder.store else []
        handed = _handed_in(recorder)
        for _ in range(rounds):
            for name, harness, times in (("plain", plain, floor), ("recorded", recorded, store)):
                collections[name].on = True
                times.append(await _round(harness))
                collections[name].on = False
            if handed:
                tails.append(time.perf_counter() - handed[-1])
        batches = ((recorder.batches if recorder else 0) - before) / rounds
        manifests = recorded.manifests
        assert manifests is not None, "the recorded Harness has a manifest store"
        builds = len(await manifests.list(limit=1_000_000))
        parts = await _record_cpu(plain)
    commit = await anyio.to_thread.run_sync(_commit_seconds, scratch / "commit.db", rounds)
    for watch in collections.values():
        watch.close()
    return Timing(
        statistics.median(floor),
        statistics.median(store),
        builds,
        batches,
        parts,
        commit,
        writes,
        statistics.median(tails) if tails else 0.0,
        {name: (w.count / rounds, w.seconds / rounds) for name, w in collections.items()},
    )


def _handed_in(recorder: Any) -> list[float]:
    """Wrap ``recorder.record`` (this instance only) to note when each build hands it in."""
    if recorder is None:
        return []
    original, times = recorder.record, []

    async def record(record: ManifestRecord) -> None:
        times.append(time.perf_counter())
        await original(record)

    recorder.record = record
    return times


def _timed_writes(store: Any) -> list[float]:
    """Wrap ``store.record`` (this instance only) to time each write the recorder awaits."""
    original, spent = store.record, []

    async def record(*records: ManifestRecord) -> None:
        started = time.perf_counter()
        await original(*records)
        spent.append(time.perf_counter() - started)

    store.record = record
    return spent


async def growth(builds: int, scratch: Path) -> float:
    path = scratch / "growth.db"
    async with Harness(database=DATABASE, manifests=path) as harness:
        await _round(harness)
        before = _settled_size(path)
        for _ in range(builds // CONCURRENCY):
            await _round(harness)
        after = _settled_size(path)
    return (after - before) / (builds // CONCURRENCY * CONCURRENCY)


def _breakdown(measured: Timing, floor: float) -> None:
    """Where the added time goes: the event loop's own work per recorded build, and the commit
    the last batch waits for after the last build (the part that cannot overlap)."""
    parts = measured.parts
    per_build = parts["record"] + parts["encode"]
    cpu = per_build * CONCURRENCY
    print(
        f"  added per build on the event loop: {per_build * 1e6:.0f} us = record "
        f"{parts['record'] * 1e6:.0f} + encode with digest {parts['encode'] * 1e6:.0f} "
        f"(of which layer lookups {parts['layers'] * 1e6:.0f}) "
        f"(x{CONCURRENCY} = {cpu * 1000:.1f} ms); the general path would take "
        f"{parts['general'] * 1e6:.0f} us"
    )
    bound = (floor + cpu + measured.commit) / floor
    print(
        f"  one fsync'd {CONCURRENCY}-row commit {measured.commit * 1000:.2f} ms, "
        f"{measured.batches:.1f} commits/round; floor + these = {bound:.2f}x"
    )
    print(
        f"  after the last build of a round is handed in, the round ends {measured.tail * 1000:.2f}"
        " ms later (median): its batch's commit and the wake-up of its builds"
    )
    (plain_count, plain_seconds), (count, seconds) = measured.collected.values()
    print(
        f"  garbage collection per round: {count:.1f} collections, {seconds * 1000:.2f} ms "
        f"recorded vs {plain_count:.1f}, {plain_seconds * 1000:.2f} ms unrecorded (a recorded "
        "build's objects live until its commit)"
    )
    writes = sorted(measured.writes)
    if writes:
        median, p90 = writes[len(writes) // 2], writes[int(len(writes) * 0.9)]
        print(
            f"  the recorder's writes during the rounds: median {median * 1000:.2f} ms, "
            f"p90 {p90 * 1000:.2f} ms (vs {measured.commit * 1000:.2f} ms alone: the rest is "
            "the writer thread waiting for the GIL while the loop builds)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run")
    args = parser.parse_args()
    rounds, builds = (5, 640) if args.quick else (25, 6400)
    with tempfile.TemporaryDirectory(prefix="harness-record-") as directory:
        scratch = Path(directory)
        measured = anyio.run(timing, rounds, scratch)
        per_build = anyio.run(growth, builds, scratch)
    floor, store = measured.floor, measured.store
    ratio = store / floor
    print(f"{CONCURRENCY} concurrent builds of examples/acme, median of {rounds} rounds")
    print(f"  without a store   {floor * 1000:8.1f} ms")
    print(f"  recorded          {store * 1000:8.1f} ms   ({measured.builds} builds recorded)")
    verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
    print(f"  ratio             {ratio:8.2f}x   target <= {TARGET_RATIO}x   {verdict}")
    _breakdown(measured, floor)
    verdict = "PASS" if per_build <= TARGET_GROWTH else "MISS"
    print(
        f"store growth per additional identical build ({builds} builds): {per_build:,.0f} B   "
        f"target <= {TARGET_GROWTH:,} B   {verdict}"
    )
    print(f"(machine: {os.cpu_count()} CPUs; figures from a loaded machine vary)")


if __name__ == "__main__":
    main()
