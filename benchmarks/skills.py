"""Benchmark: skills discovery and the skills layer, each against its floor in the same run.

Cases:

* ``discover 1000 skills``: ``SkillCatalog.discover`` of a workspace with 1,000 skills (one
  ``SKILL.md`` and one resource each) under ``.claude/skills``, against a bare ``os.scandir``
  walk of the same tree that reads every ``SKILL.md``. Target ratio <= 2.5. (The tree has
  2,001 directories, one past the bound of 2,000 per skills directory: discovery lists the
  last skill's ``scripts`` less than the floor does, and warns.)
* ``parse 1000 frontmatters``: the YAML alone, by loader (libyaml's base loader, the pure
  Python one, libyaml's safe loader, and the ``simple_yaml`` fast path that reads the common
  case with the same result), against the same floor: how the parser was chosen.
* ``render 1000-entry layer``: ``skill_units`` of the catalog plus ``assemble`` of the
  ``skills`` layer, against counting and joining the same entry strings with the assembler
  benchmark's floor (``bare_lower_bound``: encode each once, prefix-sum, slice, join).
  Target ratio <= 3.0. A catalog computes its entry units once (a session renders one catalog
  into many builds), so the row is the cost of a build after the first; ``(first render)``
  is a fresh catalog's, unit construction included, and ``assemble alone`` is the
  assembler's share.

The discover rows are interleaved: after one warm-up round of each call (the first walk of a
freshly written tree costs 15-80% more than the next ones: that, measured as a best-of-N block
right after the tree was made while discovery's block came later, is what made the floor
swing from run to run), each round runs the floor, discovery and the breakdown calls once, a
full collection before each call, 15 rounds (5 with ``--quick``). A row prints the median
and best of each, the ratio of medians (the verdict's) and ``paired``, the median of each
round's own ratio (less moved by load on a shared machine).

``discover 1000 skills`` is timed inside one running event loop (a blocking portal's),
awaited each round, as an engine calls it from its own loop; ``each in its own anyio.run``
is the same call starting an event loop each round, and ``anyio.run + worker thread alone``
is that fixed cost (a loop, and ``run_stoppable``'s worker thread doing nothing). The
``(CPU)`` rows are the process's CPU time (all threads) of the same rounds: ``scan`` lists
the tree and reads each ``SKILL.md`` (``SkillScan`` with the default ``deny_read``:
descriptors, ``O_NOFOLLOW``, bounds), ``parse and catalog`` turns the bytes read into skills
(frontmatter, digests, resources, collisions), each against the floor's CPU time.

Usage: ``python benchmarks/skills.py [--quick]``. The parse and render rows are best-of-N.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import yaml
from anyio.from_thread import start_blocking_portal

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import EXTENDED_LAYOUT, SkillCatalog, assemble
from harness.skills._catalog import _Collected, _resolve
from harness.skills._scan import SkillScan
from harness.skills._simple_yaml import simple_mapping
from harness.skills._units import skill_units
from harness.workspace._stoppable import run_stoppable
from harness.workspace.deny import DEFAULT_DENY_READ, DenyRules

sys.path.insert(0, str(Path(__file__).resolve().parent))
from assemble import bare_lower_bound  # the assembler benchmark's floor

_SKILL = (
    "---\nname: {name}\ndescription: Does task {index} for the repository; use it when the "
    "user asks for task {index} or mentions its files.\nlicense: Apache-2.0\nmetadata:\n"
    '  author: bench\n  version: "1.0"\n---\n# Task {index}\n\n1. Read the files.\n'
    "2. Do the task.\n"
)


def _tree(root: Path, count: int) -> None:
    for index in range(count):
        skill = root / ".claude" / "skills" / f"skill-{index:04d}"
        (skill / "scripts").mkdir(parents=True)
        (skill / "SKILL.md").write_text(_SKILL.format(name=f"skill-{index:04d}", index=index))
        (skill / "scripts" / "run.py").write_text("print('run')\n")


def _floor(root: Path) -> int:
    total = 0
    stack = [str(root / ".claude" / "skills")]
    while stack:
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                elif entry.name == "SKILL.md":
                    with open(entry.path, "rb") as file:
                        total += len(file.read())
    return total


def _load_all(texts: list[str], loader: Any) -> list[object]:
    return [yaml.load(text, loader) for text in texts]


def _best(
    rounds: int, call: Callable[[], object], clock: Callable[[], float] = time.perf_counter
) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = clock()
        call()
        best = min(best, clock() - start)
    return best


def _report(name: str, measured: float, floor: float, target: float | None) -> None:
    ratio = measured / floor
    verdict = "" if target is None else (" ok" if ratio <= target else f" OVER {target}")
    print(f"{name:<38} {measured * 1000:7.1f} ms  floor {floor * 1000:6.1f} ms  "
          f"ratio {ratio:5.2f}{verdict}")  # fmt: skip


Sample = tuple[float, float]  # (wall, CPU) seconds of one round


def _timed(call: Callable[[], object]) -> Sample:
    start, start_cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - start, time.process_time() - start_cpu


async def _timed_async(call: Callable[[], Awaitable[object]]) -> Sample:
    start, start_cpu = time.perf_counter(), time.process_time()
    await call()
    return time.perf_counter() - start, time.process_time() - start_cpu


def _interleaved(calls: dict[str, Callable[[], Sample]], rounds: int) -> dict[str, list[Sample]]:
    """``rounds`` samples of each call, the calls alternating round by round after one
    warm-up round of each: a change of load, of the page and dentry caches or of the clock
    speed reaches every call alike. A full collection before each round, so that one call's
    garbage is not collected in another's time."""
    samples: dict[str, list[Sample]] = {name: [] for name in calls}
    for warm_up in calls.values():
        warm_up()
    for _ in range(rounds):
        for name, call in calls.items():
            gc.collect()
            samples[name].append(call())
    return samples


def _row(name: str, samples: list[float], floor: list[float], target: float | None) -> float:
    """Print the median and best of ``samples`` against the floor's, the ratio of medians
    (the verdict's) and, as ``paired``, the median of each round's own ratio (the round's
    call over the same round's floor, a few milliseconds apart: a burst of load lasting
    seconds reaches both, so it moves less on a shared machine)."""
    median, floor_median = statistics.median(samples), statistics.median(floor)
    ratio = median / floor_median
    paired = statistics.median(one / base for one, base in zip(samples, floor, strict=True))
    verdict = "" if target is None else (" ok" if ratio <= target else f" OVER {target}")
    print(f"{name:<36} {median * 1000:6.1f} ms (best {min(samples) * 1000:6.1f})  "
          f"floor {floor_median * 1000:5.1f} (best {min(floor) * 1000:5.1f})  "
          f"ratio {ratio:5.2f}{verdict} paired {paired:5.2f}")  # fmt: skip
    return ratio


def _discover_rows(root: Path, rounds: int) -> None:
    """The discover rows (see the module docstring): wall, then CPU by part, all interleaved."""
    real = os.path.realpath(root)
    deny = DenyRules(DEFAULT_DENY_READ)  # as discovery scans: the default deny_read

    def scan() -> SkillScan:
        with SkillScan(real, prune=(), max_bytes=65536, deny=deny) as scanned:
            scanned.scan(".claude/skills", order=0, keep=False)
        return scanned

    found = scan().found

    def parse() -> object:
        collected = _Collected(strict=False)
        for one in found:
            collected.add(one, one.rel, "project", one.rel.count("/"))
        return _resolve(collected)

    with start_blocking_portal() as loop:  # the engine's running event loop

        def in_loop() -> Sample:
            return loop.call(_timed_async, lambda: SkillCatalog.discover(root))

        calls: dict[str, Callable[[], Sample]] = {
            "floor": lambda: _timed(lambda: _floor(root)),
            "discover": in_loop,
            "anyio.run(discover)": lambda: _timed(lambda: anyio.run(SkillCatalog.discover, root)),
            "fixed": lambda: _timed(lambda: anyio.run(run_stoppable, lambda stop: None)),
            "scan": lambda: _timed(scan),
            "parse": lambda: _timed(parse),
        }
        samples = _interleaved(calls, rounds)
    wall = {name: [sample[0] for sample in got] for name, got in samples.items()}
    cpu = {name: [sample[1] for sample in got] for name, got in samples.items()}
    _row("discover 1000 skills", wall["discover"], wall["floor"], 2.5)
    _row("  each in its own anyio.run", wall["anyio.run(discover)"], wall["floor"], None)
    _row("  anyio.run + worker thread alone", wall["fixed"], wall["floor"], None)
    _row("discover 1000 skills (CPU)", cpu["discover"], cpu["floor"], None)
    _row("  scan: list and read (CPU)", cpu["scan"], cpu["floor"], None)
    _row("  parse and catalog (CPU)", cpu["parse"], cpu["floor"], None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args().quick
    rounds = 2 if quick else 5
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        _tree(root, 1000)
        catalog = anyio.run(SkillCatalog.discover, root)
        assert len(catalog.skills) == 1000, catalog.warnings[:3]
        _discover_rows(root, 5 if quick else 15)
        floor = _best(rounds, lambda: _floor(root))
        texts = [
            _SKILL.format(name=f"skill-{i:04d}", index=i).split("---\n")[1] for i in range(1000)
        ]
        for label, loader in (
            ("libyaml base loader", getattr(yaml, "CBaseLoader", yaml.BaseLoader)),
            ("pure-Python base loader", yaml.BaseLoader),
            ("libyaml safe loader", getattr(yaml, "CSafeLoader", yaml.SafeLoader)),
        ):
            parse = _best(rounds, functools.partial(_load_all, texts, loader))
            _report(f"parse 1000 ({label})", parse, floor, None)
        fast = _best(rounds, lambda: [simple_mapping(t) for t in texts])
        _report("parse 1000 (the simple_yaml fast path)", fast, floor, None)
        _render(catalog, rounds)


def _render(catalog: SkillCatalog, rounds: int) -> None:
    units = skill_units(catalog)
    strings = [unit.text for unit in units]
    budget = 10**6
    join = _best(rounds * 4, lambda: bare_lower_bound(strings, budget))
    budgets = {"skills": budget, "identity": 0}

    def render(of: SkillCatalog) -> object:
        return assemble({"skills": skill_units(of)}, layout=EXTENDED_LAYOUT, budgets=budgets)

    _report("render 1000-entry layer", _best(rounds * 4, lambda: render(catalog)), join, 3.0)
    fresh = _best(rounds * 4, lambda: render(SkillCatalog(catalog.skills, catalog.warnings)))
    _report("render 1000-entry layer (first render)", fresh, join, None)
    alone = _best(
        rounds * 4, lambda: assemble({"skills": units}, layout=EXTENDED_LAYOUT, budgets=budgets)
    )
    _report("assemble alone (1000 entry units)", alone, join, None)


if __name__ == "__main__":
    main()
