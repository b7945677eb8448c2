"""The cost of listing through a directory descriptor, against the ways around it (same run).

    python benchmarks/listing.py            # a generated tree of 6,400 small directories
    python benchmarks/listing.py --quick    # 1,200 directories
    python benchmarks/listing.py --tree ~/src/biome

Each row walks the same tree the way ``harness.workspace._walk`` does (every directory opened
relative to its parent's descriptor with ``O_DIRECTORY | O_NOFOLLOW``), listing it:

- ``scandir(fd)``: what the walk does. CPython duplicates the descriptor, ``fdopendir``s it and
  rewinds it when done (``fcntl`` x3, ``fstat``, ``lseek``, a second ``close``).
- ``scandir(/proc/self/fd/N)``: the open directory named through procfs (race-safe too: the
  magic link names the open file, not a path), one ``openat`` instead of the dup and rewind.
- ``scandir(path)``: the old path walk (NOT race-safe: the floor the descriptor walk pays for).

Medians of interleaved rounds, in microseconds per directory, and the ratio to ``scandir(fd)``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def generate(root: Path, width: int) -> None:
    for a in range(width):
        for b in range(20):
            for c in range(15):
                folder = root / f"p{a}" / f"m{b}" / f"x{c}"
                folder.mkdir(parents=True, exist_ok=True)
                for name in ("index.ts", "util.ts", "README.md"):
                    (folder / name).touch()


def by_descriptor(
    root: str,
    proc: bool,
    prune: frozenset[str] = frozenset({".git"}),
    read: frozenset[str] = frozenset(),
) -> int:
    """Walk ``root`` through descriptors, never entering a ``prune`` name; directories
    listed. (``benchmarks/discovery.py`` times it as the floor of a cold load.) ``read``:
    names of files to read too (opened relative to their directory, read whole, closed), for
    the floor of a load that reads what it finds."""
    stack: list[tuple[int | None, str]] = [(None, root)]
    held: list[int] = []
    count = 0
    try:
        while stack:
            parent, name = stack.pop()
            fd = os.open(name, FLAGS) if parent is None else os.open(name, FLAGS, dir_fd=parent)
            count += 1
            with os.scandir(f"/proc/self/fd/{fd}" if proc else fd) as entries:
                if read:
                    subdirs = []
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            subdirs.append(entry.name)
                        elif entry.name in read:
                            _read(entry.name, fd)
                else:
                    subdirs = [e.name for e in entries if e.is_dir(follow_symlinks=False)]
            subdirs = [name for name in subdirs if name not in prune]
            if subdirs:
                held.append(fd)
                stack.extend((fd, name) for name in subdirs)
            else:
                os.close(fd)
    finally:
        for fd in held:
            os.close(fd)
    return count


def recorded(root: str, prune: frozenset[str], read: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """``by_descriptor`` reading ``read`` and recording each directory's relative path and the
    subdirectories walked: the least bookkeeping a walk must do to be reloaded incrementally
    (a snapshot), for the floor of a load that keeps one (``benchmarks/discovery.py``)."""
    listed: dict[str, tuple[str, ...]] = {}
    stack: list[tuple[int | None, str, str]] = [(None, root, "")]
    held: list[int] = []
    try:
        while stack:
            parent, name, rel = stack.pop()
            fd = os.open(name, FLAGS) if parent is None else os.open(name, FLAGS, dir_fd=parent)
            subdirs = []
            with os.scandir(fd) as entries:  # by_descriptor's loop, so the rows differ by
                for entry in entries:  # the record alone
                    if entry.is_dir(follow_symlinks=False):
                        subdirs.append(entry.name)
                    elif entry.name in read:
                        _read(entry.name, fd)
            subdirs = [name for name in subdirs if name not in prune]
            listed[rel] = tuple(subdirs)
            if subdirs:
                held.append(fd)
                prefix = rel + "/" if rel else ""
                stack.extend((fd, name, prefix + name) for name in subdirs)
            else:
                os.close(fd)
    finally:
        for fd in held:
            os.close(fd)
    return listed


def _read(name: str, dir_fd: int) -> None:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        os.fstat(fd)
        while os.read(fd, 65536):
            pass
    finally:
        os.close(fd)


def by_path(root: str) -> int:
    stack = [root]
    count = 0
    while stack:
        path = stack.pop()
        count += 1
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
                    stack.append(entry.path)
    return count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tree", type=Path, help="an existing tree (read only)")
    parser.add_argument("--repeat", type=int)
    args = parser.parse_args(argv)
    repeat = args.repeat or (5 if args.quick else 21)
    tmp = None
    if args.tree is not None:
        root = str(args.tree.resolve())
    else:
        tmp = Path(tempfile.mkdtemp(prefix="harness-listing-"))
        generate(tmp / "tree", 4 if args.quick else 21)
        root = str(tmp / "tree")
    rows: dict[str, Callable[[], int]] = {
        "scandir(fd)": lambda: by_descriptor(root, False),
        "scandir(/proc/self/fd/N)": lambda: by_descriptor(root, True),
        "scandir(path)": lambda: by_path(root),
    }
    samples: dict[str, list[float]] = {name: [] for name in rows}
    try:
        count = by_path(root)
        for round_number in range(repeat):
            order = list(rows)
            order = order[round_number % 3 :] + order[: round_number % 3]
            for name in order:
                start = time.perf_counter()
                rows[name]()
                samples[name].append(time.perf_counter() - start)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    base = statistics.median(samples["scandir(fd)"])
    print(f"{count} directories, median of {repeat} interleaved rounds\n")
    print(f"{'listing':<26} {'us/dir':>8} {'vs fd':>7}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<26} {median / count * 1e6:>8.2f} {median / base:>6.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
