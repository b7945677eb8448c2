"""All seven rule formats against the agents-only walk, and ``rules_for`` against the full walk.

    python benchmarks/formats.py            # the discovery benchmark's tree (29,000 directories)
    python benchmarks/formats.py --quick    # a small tree

Same generated tree as ``benchmarks/discovery.py`` (``generate``), same run, rounds
interleaved; median wall time of each row (the harness cache emptied before each load):

- ``agents cold``: ``InstructionFiles.load`` with ``formats = ["agents"]``.
- ``all seven cold``: the same with ``formats`` = all seven (every directory's entries are
  looked up among all their candidate names). Goal: at most 1.1x ``agents cold``.
- ``rules_for one target``: ``rules_for(targets=[one file in the deepest directory])`` with all
  seven formats and an empty cache (the chain only). Goal: at most 0.01x ``all seven cold``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anyio
from monorepo import deepest_target, generate

from harness.instruction_files import InstructionFiles, InstructionFilesSettings
from harness.runtime import Supervisor

ALL = ("agents", "claude", "gemini", "copilot", "cursor", "windsurf", "cline")


async def measure(root: Path, target: str, repeat: int) -> dict[str, float]:
    agents = InstructionFiles(InstructionFilesSettings())
    every = InstructionFiles(InstructionFilesSettings(formats=ALL))
    async with Supervisor([agents.child_spec("agents"), every.child_spec("every")]):
        one = {s.path for s in await agents.load(root, agent="b")}
        seven = {s.path for s in await every.load(root, agent="b")}
        if not one <= seven:
            raise AssertionError("the seven formats lost agents files")
        explained = await every.rules_for(root, targets=[target])
        if not explained.rules:
            raise AssertionError("rules_for found no rule on the chain")

        async def cold(files: InstructionFiles) -> None:
            files.invalidate()
            await files.load(root, agent="b")

        async def rules() -> None:
            every.invalidate()
            await every.rules_for(root, targets=[target])

        rows = {
            "agents cold": lambda: cold(agents),
            "all seven cold": lambda: cold(every),
            "rules_for one target": rules,
        }
        samples: dict[str, list[float]] = {name: [] for name in rows}
        for round_number in range(repeat):
            order = list(rows)
            order = order[round_number % 3 :] + order[: round_number % 3]
            for name in order:
                start = time.perf_counter()
                await rows[name]()
                samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in samples.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int)
    parser.add_argument("--tree", type=Path, help="a tree made by discovery.py --keep")
    args = parser.parse_args(argv)
    repeat = args.repeat or (5 if args.quick else 11)
    tmp = None
    if args.tree is not None:
        root = args.tree.resolve()
    else:
        tmp = Path(tempfile.mkdtemp(prefix="harness-formats-")).resolve()
        root = tmp / "monorepo"
        dirs = 2000 if args.quick else 20000
        made = generate(
            root,
            dirs=dirs,
            packages=max(10, dirs // 50),
            git_dirs=600 if args.quick else 3000,
            node_packages=500 if args.quick else 3000,
        )
        print(f"generated {made} directories")
    try:
        target = deepest_target(root)
        medians = anyio.run(measure, root, target, repeat)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    agents, seven = medians["agents cold"], medians["all seven cold"]
    print(f"median of {repeat} interleaved runs\n")
    for name, seconds in medians.items():
        print(f"{name:<22} {seconds * 1000:>10.3f} ms  {seconds / seven:>7.3f}x all seven")
    print(f"\nall seven / agents = {seven / agents:.2f}  (target <= 1.1)")
    rules = medians["rules_for one target"]
    print(f"rules_for one target / all seven cold = {rules / seven:.4f}  (target <= 0.01)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
