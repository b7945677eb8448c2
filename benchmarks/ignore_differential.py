"""The large differential run: random ignore cases against the real git.

    python benchmarks/ignore_differential.py            # 130 x 40 cases at each level: 10,400
    python benchmarks/ignore_differential.py --quick    # 10 batches (400 cases)
    python benchmarks/ignore_differential.py --seed 7 --batches 500

Each batch is a git repository of 40 cases (``tests/workspace/ignore_cases.py``); every path
is compared with ``git check-ignore``, and in as many more repositories the instruction files
``discover`` loads are compared with those git's view allows. Prints the counts and each
divergence (must be 0), and, as the peer, how many paths the previous pathspec matcher
(read from git history, see ``benchmarks/ignore.py``) decides differently on the same
batches.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import types
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.ignore import old_source
from tests.workspace.ignore_cases import GIT, all_paths, compare_batch, compare_load, git_view

CASES = 40


def old_divergences(root: Path) -> int | None:
    """Paths on which the previous matcher (pathspec) disagrees with git, or None."""
    source = old_source()
    if source is None:
        return None
    warnings.filterwarnings("ignore", category=FutureWarning)  # pathspec's "nested set"
    module = sys.modules["old_ignore"] = types.ModuleType("old_ignore")
    exec(compile(source, "old_ignore.py", "exec"), module.__dict__)
    IgnoreChain, IgnoreFile = module.IgnoreChain, module.IgnoreFile
    paths = all_paths(root)
    theirs = git_view(root, paths)
    ours: dict[str, bool] = {}
    stack: list[tuple[Path, str, Any, bool]] = [(root, "", None, False)]
    while stack:
        directory, rel, chain, hidden = stack.pop()
        gitignore = directory / ".gitignore"
        if not hidden and gitignore.is_file() and not gitignore.is_symlink():
            parsed, _ = IgnoreFile.parse(rel, gitignore.read_bytes())
            chain = IgnoreChain((parsed,)) if chain is None else chain.extended(parsed)
        for entry in sorted(directory.iterdir()):
            path = f"{rel}/{entry.name}" if rel else entry.name
            if path in (".git", ".no-config"):
                continue
            is_dir = entry.is_dir() and not entry.is_symlink()
            ignored = hidden or (chain is not None and chain.ignored(path, entry.name, is_dir))
            ours[path] = ignored
            if is_dir:
                stack.append((entry, path, chain, ignored))
    return sum(theirs[path] != ours.get(path) for path in paths)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--batches", type=int, default=None)
    args = parser.parse_args()
    if GIT is None:
        raise SystemExit("git is not installed")
    batches = args.batches or (10 if args.quick else 130)
    compared = 0
    divergences: list[str] = []
    old: int | None = 0
    loaded = 0  # instruction files git shows, in the load-level batches
    old_batches = min(batches, 20)  # the old matcher can take seconds on a hostile batch
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(batches):
            rng = random.Random(args.seed * 100_003 + index)
            count, found = compare_batch(rng, Path(tmp) / f"batch{index}", CASES)
            compared += count
            divergences.extend(found)
            rng = random.Random(args.seed * 100_003 + index + 50_000_000)
            expected, found = compare_load(rng, Path(tmp) / f"load{index}", CASES)
            loaded += expected
            divergences.extend(found)
            if old is not None and index < old_batches:
                got = old_divergences(Path(tmp) / f"batch{index}")
                old = None if got is None else old + got
    elapsed = time.perf_counter() - start
    print(f"path level: {batches * CASES} cases in {batches} repositories, {compared} paths")
    print(f"load level: {batches * CASES} cases in {batches} more, {loaded} instruction files")
    print(f"divergences: {len(divergences)} ({elapsed:.1f} s)")
    if old is not None:
        print(
            f"peer: the previous pathspec matcher diverged on {old} paths of the first "
            f"{old_batches} repositories (tracked files and info/exclude included)"
        )
    for line in divergences[:50]:
        print("  " + line)
    if divergences:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
