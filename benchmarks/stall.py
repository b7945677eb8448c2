"""Benchmark event-loop stalls from exact counting (issue 18, section 1).

Run: ``python benchmarks/stall.py`` (``--quick`` for a small, fast run). Prints a table; always
exits 0.

A 1 ms ticker runs on the event loop (``anyio.sleep(0.001)`` in a loop, recording the largest
gap between ticks) while a worker thread (``anyio.to_thread.run_sync``) counts and truncates
(to half its tokens) a 5 MB text. Three phases, interleaved over several rounds in the same
run so they see the same machine load:

- idle: the ticker alone, for as long as the harness work took;
- harness: a fresh ``TiktokenTokenizer`` (nothing memoised) ``count`` + ``truncate``;
- old: what ``TiktokenTokenizer`` did before, through lists of ids: ``encode_ordinary`` to
  count, ``encode_ordinary`` again to truncate, ``decode_bytes`` of the list's prefix and
  ``encode_ordinary`` of the candidate.

Target: the ticker's worst gap during the harness work is at most 3x its worst gap idle.
The text mixes prose with CJK and emoji (like ``benchmarks/assemble.py``); ``--ascii`` uses
the same prose without them.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
import anyio.to_thread
import tiktoken
from assemble import rank_file

from harness import TiktokenTokenizer

PARAGRAPH = (
    "The billing service reconciles invoices nightly; 请勿 edit ledgers by hand 🚫. "
    "See docs/ledger.md for the schema and the retention policy.\n"
)
ASCII_PARAGRAPH = (
    "The billing service reconciles invoices nightly; do not edit ledgers by hand. "
    "See docs/ledger.md for the schema and the retention policy.\n"
)


def make_text(size: int, paragraph: str) -> str:
    data = (paragraph * (size // len(paragraph.encode()) + 1)).encode()[:size]
    return data.decode("utf-8", "ignore")


def old_count_and_truncate(enc: tiktoken.Encoding, text: str, n: int) -> tuple[int, str]:
    """What ``TiktokenTokenizer`` did before: count, then truncate, through lists of ids."""
    count = len(enc.encode_ordinary(text))
    tokens = enc.encode_ordinary(text)  # truncate encoded the text again (the count was known)
    candidate = enc.decode_bytes(tokens[:n]).decode("utf-8", "ignore")
    assert len(enc.encode_ordinary(candidate)) <= n  # ... and verified its candidate
    return count, candidate


def new_count_and_truncate(enc: tiktoken.Encoding, text: str, n: int) -> tuple[int, str]:
    tokenizer = TiktokenTokenizer(enc)  # fresh: nothing memoised
    return tokenizer.count(text), tokenizer.truncate(text, n)


async def worst_gap(work: Callable[[], object] | None, idle_for: float) -> tuple[float, float]:
    """(worst gap between 1 ms ticks, seconds the work took) while ``work`` runs in a thread."""
    done = anyio.Event()
    worst = 0.0

    async def ticker() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now

    gc.collect()
    gc.disable()  # a collection pause on the loop is not what is measured here
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            await anyio.sleep(0.01)  # the ticker is running
            worst = 0.0
            start = time.perf_counter()
            if work is None:
                await anyio.sleep(idle_for)
            else:
                await anyio.to_thread.run_sync(work)
            took = time.perf_counter() - start
            done.set()
    finally:
        gc.enable()
    return worst, took


async def main(quick: bool, ascii_only: bool) -> None:
    size = 5_000_000
    rounds = 3 if quick else 7
    text = make_text(size, ASCII_PARAGRAPH if ascii_only else PARAGRAPH)
    enc = TiktokenTokenizer(rank_file()).encoding
    total = len(enc.encode_ordinary(text))
    n = total // 2
    ours, old = new_count_and_truncate(enc, text, n), old_count_and_truncate(enc, text, n)
    assert ours[0] == old[0] == total and text.startswith(ours[1]) and ours[1]

    gaps: dict[str, list[float]] = {"idle": [], "harness": [], "old": []}
    took: dict[str, list[float]] = {"idle": [], "harness": [], "old": []}
    for _ in range(rounds):  # interleaved: every phase sees the same machine load
        gap, seconds = await worst_gap(lambda: new_count_and_truncate(enc, text, n), 0)
        gaps["harness"].append(gap)
        took["harness"].append(seconds)
        gap, seconds = await worst_gap(None, seconds)
        gaps["idle"].append(gap)
        took["idle"].append(seconds)
        gap, seconds = await worst_gap(lambda: old_count_and_truncate(enc, text, n), 0)
        gaps["old"].append(gap)
        took["old"].append(seconds)

    idle_worst = max(gaps["idle"])
    print(
        f"event-loop stall benchmark ({'quick' if quick else 'full'}: {rounds} rounds; "
        f"{size / 1e6:.0f} MB {'ASCII' if ascii_only else 'mixed-script'} text, {total:,} "
        f"tokens, truncated to {n:,}; python {sys.version.split()[0]}, tiktoken "
        f"{tiktoken.__version__})"
    )
    header = ("phase", "worst gap", "median worst gap", "work took", "vs idle worst", "target")
    rows = [header]
    for phase in ("idle", "harness", "old"):
        worst = max(gaps[phase])
        ratio = worst / idle_worst
        target = ""
        if phase == "harness":
            target = f"<= 3x idle: {'yes' if ratio <= 3 else 'NO'}"
        rows.append(
            (
                phase,
                f"{worst * 1e3:.2f} ms",
                f"{statistics.median(gaps[phase]) * 1e3:.2f} ms",
                f"{statistics.median(took[phase]) * 1e3:.0f} ms",
                f"{ratio:.2f}x",
                target,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small, fast run")
    parser.add_argument("--ascii", action="store_true", help="ASCII prose only")
    args = parser.parse_args()
    anyio.run(main, args.quick, args.ascii)
