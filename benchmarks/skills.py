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

The discover row is wall-clock time, so a shared machine moves it; the ``(CPU)`` rows under
it are the process's CPU time for the same calls (all threads: the event loop and the
discovery thread), and split discovery into its parts: ``scan`` lists the tree and reads
each ``SKILL.md`` (``SkillScan``: descriptors, ``O_NOFOLLOW``, bounds, ``deny_read``),
``parse and catalog`` turns the bytes read into skills (frontmatter, digests, resources,
collisions). Each part's ratio is against the same floor's CPU time, the rounds of all four
interleaved.

Usage: ``python benchmarks/skills.py [--quick]``. Timings are best-of-N rounds.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness import EXTENDED_LAYOUT, SkillCatalog, assemble
from harness.skills._catalog import _Collected, _resolve
from harness.skills._scan import SkillScan
from harness.skills._simple_yaml import simple_mapping
from harness.skills._units import skill_units

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


def _best(
    rounds: int, call: Callable[[], object], clock: Callable[[], float] = time.perf_counter
) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = clock()
        call()
        best = min(best, clock() - start)
    return best


def _cpu_breakdown(root: Path, rounds: int) -> None:
    """Discovery's CPU time against the floor's, whole and by part (see the docstring)."""
    real = os.path.realpath(root)

    def scan() -> SkillScan:
        with SkillScan(real, prune=(), max_bytes=65536) as scanned:
            scanned.scan(".claude/skills", order=0)
        return scanned

    found = scan().found

    def parse() -> object:
        collected = _Collected(strict=False)
        for one in found:
            collected.add(one, one.rel, "project", one.rel.count("/"))
        return _resolve(collected)

    calls: dict[str, Callable[[], object]] = {
        "floor": lambda: _floor(root),
        "discover 1000 skills (CPU)": lambda: anyio.run(SkillCatalog.discover, root),
        "  scan: list and read (CPU)": scan,
        "  parse and catalog (CPU)": parse,
    }
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds * 2):  # interleaved: a change of load reaches every row alike
        for name, call in calls.items():
            best[name] = min(best[name], _best(1, call, time.process_time))
    floor = best.pop("floor")
    for name, measured in best.items():
        _report(name, measured, floor, None)


def _report(name: str, measured: float, floor: float, target: float | None) -> None:
    ratio = measured / floor
    verdict = "" if target is None else (" ok" if ratio <= target else f" OVER {target}")
    print(f"{name:<34} {measured * 1000:8.1f} ms  floor {floor * 1000:7.1f} ms  "
          f"ratio {ratio:5.2f}{verdict}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    rounds = 2 if parser.parse_args().quick else 5
    with tempfile.TemporaryDirectory() as top:
        root = Path(top)
        _tree(root, 1000)
        floor = _best(rounds, lambda: _floor(root))
        catalog = anyio.run(SkillCatalog.discover, root)
        assert len(catalog.skills) == 1000, catalog.warnings[:3]
        discover = _best(rounds, lambda: anyio.run(SkillCatalog.discover, root))
        _report("discover 1000 skills", discover, floor, 2.5)
        _cpu_breakdown(root, rounds)
        texts = [
            _SKILL.format(name=f"skill-{i:04d}", index=i).split("---\n")[1] for i in range(1000)
        ]
        for label, loader in (
            ("libyaml base loader", getattr(yaml, "CBaseLoader", yaml.BaseLoader)),
            ("pure-Python base loader", yaml.BaseLoader),
            ("libyaml safe loader", getattr(yaml, "CSafeLoader", yaml.SafeLoader)),
        ):
            parse = _best(rounds, lambda loader=loader: [yaml.load(t, loader) for t in texts])
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
