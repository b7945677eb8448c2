"""Instruction-file discovery on a generated monorepo, against GNU find and fd (same run).

    python benchmarks/discovery.py            # 20,000+ directories (the issue's size)
    python benchmarks/discovery.py --quick    # a small tree, a few seconds
    python benchmarks/discovery.py --tree ~/src/biome   # an existing checkout, left unchanged

The tree (generated in a temporary directory, removed afterwards): a root ``AGENTS.md`` and
``.gitignore``; ``packages/`` with ``--dirs`` source directories spread over a few hundred
packages, a few hundred ``AGENTS.md``/``AGENTS.override.md`` files among them; a ``.git`` with
thousands of directories; a ``node_modules`` with thousands of packages (each with an
``AGENTS.md`` that must NOT be found); gitignored ``dist/``/``coverage/`` directories and
nested-``.gitignore``-ignored ``generated/`` directories, also holding instruction files that
must not be found.

Rows:

- ``harness cold load``: ``InstructionFiles.load`` with an empty cache (walk, reads, decode).
- ``harness warm load``: the same call answered by the cache (no file read; the workspace path
  is resolved).
- ``reload, 1 file``: one instruction file edited (on a ``--tree``, left as it is), then
  ``invalidate(that file)`` and ``load``: the incremental reload (its directory is listed and
  read again, the rest comes from the snapshot of the previous walk). Goal: at most 0.05x
  the cold load.
- ``reload, .gitignore``: the same for a nested ``.gitignore`` (its subtree is walked again).
- ``scandir(fd) floor``: ``benchmarks/listing.py``'s walk through directory descriptors (each
  directory opened relative to its parent with ``O_NOFOLLOW`` and listed with
  ``os.scandir(fd)``), pruning the directories the harness prunes, in-process like the load:
  no ignore rules, no reads. Goal: the cold load at most 1.2x this floor.
- The breakdown (generated tree): ``floor + reads`` (the floor also reading every file named
  like an instruction file, as the harness must), ``floor + snapshot`` (that floor also
  recording each directory's relative path and the subdirectories it walked, the least a
  snapshot for incremental reloads holds: ``listing.recorded``), ``walk, no reads`` (the
  harness's walk, its prunes, ignore and deny rules and snapshot record, with a visitor that
  reads nothing) and ``walk + reads`` (the cold walk the load runs in its worker thread).
  The differences between successive rows are printed: what the cold load spends over the
  floor, and on what. Then the floor and the cold walk once more on the main thread, split
  into user-space and kernel CPU time: the kernel's share is the same for both, so what the
  cold load adds over the floor is user-space (Python) time.
- ``GNU find``: ``find`` with the same prunes (``.git``, the vendored names, the gitignored
  names) listing the same files.
- ``GNU find, 6 prunes``: find with only the prunes this particular tree needs (fewer ``-name``
  tests per entry; no real tool knows them in advance), for a conservative comparison.
- ``GNU find, .git only`` (``--tree``): find pruning only ``.git``, as one would type it.
- ``fdfind``: fd honouring the same ``.gitignore`` files, with the vendored names excluded
  (shown when installed; Debian package ``fd-find``).
- ``harness scoped cold``: ``load(..., targets=[one file in the deepest source directory])``
  with an empty cache: the chain from the root to that directory only,
  checked to equal the full walk's files on that chain. Compared with the full cold load
  (goal: at least 100x faster) and with ``fdfind`` listing the whole tree.

Each figure is the median wall time of several runs after one warm-up run (the page cache is
warm for every tool alike: "cold" means the harness cache is empty). The file lists of every
tool are compared before timing; a mismatch aborts the benchmark. With ``--tree`` find cannot
know the tree's ``.gitignore`` files (it prunes ``.git`` and the vendored names only), so it
may list more files: the counts are printed instead, and the comparison is of the work.
"""

from __future__ import annotations

import argparse
import gc
import os
import posixpath
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from listing import by_descriptor, recorded
from monorepo import GITIGNORED, NESTED_IGNORED, deepest_target, generate

from harness.instruction_files import InstructionFiles, InstructionFilesSettings
from harness.instruction_files.discovery._incremental import walk as cold_walk
from harness.instruction_files.discovery.formats import formats_for
from harness.runtime import Supervisor
from harness.workspace import DirectoryWalk, Here, default_threads
from harness.workspace.deny import DenyRules


def find_command(
    root: Path,
    settings: InstructionFilesSettings,
    *,
    minimal: bool = False,
    pruned: tuple[str, ...] = (*GITIGNORED, NESTED_IGNORED),
    vendored: tuple[str, ...] | None = None,
) -> list[str]:
    """GNU find with the harness's prunes, listing the instruction files.

    ``minimal``: only the prunes this tree actually needs (a find that knows the tree in
    advance, as no real tool can), to show the margin does not come from find's -name count.
    """
    if vendored is None:
        vendored = ("node_modules",) if minimal else settings.vendored
    prunes: list[str] = []
    for name in (".git", *vendored, *pruned):
        prunes += ["-name", name, "-o"]
    prunes += ["-path", str(root / "tmp")]  # the generated tree's /tmp/ (absent elsewhere)
    names: list[str] = []
    for name in settings.names:
        names += ["-name", name, "-o"]
    return [
        "find", str(root), "(", *prunes, ")", "-prune", "-o",
        "-type", "f", "(", *names[:-1], ")", "-print",
    ]  # fmt: skip


def fd_command(root: Path, settings: InstructionFilesSettings) -> list[str] | None:
    fd = shutil.which("fdfind") or shutil.which("fd")
    if fd is None:
        return None
    excludes: list[str] = []
    for name in (".git", *settings.vendored):
        excludes += ["--exclude", name]
    pattern = "^(" + "|".join(name.replace(".", r"\.") for name in settings.names) + ")$"
    return [
        fd, "--hidden", "--no-ignore-parent", "--type", "f",
        *excludes, pattern, str(root),
    ]  # fmt: skip


def listed(command: list[str], root: Path) -> set[str]:
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return {Path(line).resolve().relative_to(root).as_posix() for line in out.split()}


def timed_run(command: list[str]) -> float:
    """Wall time of one run of ``command`` (measured in the thread that waits for it)."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


Edit = Callable[[], Path]  # makes one edit (or none, on a --tree) and returns the path


def edits(root: Path, paths: set[str], *, write: bool) -> dict[str, Edit]:
    """The reload rows: the deepest instruction file, and the deepest nested ``.gitignore``
    above an instruction file (rewritten with alternating content when ``write``)."""
    rows: dict[str, Edit] = {}
    deepest = max(paths, key=lambda rel: (rel.count("/"), rel), default=None)
    if deepest is not None:
        target = root / deepest
        original = target.read_bytes()
        flip = [False]

        def edit_file() -> Path:
            if write:
                flip[0] = not flip[0]
                target.write_bytes(original + (b"edited\n" if flip[0] else b""))
            return target

        rows["reload, 1 file"] = edit_file
    ignores = [
        rel
        for rel in (str(Path(p).parent / ".gitignore") for p in paths)
        if "/" in rel and (root / rel).is_file()
    ]
    for parent in (Path(p).parent for p in sorted(paths, key=lambda p: -p.count("/"))):
        if not ignores and parent != Path(".") and (root / parent / ".gitignore").is_file():
            ignores.append(str(parent / ".gitignore"))
    if ignores:
        gitignore = root / max(ignores, key=lambda rel: rel.count("/"))
        rows["reload, .gitignore"] = lambda: gitignore  # content unchanged: same work
    return rows


GC_PAUSES: list[float] = []  # the garbage collector's pauses during the row being timed
_gc_started = [0.0]


def _gc_pause(phase: str, info: dict[str, int]) -> None:
    if phase == "start":
        _gc_started[0] = time.perf_counter()
    else:
        GC_PAUSES.append(time.perf_counter() - _gc_started[0])


gc.callbacks.append(_gc_pause)


class _NoReads:
    """A visitor that reads nothing: the walk alone (listing, prunes, ignore and deny rules,
    the snapshot's record), for the breakdown."""

    def files(self, walk: DirectoryWalk, here: Here, named: dict[str, os.DirEntry[str]]) -> None:
        pass


def walk_only(root: str, settings: InstructionFilesSettings) -> None:
    """The cold load's walk with a visitor that reads nothing (see ``_NoReads``)."""
    candidates = frozenset().union(*(fmt.candidates() for fmt in formats_for(settings)))
    walk = DirectoryWalk(
        root,
        _NoReads(),
        prune=settings.vendored,
        special=candidates,
        deny=DenyRules(settings.deny_read),
        record=True,
    )
    walk.run(settings.walk_threads or default_threads())


BREAKDOWN = ("floor + reads", "floor + snapshot", "walk, no reads", "walk + reads")
"""The rows between the floor and the cold load: the floor reading the files the harness
finds; that floor also recording each directory's relative path and listing (the least a
snapshot for incremental reloads needs); the harness's walk reading nothing; that walk reading
them (the whole cold load less the worker-thread hop, the hints and the cache)."""


async def measure(
    root: Path,
    settings: InstructionFilesSettings,
    peers: dict[str, list[str]],
    repeat: int,
    warm_repeat: int,
    *,
    write: bool,
    target: str | None = None,
) -> tuple[dict[str, float], set[str]]:
    """Median seconds per row; rounds interleave the tools so machine noise hits all alike."""
    files = InstructionFiles(settings)
    cold_row, scoped, floor = "harness cold load", "harness scoped cold", "scandir(fd) floor"
    pruned = frozenset((".git", *settings.vendored, *(GITIGNORED if write else ())))
    pruned |= {NESTED_IGNORED} if write else set()
    async with Supervisor([files.child_spec()]):
        paths = {source.path for source in await files.load(root, agent="bench")}
        reloads = edits(root, paths, write=write)
        scoped_rows = [scoped] if target is not None else []
        if target is not None:
            found = await files.load(root, agent="bench", targets=[target])
            on_chain = [p for p in sorted(paths) if (posixpath.dirname(p) or ".") in found.chain]
            if sorted(source.path for source in found) != on_chain or len(found.chain) < 3:
                raise AssertionError(f"scoped load != the full walk on its chain: {found.chain}")
        breakdown = BREAKDOWN if write else ()  # the generated tree only
        rows = (cold_row, floor, *breakdown, *scoped_rows, *reloads, *peers)
        samples: dict[str, list[float]] = {name: [] for name in rows}
        collecting: dict[str, list[float]] = {
            name: [] for name in rows
        }  # seconds of garbage collection, per run
        for command in peers.values():  # warm-up: page cache and binaries
            await anyio.to_thread.run_sync(timed_run, command)
        for round_number in range(repeat):
            order = list(rows)
            shift = round_number % len(order)
            for name in order[shift:] + order[:shift]:
                GC_PAUSES.clear()
                if name in (cold_row, scoped):
                    files.invalidate()
                    start = time.perf_counter()
                    await files.load(
                        root, agent="bench", targets=[target] if name == scoped and target else ()
                    )
                elif name == floor:
                    start = time.perf_counter()
                    await anyio.to_thread.run_sync(by_descriptor, str(root), False, pruned)
                elif name == "floor + reads":
                    names = frozenset(settings.names)
                    start = time.perf_counter()
                    await anyio.to_thread.run_sync(by_descriptor, str(root), False, pruned, names)
                elif name == "floor + snapshot":
                    names = frozenset(settings.names)
                    start = time.perf_counter()
                    await anyio.to_thread.run_sync(recorded, str(root), pruned, names)
                elif name == "walk, no reads":
                    start = time.perf_counter()
                    await anyio.to_thread.run_sync(walk_only, str(root), settings)
                elif name == "walk + reads":
                    start = time.perf_counter()
                    await anyio.to_thread.run_sync(cold_walk, str(root), settings)
                elif name in reloads:
                    await files.load(root, agent="bench")  # a snapshot to reload from
                    path = reloads[name]()
                    start = time.perf_counter()
                    files.invalidate(path)
                    await files.load(root, agent="bench")
                else:
                    samples[name].append(await anyio.to_thread.run_sync(timed_run, peers[name]))
                    continue
                samples[name].append(time.perf_counter() - start)
                collecting[name].append(sum(GC_PAUSES))
        files.invalidate()
        if {source.path for source in await files.load(root, agent="bench")} != paths:
            raise AssertionError("the reloads changed which files are found")

        # Warm: the cache answers (the workspace path is still resolved).
        cached = await files.load(root, agent="bench")
        start = time.perf_counter()
        for _ in range(warm_repeat):
            if await files.load(root, agent="bench") is not cached:
                raise AssertionError("a warm load did not come from the cache")
        warm = (time.perf_counter() - start) / warm_repeat
    medians = {name: statistics.median(values) for name, values in samples.items()}
    for name in (cold_row, "walk + reads"):
        if collecting.get(name):
            medians[f"gc in {name}"] = statistics.median(collecting[name])
    medians["harness warm load"] = warm
    return medians, paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small tree and few repeats")
    parser.add_argument("--dirs", type=int, help="source directories (default 20000)")
    parser.add_argument("--repeat", type=int, help="timed runs per tool (median reported)")
    parser.add_argument("--keep", action="store_true", help="keep the generated tree")
    parser.add_argument(
        "--tree", type=Path, help="an existing checkout instead of the generated tree (unchanged)"
    )
    args = parser.parse_args(argv)
    repeat = args.repeat or (5 if args.quick else 11)
    settings = InstructionFilesSettings()
    if args.tree is not None:
        root = args.tree.resolve()
        made = sum(1 for _ in os.walk(root))
        print(f"existing tree {root}: {made} directories (os.walk, .git included)")
        peers = {
            "GNU find": find_command(root, settings, pruned=()),
            "GNU find, .git only": find_command(root, settings, pruned=(), vendored=()),
        }
        return report(root, settings, peers, repeat, write=False, exact=False)
    dirs = args.dirs or (2000 if args.quick else 20000)
    packages = max(10, dirs // 50)
    git_dirs = 600 if args.quick else 3000
    node_packages = 500 if args.quick else 3000

    tmp = Path(tempfile.mkdtemp(prefix="harness-bench-")).resolve()
    root = tmp / "monorepo"
    try:
        start = time.perf_counter()
        made = generate(
            root, dirs=dirs, packages=packages, git_dirs=git_dirs, node_packages=node_packages
        )
        print(
            f"generated {made} directories ({dirs} source dirs in {packages} packages, "
            f"{git_dirs} in .git, {node_packages} node_modules packages) "
            f"in {time.perf_counter() - start:.1f}s"
        )
        peers = {
            "GNU find": find_command(root, settings),
            "GNU find, 6 prunes": find_command(root, settings, minimal=True),
        }
        return report(
            root, settings, peers, repeat, write=True, exact=True, target=deepest_target(root)
        )
    finally:
        if args.keep:
            print(f"tree kept at {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def report(
    root: Path,
    settings: InstructionFilesSettings,
    peers: dict[str, list[str]],
    repeat: int,
    *,
    write: bool,
    exact: bool,
    target: str | None = None,
) -> int:
    """Measure, check the lists, print the table and the ratios."""
    fd = fd_command(root, settings)
    if fd is not None:
        peers["fdfind"] = fd
    run = partial(measure, write=write, target=target)
    medians, paths = anyio.run(run, root, settings, peers, repeat, 20000)
    for name, command in peers.items():
        other = listed(command, root)
        if other != paths:
            if exact or not paths <= other:
                print(f"MISMATCH harness vs {name}: {sorted(other ^ paths)[:10]}", file=sys.stderr)
                return 1
            print(f"{name} lists {len(other)} files (it does not read .gitignore files)")
    cold, warm, find_time = (
        medians["harness cold load"],
        medians["harness warm load"],
        medians["GNU find"],
    )
    fd_time = medians.get("fdfind")
    print(f"\n{len(paths)} instruction files found by the harness")
    print(f"median of {repeat} interleaved runs (warm: mean of 20,000 loads)\n")
    print(f"{'what':<20} {'time ms':>10} {'vs find':>9} {'vs fd':>9} {'vs cold':>9}")
    rows = [name for name in medians if name != "harness warm load" and "gc in" not in name]
    rows.insert(1, "harness warm load")
    for name in rows:
        seconds = medians[name]
        vs_fd = f"{seconds / fd_time:8.2f}x" if fd_time else "        -"
        print(
            f"{name:<20} {seconds * 1000:>10.3f} {seconds / find_time:>8.2f}x {vs_fd} "
            f"{seconds / cold:>8.3f}x"
        )
    print(
        f"\ncold / scandir(fd) floor = {cold / medians['scandir(fd) floor']:.2f}  (target <= 1.2)"
    )
    if "walk + reads" in medians:
        breakdown(medians)
        pruned = frozenset((".git", *settings.vendored, *GITIGNORED, NESTED_IGNORED))
        cpu_split(str(root), settings, pruned, repeat)
    print(f"cold / find = {cold / find_time:.2f}  (target <= 0.75)")
    if "GNU find, 6 prunes" in medians:
        minimal = medians["GNU find, 6 prunes"]
        print(f"cold / find with only the 6 prunes this tree needs = {cold / minimal:.2f}")
    if "GNU find, .git only" in medians:
        bare = medians["GNU find, .git only"]
        print(f"cold / find pruning only .git = {cold / bare:.2f}")
    if fd_time:
        print(f"cold / fd   = {cold / fd_time:.2f}  (target <= 1.5)")
    else:
        print("cold / fd   = -     (fdfind not installed: apt-get install fd-find)")
    print(f"cold / warm = {cold / warm:,.0f}  (target >= 1000; a hit reads no file and")
    print("              resolves the workspace path)")
    for name in ("reload, 1 file", "reload, .gitignore"):
        if name in medians:
            goal = "  (goal <= 0.05)" if name == "reload, 1 file" else ""
            print(f"{name} / cold = {medians[name] / cold:.3f}{goal}")
    if target is not None:
        scoped = medians["harness scoped cold"]
        print(f"\nscoped: one target, {target.count('/') + 1} directories deep ({target})")
        print(f"full cold / scoped cold = {cold / scoped:,.0f}  (target >= 100)")
        if fd_time:
            print(f"fdfind (whole tree) / scoped cold = {fd_time / scoped:,.0f}")
    return 0


def breakdown(medians: dict[str, float]) -> None:
    """What the cold load's time over the floor consists of, row by row."""
    floor, cold = medians["scandir(fd) floor"], medians["harness cold load"]
    reads, snapshot, walk, read = (medians[name] for name in BREAKDOWN)
    print(f"cold / (floor + reads) = {cold / reads:.2f}  (the floor reading the same files)")
    print(
        f"cold / (floor + snapshot) = {cold / snapshot:.2f}  (that floor also recording the "
        "paths and listings a snapshot holds)"
    )
    print(f"  the cold load over the floor: {(cold - floor) * 1000:.1f} ms, of which")
    parts = (
        ("walk, no reads - floor", walk - floor, "prunes, ignore and deny rules, paths, record"),
        ("walk + reads - walk", read - walk, "reading, decoding, pinning the files found"),
        ("  of it, the reads alone", reads - floor, "floor + reads - floor: the system calls"),
        ("cold load - walk + reads", cold - read, "worker thread, hints, cache, snapshot"),
        ("floor + snapshot - reads", snapshot - reads, "relative paths and listings alone"),
    )
    for label, seconds, what in parts:
        print(f"    {label:<26} {seconds * 1000:8.1f} ms  ({what})")
    for name in ("harness cold load", "walk + reads"):
        pause = medians.get(f"gc in {name}", 0.0)
        print(f"  garbage collection in {name}: {pause * 1000:.1f} ms (median per run)")


def cpu_split(
    root: str, settings: InstructionFilesSettings, pruned: frozenset[str], n: int
) -> None:
    """The floor and the cold walk on this thread, split into user-space and kernel CPU
    time (``getrusage``): the kernel's share (opens, listings, closes) is the same for both,
    so the cold load's margin over the floor is the user-space time the walk adds."""
    who = getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF)
    rows: dict[str, Callable[[], object]] = {
        "floor": partial(by_descriptor, root, False, pruned),
        "cold walk": partial(cold_walk, root, settings),
    }
    split: dict[str, list[tuple[float, float, float]]] = {name: [] for name in rows}
    for _ in range(n):
        for name, run in rows.items():
            before, start = resource.getrusage(who), time.perf_counter()
            run()
            wall, after = time.perf_counter() - start, resource.getrusage(who)
            split[name].append(
                (after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, wall)
            )
    print("  CPU time on one thread (median ms):   user   kernel     wall")
    for name, values in split.items():
        user, kernel, wall = (statistics.median(v[i] for v in values) * 1000 for i in range(3))
        print(f"    {name:<33} {user:6.1f} {kernel:8.1f} {wall:8.1f}")


if __name__ == "__main__":
    raise SystemExit(main())
