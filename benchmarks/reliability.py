"""Reliability and security figures: the tests' reliability scenarios (tests/scenarios.py) at
larger scale.

    python benchmarks/reliability.py            # full run (a few minutes on 2 cores)
    python benchmarks/reliability.py --quick    # small, fast run

Prints one row per scenario: operations attempted, faults injected, wrong results, hung
callers, leaked tasks, leaked file descriptors, and seconds; then the lifecycle memory figure
and any problem found. Every "bad" column must read 0. There is no peer to compare against:
these are absolute counts, not speeds. Exits 0 (a non-zero bad column is printed as FAIL).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from harness import ApproximateTokenizer, assemble  # noqa: E402
from tests.prompt_assembler.forgery import check_structure, exact_tokenizer, random_assembly  # noqa: E402
from tests.scenarios import (  # noqa: E402
    ChaosParams,
    Figures,
    Resources,
    run_chaos,
    run_db_faults,
    run_hook_chains,
    run_lifecycle,
)
from tests.trees import RandomChooser, check_discovery, gen_tree  # noqa: E402


def scratch() -> Path:
    return Path(tempfile.mkdtemp(prefix="harness-reliability-"))


async def hostile_trees(count: int, seed: int) -> Figures:
    figures = Figures("hostile trees (discovery x3)")
    before = Resources.snapshot()
    started = time.perf_counter()
    stats: dict[str, int] = {}
    for n in range(count):
        spec = gen_tree(RandomChooser(random.Random(seed + n)))
        # check_discovery runs its own event loop: keep it off this one.
        problems = await anyio.to_thread.run_sync(partial(check_discovery, spec, stats=stats))
        figures.operations += 3  # two walks and one load per tree
        for problem in problems:
            if problem.startswith("discovery hung"):
                figures.hang(problem)
            else:
                figures.wrong_result(f"tree seed {seed + n}: {problem}")
    figures.faults = stats.get("hostile", 0)
    figures.seconds = time.perf_counter() - started
    tasks, fds = await before.leaks()
    figures.leaked_tasks, figures.leaked_fds = len(tasks), len(fds)
    return figures


def forgery(count: int, exact_every: int, seed: int) -> Figures:
    figures = Figures("forgery (assemble)")
    rng = random.Random(seed)
    started = time.perf_counter()
    exact = exact_tokenizer()
    for n in range(count):
        units, budgets, strategies = random_assembly(rng)
        tokenizer = exact if n % exact_every == 0 else ApproximateTokenizer(rng.randint(1, 4))
        figures.operations += 1
        figures.faults += sum(
            u.text.lower().count("context") for layer in units.values() for u in layer
        )
        try:
            prompt = assemble(
                dict(units), budgets=budgets, strategies=strategies, tokenizer=tokenizer
            )
            check_structure(prompt, units)
        except AssertionError as exc:
            figures.wrong_result(f"forged structure: {str(exc)[:200]}")
    figures.seconds = time.perf_counter() - started
    return figures


async def main(quick: bool) -> int:
    rows: list[Figures] = []
    scale = 1 if quick else 5  # edits and invalidations per chaos run

    def report(figures: Figures) -> None:
        rows.append(figures)
        print(f"  done: {figures.scenario} in {figures.seconds:.1f}s", file=sys.stderr, flush=True)

    report(
        await run_chaos(
            scratch(),
            ChaosParams(
                workspaces=4 if quick else 12,
                loaders=24 if quick else 64,
                loads_per_loader=60 if quick else 100,
                kills=150 if quick else 600,
                kill_gap=0.004,
                file_edits=80 * scale,
                row_edits=60 * scale,
                noise_invalidations=60 * scale,
            ),
        )
    )
    report(
        await run_chaos(
            scratch(),
            ChaosParams(
                kills=3,
                kill_gap=0.3,
                loaders=16 if quick else 48,
                loads_per_loader=60 if quick else 100,
                build_prompt_rate=0.3,
            ),
            harness=True,
        )
    )
    escalating = await run_chaos(
        scratch(),
        ChaosParams(kills=120, loaders=16, loads_per_loader=200, build_prompt_rate=0.3),
        harness=True,
    )
    escalating.scenario = "chaos (Harness, 120 kills)"
    report(escalating)
    lifecycle = await run_lifecycle(scratch(), 200 if quick else 1000)
    report(lifecycle)
    report(await run_db_faults(scratch(), 3 if quick else 20))
    report(await hostile_trees(60 if quick else 400, seed=1000))
    report(await anyio.to_thread.run_sync(forgery, 500 if quick else 5000, 10, 17))
    report(await run_hook_chains(300 if quick else 2000, seed=5))

    header = (
        f"{'scenario':<32} {'ops':>7} {'faults':>7} {'wrong':>6} {'hung':>5} "
        f"{'leaked tasks':>12} {'leaked fds':>10} {'seconds':>8}"
    )
    print()
    print(
        f"harness reliability figures ({'quick' if quick else 'full'} run, "
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs)"
    )
    print(header)
    print("-" * len(header))
    for f in rows:
        print(
            f"{f.scenario:<32} {f.operations:>7} {f.faults:>7} {f.wrong:>6} {f.hung:>5} "
            f"{f.leaked_tasks:>12} {f.leaked_fds:>10} {f.seconds:>8.1f}"
        )
    print()
    print(
        f"lifecycle memory: {lifecycle.memory_growth_bytes:+,} bytes traced over the second "
        f"half of {lifecycle.operations} start/stop cycles "
        f"({lifecycle.memory_per_cycle:+.1f} B/cycle)"
    )
    for f in rows:
        extra = [f"typed errors {f.typed_errors}"] if f.typed_errors else []
        if f.cancelled:
            extra.append(f"loads abandoned by their caller {f.cancelled}")
        if f.escalation:
            extra.append("the tree gave up: MaxRestartsExceeded (the configured restart intensity)")
        if extra:
            print(f"{f.scenario}: " + "; ".join(extra))
    bad = [f for f in rows if not f.clean]
    for f in bad:
        print(f"FAIL {f.summary()}")
    print("verdict:", "FAIL" if bad else "all bad columns are 0")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small, fast run")
    args = parser.parse_args()
    sys.exit(anyio.run(main, args.quick))
