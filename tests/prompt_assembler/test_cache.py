"""The assembler keeps nothing between calls; a Harness's cache dies with the running Harness."""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import anyio

from harness import Harness
from harness.prompt_assembler import AssemblyCache, Unit, assemble

MARK = "q7-prompt-text-marker-"


def holders_of_marked_text() -> list[str]:
    """Types of the live containers that reference a str carrying ``MARK`` (containers the
    collector does not track, such as a dict of strings, are searched through their holders)."""
    gc.collect()
    found = []
    seen: set[int] = set()
    stack = list(gc.get_objects())
    while stack:
        holder = stack.pop()
        for item in gc.get_referents(holder):
            if type(item) is str:
                if MARK in item and item != MARK:
                    found.append(type(holder).__name__)
            elif (
                type(item) in (dict, tuple, list, set, frozenset)
                and not gc.is_tracked(item)
                and id(item) not in seen
            ):
                seen.add(id(item))
                stack.append(item)
    return found


def test_a_plain_call_keeps_nothing() -> None:
    for i in range(200):
        prompt = assemble({"task_state": [Unit("t", f"{MARK}{i} " + "x" * 1000)]})
        prompt.manifest()
    del prompt
    assert holders_of_marked_text() == []


def test_a_cache_is_shared_by_the_builds_given_it_and_cleared_on_demand() -> None:
    cache = AssemblyCache()
    first = assemble({"identity": f"{MARK}who"}, cache=cache).manifest_record()
    again = assemble({"identity": f"{MARK}who"}, cache=cache).manifest_record()
    assert again.layers[0] is first.layers[0]
    del first, again
    assert holders_of_marked_text()  # the cache holds the text (so the scan can see it)
    cache.clear()
    assert holders_of_marked_text() == []


async def test_ten_thousand_builds_leave_no_prompt_text_behind(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run the tests.\n", encoding="utf-8")
    filler = "y" * 10_000
    with anyio.fail_after(300):
        harness = Harness()
        async with harness:
            for i in range(10_000):
                prompt = await harness.build_prompt(
                    tmp_path,
                    agent="reviewer",
                    task_state=f"{MARK}{i:05d} {filler}",
                    budgets={"task_state": 3000},
                )
                assert prompt.layer("task_state").kept == ("task_state",)
                prompt.manifest()
            del prompt
            cache = weakref.ref(harness._assembly_cache)
            assert holders_of_marked_text()  # held while it runs: the scan sees the memos
        assert holders_of_marked_text() == []  # left: nothing held, even by the Harness
    del harness
    gc.collect()
    assert cache() is None
    assert sys.getrefcount(filler) < 10
