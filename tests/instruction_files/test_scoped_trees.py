"""Scoped loads on the hostile trees of ``trees.py``: for directories of every generated tree,
a load scoped to it returns the full walk's sources on its chain (the full walk is the
reference), never a marker's text, and never opens a path outside the workspace."""

from __future__ import annotations

import posixpath
import random
import tempfile
from pathlib import Path

from harness.instruction_files import TargetOutsideWorkspace, discover
from harness.workspace import display_path
from tests.trees import (
    PATH_MAX,
    SETTINGS,
    RandomChooser,
    audited,
    gen_tree,
    materialise,
    remove_tree,
)


def _check(seed: int) -> list[str]:
    problems: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="harness-scoped-"))
    try:
        tree = materialise(gen_tree(RandomChooser(random.Random(seed))), base)
        full = discover(tree.ws, SETTINGS)
        duplicates = {w.split(": ", 1)[0] for w in full.warnings if "the same file as" in w}
        loaded = [source.path for source in full]
        for record in tree.dirs[:15]:
            if record.abs_len >= PATH_MAX - 64:
                continue
            target = f"{record.rel}/new.ts" if record.rel else "new.ts"
            try:
                scoped, opened = audited(lambda t=target: discover(tree.ws, SETTINGS, targets=[t]))
            except TargetOutsideWorkspace as exc:  # only through a symlink on the way
                problems.append(f"seed {seed} {target!r}: refused: {exc}")
                continue
            chain = {display_path(rel) for rel in scoped.chain}
            on_chain = [path for path in loaded if (posixpath.dirname(path) or ".") in chain]
            got = [source.path for source in scoped]
            if [path for path in got if path not in duplicates] != on_chain:
                problems.append(f"seed {seed} {target!r}: {got} != {on_chain}")
            for source in scoped:
                if any(marker in source.content for marker in tree.markers):
                    problems.append(f"seed {seed} {target!r}: marker text in {source.path}")
            outside = [path for path in opened if path.startswith(str(tree.outside))]
            if outside:
                problems.append(f"seed {seed} {target!r}: opened {outside[:3]}")
    finally:
        remove_tree(base)
    return problems


def test_scoped_loads_match_the_full_walk_on_generated_hostile_trees() -> None:
    problems = [problem for seed in range(25) for problem in _check(seed)]
    assert not problems, "\n".join(problems[:20])
