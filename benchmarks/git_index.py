"""Reading a large git index: dulwich (chosen) against pygit2, same file, same run.

    python benchmarks/git_index.py            # 100,000 tracked files
    python benchmarks/git_index.py --quick    # 10,000

The index is built with ``git update-index --index-info`` (one blob, many paths) in a
temporary repository. Rows: import time of each library (in a fresh interpreter), the time to
get every tracked path (dulwich ``read_index``; pygit2 ``Index(path)`` then iterating it), and
``load_tracked`` (dulwich plus the directory set) cold and then warm (the cached result,
reused while the index file is unchanged). Figures come from a shared machine.

``--fresh``: a fresh-process ``harness sources ROOT --target PATH`` (a new interpreter per run)
on a repository whose index tracks 44,221 files (pulumi's count) written on disk, against the
same command on a copy of the same files without ``.git``; rounds interleaved, medians.
Target: at most 1.3x.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.workspace import _git_index as git_index


def build(root: Path, count: int) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=root, input=b"x\n", capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    lines = "".join(f"100644 {blob}\td{i % 100}/s{i % 7}/f{i}.txt\n" for i in range(count))
    subprocess.run(
        ["git", "update-index", "--add", "--index-info"], cwd=root, input=lines.encode(), check=True
    )
    return root / ".git" / "index"


def import_time(module: str) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    return statistics.median(runs)


def timed(call: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def fresh_sources(count: int = 44_221, repeat: int = 11) -> None:
    """The fresh-process row (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        build(repo, count)
        for i in range(count):
            path = repo / f"d{i % 100}" / f"s{i % 7}" / f"f{i}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"x\n")
        (repo / "AGENTS.md").write_text("# root rules\n")
        (repo / ".gitignore").write_text("*.log\nbuild/\n")
        (repo / "d1" / "AGENTS.md").write_text("# d1 rules\n")
        plain = Path(tmp) / "plain"
        shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
        rows = {"with .git (index)": repo, "without .git": plain}
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for round_number in range(repeat):
            order = list(rows)[round_number % 2 :] + list(rows)[: round_number % 2]
            for name in order:
                command = [sys.executable, "-m", "harness", "sources", str(rows[name])]
                start = time.perf_counter()
                subprocess.run(
                    [*command, "--target", "d1/s1/new.py"], env=env, check=True, capture_output=True
                )
                samples[name].append(time.perf_counter() - start)
        medians = {name: statistics.median(values) for name, values in samples.items()}
        print(f"fresh-process harness sources --target, {count} tracked files, median of {repeat}")
        for name, seconds in medians.items():
            print(f"{name:<40} {seconds * 1e3:9.1f} ms")
        ratio = medians["with .git (index)"] / medians["without .git"]
        print(f"with index / without .git = {ratio:.2f}  (target <= 1.3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--fresh", action="store_true", help="only the fresh-process row")
    args = parser.parse_args()
    if args.fresh:
        fresh_sources()
        return
    count = 10_000 if args.quick else 100_000
    import pygit2  # type: ignore[import-not-found]  # a peer, installed only to run this
    from dulwich.index import read_index

    with tempfile.TemporaryDirectory() as tmp:
        index = build(Path(tmp) / "repo", count)
        data = index.read_bytes()
        print(f"index: {count} entries, {len(data)} bytes")
        print(f"{'import dulwich.index':<40} {import_time('dulwich.index') * 1e3:9.1f} ms")
        print(f"{'import pygit2':<40} {import_time('pygit2') * 1e3:9.1f} ms")
        dul = timed(lambda: [e.name for e in read_index(io.BytesIO(data))])
        pyg = timed(lambda: [e.path for e in pygit2.Index(str(index))])
        print(f"{'dulwich read_index, every path':<40} {dul * 1e3:9.1f} ms")
        label = "pygit2 Index + iterate, every path"
        print(f"{label:<40} {pyg * 1e3:9.1f} ms  (dulwich/pygit2 {dul / pyg:.1f})")
        root = str(Path(tmp) / "repo")

        def cold_load() -> object:
            git_index._cache.clear()
            return git_index.load_tracked(root)

        cold = timed(cold_load)
        warm = timed(lambda: git_index.load_tracked(root), repeat=21)
        print(f"{'load_tracked, cold (dulwich + dirs)':<40} {cold * 1e3:9.1f} ms")
        print(f"{'load_tracked, warm (index unchanged)':<40} {warm * 1e3:9.3f} ms")


if __name__ == "__main__":
    main()
