"""Ignore-pattern matching time against name length: the new matcher and the old one.

    python benchmarks/ignore.py            # names up to 3,200 bytes
    python benchmarks/ignore.py --quick    # up to 400 bytes

Rows: the worst patterns found (``*a*a*a*a*a*a*a*b``, ``**/**/**/**/**/x``,
``a*a*a*a*a*[!a]``, ...) against names and paths of growing length made to make a
backtracking matcher try every split. Each row gives the median time of one match by
``harness.workspace._ignore`` (``IgnoreFile.check`` on a fresh file, so no memo helps) and the
same decision by the previous matcher (pathspec's regular expressions on Python's ``re``:
``harness/instruction_files/ignore.py`` as of commit ``OLD_COMMIT``, read from git history
with ``git show``; pathspec must be installed), run in a child process with a time limit
because it holds the GIL. The ``x`` column is how much longer the new matcher takes
when the name doubles: at most about 2 for a linear matcher, near 1 while the fixed cost of a
call dominates (RE2's automaton scans a few hundred bytes in well under a microsecond); an
exponential one multiplies. ``old/new`` is the peer ratio.

A second table compares the engines considered for the translated pattern on the same
inputs: RE2 (chosen for every pattern that can backtrack), Python's ``re`` (used only where
backtracking is bounded: one star and a short pattern) and a pure-Python set-of-positions
simulation (linear, but interpreted byte by byte). Figures come from a shared machine;
compare rows of one run only.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.workspace._ignore import IgnoreFile

# (pattern line, how to build a hostile path of length n)
ROWS: tuple[tuple[str, str], ...] = (
    ("*a*a*a*a*a*a*a*b", "'a' * n"),
    ("*a*a*a*a*a*[!a]", "'a' * n"),
    ("a*a*a*a*a*[!a]", "'a' * n"),
    ("**/**/**/**/**/x", "'/'.join(['a'] * (n // 2))"),
    ("a/**/a/**/a/**/a/**/b", "'/'.join(['a'] * (n // 2))"),
    ("*?*?*?*?*?*?*?*?b", "'a' * n"),
    ("[[:alpha:]]*[[:alpha:]]*[[:alpha:]]*[[:alpha:]]*1", "'a' * n"),
)

OLD_COMMIT = "bf199c3"  # the last commit with the pathspec matcher
OLD_CHILD = """
import sys, time, types
module = sys.modules["old_ignore"] = types.ModuleType("old_ignore")
exec(compile({source!r}, "old_ignore.py", "exec"), module.__dict__)
IgnoreFile = module.IgnoreFile
rules, _ = IgnoreFile.parse("", {line!r}.encode())
path = {path!r}
name = path.rsplit("/", 1)[-1]
start = time.perf_counter()
rules.check(path, name, False)
print(time.perf_counter() - start)
"""


def new_time(line: str, path: str, repeat: int) -> float:
    name = path.rsplit("/", 1)[-1]
    times = []
    for _ in range(repeat):
        rules, _ = IgnoreFile.parse("", line.encode())
        start = time.perf_counter()
        rules.check(path, name, False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def old_source() -> str | None:
    """The previous matcher's source, from git history (None outside a git checkout)."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:harness/instruction_files/ignore.py"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout if done.returncode == 0 else None


def old_time(line: str, path: str, limit: float) -> float | None:
    """Seconds the old matcher took, or None if it did not finish within ``limit``."""
    source = old_source()
    if source is None:
        return None
    code = OLD_CHILD.format(source=source, line=line, path=path)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip()) if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    lengths = (25, 50, 100, 200, 400) if args.quick else (25, 50, 100, 200, 400, 800, 1600, 3200)
    limit = 2.0 if args.quick else 10.0
    print(f"{'pattern':<50} {'len':>5} {'new us':>9} {'x':>5} {'old us':>12} {'old/new':>9}")
    worst = 0.0
    for line, recipe in ROWS:
        previous: float | None = None
        old_gave_up = False
        for n in lengths:
            path = eval(recipe, {"n": n})  # a fixed recipe of this file
            new = new_time(line, path, 5 if n > 800 else 21)
            if n == 200:
                worst = max(worst, new)
            growth = f"{new / previous:5.1f}" if previous else "     "
            previous = new
            old = None if old_gave_up else old_time(line, path, limit)
            if old is None:
                old_gave_up = True
                shown, ratio = f">{limit:.0f} s", "-"
            else:
                shown, ratio = f"{old * 1e6:12.1f}", f"{old / new:9.1f}"
            print(f"{line:<50} {n:>5} {new * 1e6:9.1f} {growth} {shown:>12} {ratio:>9}")
    print(f"worst new-matcher time at 200 bytes: {worst * 1e6:.1f} us (bound: well under 1 ms)")
    engines(limit)


def _positions(tokens: Sequence[tuple[int, object]], text: bytes) -> bool:
    """A set-of-positions simulation of wildmatch tokens (the pure-Python alternative)."""
    from harness.workspace import _wildmatch as wm

    def close(states: set[int]) -> set[int]:
        todo = list(states)
        while todo:
            state = todo.pop()
            starred = state < len(tokens) and tokens[state][0] in (wm._STAR, wm._ANYSTR)
            if starred and state + 1 not in states:
                states.add(state + 1)
                todo.append(state + 1)
        return states

    states = close({0})
    for byte in text:
        following: set[int] = set()
        for state in states:
            if state >= len(tokens):
                continue
            kind, value = tokens[state]
            if (kind == wm._LIT and value == bytes((byte,))) or (
                kind == wm._SET and byte in value  # type: ignore[operator]
            ):
                following.add(state + 1)
            elif kind == wm._ANYSTR or (kind == wm._STAR and byte != 0x2F):
                following.add(state)
            elif kind == wm._DIRS:
                raise NotImplementedError("the comparison rows hold no '**/'")
        states = close(following)
    return len(tokens) in states


def engines(limit: float) -> None:
    import re

    import re2  # type: ignore[import-untyped]  # no stubs or py.typed

    from harness.workspace import _wildmatch as wm

    print()
    print(f"{'engine (same translated pattern)':<34} {'pattern':<20} {'len':>5} {'us/match':>10}")
    for pattern, text in ((b"*.log", b"build-output.log"), (b"*a*a*a*a*a*a*a*b", b"a" * 200)):
        tokens = wm._tokens(pattern, True)
        regex = wm._regex(tokens)
        re2_full = re2.compile(regex, wm._RE2_OPTIONS).fullmatch
        py_full = re.compile(regex, re.DOTALL).fullmatch
        candidates = [
            ("RE2 (google-re2)", functools.partial(re2_full, text)),
            ("pure-Python positions", functools.partial(_positions, tokens, text)),
        ]
        if len(text) < 50:
            candidates.append(("Python re (backtracking)", functools.partial(py_full, text)))
        for label, call in candidates:
            runs = 2000 if "Python" not in label or len(text) < 50 else 50
            start = time.perf_counter()
            for _ in range(runs):
                call()
            each = (time.perf_counter() - start) / runs
            print(f"{label:<34} {pattern.decode():<20} {len(text):>5} {each * 1e6:10.2f}")
    print("Python re on the hostile row: see the old matcher column above (it never finished)")


if __name__ == "__main__":
    main()
