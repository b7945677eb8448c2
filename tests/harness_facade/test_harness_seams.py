"""The Harness's seams: a store (given or opened), the children of its tree, and using it
only inside ``async with``."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskStatus

from harness import Harness, HarnessError
from harness._harness import HarnessNotRunning
from harness.instruction_files import (
    InstructionStore,
    SqliteInstructionStore,
    StoreEvents,
    StoreRead,
)
from harness.runtime import ChildSpec
from harness.stores._registry import _REGISTRY


class CompanionStore:
    """The SQLite store with one supervised companion, which reports a changed row."""

    def __init__(self, database: Path) -> None:
        self.sqlite = SqliteInstructionStore(database)
        self.name = self.sqlite.name
        self.cache_rows = True
        self.generation = 0
        self.closed = 0
        self.events: StoreEvents | None = None
        self.companion_up = anyio.Event()

    async def read(self, project_id: str, agent: str) -> StoreRead:
        return await self.sqlite.read(project_id, agent)

    def child_specs(self, events: StoreEvents) -> Sequence[ChildSpec]:
        self.events = events

        async def companion(task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            task_status.started()
            self.companion_up.set()
            await anyio.sleep_forever()

        return [ChildSpec("store_companion", companion, shutdown=1.0)]

    async def aclose(self) -> None:
        self.closed += 1


async def _idle(task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    task_status.started()
    await anyio.sleep_forever()


async def test_the_tree_is_the_cache_then_the_stores_children_then_extra_children(
    make_db: Callable[..., Path],
) -> None:
    store = CompanionStore(make_db([]))
    extra = ChildSpec("recorder", _idle, shutdown=1.0)
    with anyio.fail_after(10):
        async with Harness(store=store, children=[extra]) as h:
            ids = [child.id for child in h.supervisor.which_children()]
            assert ids == ["instruction_files_cache", "store_companion", "recorder"]
            assert store.events is h.instruction_files  # the cache hears the store's events
            await store.companion_up.wait()
    assert store.closed == 0  # a store given to the Harness is the caller's to close


async def test_the_store_s_events_reach_the_cache(acme: Path, make_db: Callable[..., Path]) -> None:
    database = make_db([("acme", "reviewer", "row one")])
    store = CompanionStore(database)
    with anyio.fail_after(10):
        async with Harness(store=store) as h:
            first = await h.build_prompt(acme, agent="reviewer", project_id="acme")
            assert "row one" in first.text
            with sqlite3.connect(database) as db:
                db.execute("UPDATE agent_instructions SET content = 'row two'")
            db.close()
            assert store.events is not None
            store.events.row_changed("acme", "reviewer")
            second = await h.build_prompt(acme, agent="reviewer", project_id="acme")
            assert "row two" in second.text and "row one" not in second.text


async def test_a_store_the_harness_opened_is_closed_when_it_is_left(
    make_db: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    database = make_db([])
    opened: list[CompanionStore] = []

    def factory(url: str, *, timeout: float, heartbeat: float) -> InstructionStore:
        opened.append(CompanionStore(database))
        return opened[-1]

    monkeypatch.setitem(_REGISTRY["instructions"], "companion", factory)  # register_store, undone
    harness = Harness(database="companion://node-1")
    assert harness.store is opened[0]
    with anyio.fail_after(10):
        async with harness as h:
            assert "store_companion" in [c.id for c in h.supervisor.which_children()]
        assert opened[0].closed == 1
        async with harness:  # entered again: the same store, closed again on the way out
            pass
    assert opened[0].closed == 2 and len(opened) == 1


def test_database_and_store_together_are_refused(make_db: Callable[..., Path]) -> None:
    database = make_db([])
    with pytest.raises(ValueError, match="either database=") as caught:
        Harness(database=database, store=SqliteInstructionStore(database))
    assert isinstance(caught.value, HarnessError)


async def test_build_outside_async_with_says_to_enter_it(acme: Path) -> None:
    harness = Harness()
    for call in (harness.build_prompt, harness.build):
        with pytest.raises(HarnessNotRunning, match=r"async with Harness\(\.\.\.\)") as caught:
            await call(acme, agent="reviewer")
        assert isinstance(caught.value, HarnessError) and isinstance(caught.value, RuntimeError)
    with anyio.fail_after(10):
        async with harness:
            await harness.build_prompt(acme, agent="reviewer")
    with pytest.raises(HarnessNotRunning, match="async with"):  # and after leaving it
        await harness.build_prompt(acme, agent="reviewer")
    with pytest.raises(HarnessNotRunning, match="async with"):
        harness.supervisor  # noqa: B018
