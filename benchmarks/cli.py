"""Benchmark: wall time of the README's debug command vs. importing its dependencies.

The peer is ``python -c "import pydantic, anyio, aiosqlite"``: the floor any command built
on these libraries pays. The target is a median no more than 3x that floor, measured in
the same run, interleaved so both see the same machine load, both with compiled
files cached (see ``bytecode_env``). The debug command is read from
the README's Quick start (so the benchmark measures what users run); a built-in copy is the
fallback. Usage: ``python benchmarks/cli.py [--quick] [--runs N]``. Always exits 0.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RATIO = 3.0
FALLBACK = (
    "python -m harness debug examples/acme --agent reviewer --project-id acme "
    "--db examples/acme.db --rules examples/acme/business-rules.txt "
    "--task-state examples/acme/task-state.jsonl"
)


def readme_command() -> list[str]:
    """The ``python -m harness debug ...`` part of the README's one-line quick start."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = FALLBACK
    for line in text.splitlines():
        start = line.find("python -m harness debug")
        if start != -1:
            found = line[start:].split("&&")[0].strip()
            break
    argv = shlex.split(found)
    return [sys.executable, *argv[1:]]


def bytecode_env(cache: str) -> dict[str, str]:
    """The environment for both commands: compiled files cached, as after a pip install.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on some CI machines) the checkout's modules would
    be compiled from source on every run while the peer's site-packages have their ``.pyc``
    files, which measures the compiler, not the command. Both commands get the same cache
    directory, outside the checkout.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True
    )
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 runs each instead of 21")
    parser.add_argument("--runs", type=int, help="runs per command")
    args = parser.parse_args()
    runs = args.runs or (5 if args.quick else 21)

    debug = readme_command()
    peer = [sys.executable, "-c", "import pydantic, anyio, aiosqlite"]
    times: dict[str, list[float]] = {"debug": [], "peer": []}
    with tempfile.TemporaryDirectory(prefix="harness-bench-pyc-") as cache:
        env = bytecode_env(cache)
        timed(debug, env), timed(peer, env)  # warm the file cache and the .pyc files
        for _ in range(runs):
            times["debug"].append(timed(debug, env))
            times["peer"].append(timed(peer, env))

    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["debug"] / medians["peer"]
    print(f"debug command: {shlex.join(['python', *debug[1:]])}")
    print()
    print(f"{'command':<46} {'runs':>5} {'median ms':>10} {'min ms':>8}")
    print("-" * 72)
    labels = {
        "debug": "python -m harness debug examples/acme ...",
        "peer": 'python -c "import pydantic, anyio, aiosqlite"',
    }
    for name, values in times.items():
        print(
            f"{labels[name]:<46} {len(values):>5} {medians[name] * 1000:>10.1f} "
            f"{min(values) * 1000:>8.1f}"
        )
    print("-" * 72)
    verdict = "within target" if ratio <= TARGET_RATIO else "OVER TARGET"
    print(f"ratio debug/peer: {ratio:.2f}x (target <= {TARGET_RATIO:.0f}x: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
