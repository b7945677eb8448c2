"""The supervised cache: hits, invalidation, shared reads, the stale-write race, crashes."""

from __future__ import annotations

import os
import random
import shutil
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

import harness.instruction_files._files as files_module
import harness.instruction_files.discovery._sources as sources_module
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionSet,
    InstructionStoreError,
    SqliteInstructionStore,
    StoreRead,
    WorkspaceNotFoundError,
)
from harness.instruction_files.discovery._incremental import Base
from harness.runtime import Supervisor

DbMaker = Callable[[Iterable[tuple[str, str, object]]], Path]
SETTINGS = InstructionFilesSettings(walk_threads=1)


def contents(found: InstructionSet) -> list[str]:
    return [source.content for source in found]


def write_version(ws: Path, version: int | str) -> None:
    """Replace AGENTS.md atomically, so a concurrent reader sees one version or the other."""
    staging = ws.parent / f".staging-{ws.name}"
    staging.write_text(f"v{version}\n")
    staging.replace(ws / "AGENTS.md")


class GatedWalk:
    """Wraps the REAL walk: it reads the real tree first, then waits at a gate.

    That makes "read before, return after" interleavings deterministic (the walk's data is
    already read when the test changes the tree and calls ``invalidate``).
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, gated: bool = True) -> None:
        self.calls = 0
        self.gate = threading.Event()
        if not gated:
            self.gate.set()
        self.arrived = threading.Event()
        self._lock = threading.Lock()
        original = sources_module.walk_from

        def walk(
            root: str,
            settings: InstructionFilesSettings,
            stop: threading.Event,
            base: Base | None = None,
        ) -> object:
            result = original(root, settings, stop, base)
            with self._lock:
                self.calls += 1
            self.arrived.set()
            self.gate.wait(20)
            return result

        monkeypatch.setattr(sources_module, "walk_from", walk)

    async def wait_arrived(self) -> None:
        assert await anyio.to_thread.run_sync(self.arrived.wait, 10)
        self.arrived.clear()


# -- hits and invalidation ------------------------------------------------------------------------


async def test_second_load_is_a_hit_until_invalidated(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            first = await files.load(ws, agent="a")
            write_version(ws, 2)
            second = await files.load(ws, agent="a")
            assert second is first and contents(second) == ["v1\n"]
            files.invalidate()
            assert contents(await files.load(ws, agent="a")) == ["v2\n"]


async def test_warm_load_reads_no_file_but_resolves_the_workspace(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            cached = await files.load(ws, agent="a")
            write_version(ws, 2)  # not invalidated: a hit must not read it
            assert await files.load(ws, agent="a") is cached
            assert await files.load(str(ws), agent="a") is cached
            shutil.rmtree(ws)  # but the workspace itself is looked up on every load
            with pytest.raises(WorkspaceNotFoundError):
                await files.load(ws, agent="a")


async def test_a_retargeted_workspace_symlink_is_followed_at_once(tmp_path: Path) -> None:
    """An atomic deploy swaps a `current` symlink: the next load is the new release."""
    releases = [tmp_path / "r1", tmp_path / "r2"]
    for number, release in enumerate(releases, start=1):
        release.mkdir()
        write_version(release, number)
    current = tmp_path / "current"
    current.symlink_to(releases[0], target_is_directory=True)
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            assert contents(await files.load(current, agent="a")) == ["v1\n"]
            swap = tmp_path / "swap"
            swap.symlink_to(releases[1], target_is_directory=True)
            os.replace(swap, current)
            assert contents(await files.load(current, agent="a")) == ["v2\n"]
            current.unlink()
            with pytest.raises(WorkspaceNotFoundError):
                await files.load(current, agent="a")


async def test_dot_dot_after_a_symlink_resolves_as_the_os_does(tmp_path: Path) -> None:
    ws, elsewhere = tmp_path / "ws", tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    ws.mkdir()
    write_version(ws, 1)
    write_version(elsewhere, 2)
    (ws / "link").symlink_to(elsewhere / "deep", target_is_directory=True)
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(10):
        # ws/link/.. is elsewhere/deep/.. = elsewhere, not ws (no string normalisation first)
        assert contents(await files.load(ws / "link" / "..", agent="a")) == ["v2\n"]


async def test_an_empty_workspace_path_is_refused(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(10), pytest.raises(WorkspaceNotFoundError, match="empty path"):
        await files.load("", agent="a")


async def test_key_is_the_resolved_workspace(ws: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(ws, target_is_directory=True)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            via_link = await files.load(link, agent="a")
            write_version(ws, 2)
            assert await files.load(ws, agent="a") is via_link  # same resolved workspace
            files.invalidate(link)  # invalidating through the link reaches the real entry
            assert contents(await files.load(ws, agent="a")) == ["v2\n"]


async def test_invalidate_filters(tmp_path: Path, make_db: DbMaker) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for workspace in (first, second):
        workspace.mkdir()
        write_version(workspace, 1)
    database = make_db([(p, a, f"{p}/{a} v1") for p in ("p", "q") for a in ("x", "y")])
    files = InstructionFiles(SETTINGS, database=database)
    keys = [(w, p, a) for w in (first, second) for p in ("p", "q", None) for a in ("x", "y")]

    async def snapshot() -> dict[tuple[Path, str | None, str], InstructionSet]:
        return {key: await files.load(key[0], project_id=key[1], agent=key[2]) for key in keys}

    with anyio.fail_after(20):
        async with Supervisor([files.child_spec()]):
            before = await snapshot()
            for case in (
                {"workspace": first},
                {"project_id": "p"},
                {"agent": "y"},
                {"workspace": second, "project_id": "q", "agent": "x"},
                {"project_id": "nope"},
                {},
            ):
                files.invalidate(**case)
                after = await snapshot()
                for key in keys:
                    workspace, project_id, agent = key
                    dropped = (
                        case.get("workspace", workspace) == workspace
                        and case.get("project_id", project_id) == project_id
                        and case.get("agent", agent) == agent
                    )
                    assert (after[key] is before[key]) is not dropped, (case, key)
                    assert after[key] == before[key]  # same data: nothing changed on disk
                before = after


async def test_without_a_cache_task_load_answers_uncached(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(10):
        for version in range(3):
            write_version(ws, version)
            assert contents(await files.load(ws, agent="a")) == [f"v{version}\n"]
    assert not files.cache_running


async def test_ttl_expires_entries(ws: Path) -> None:
    files = InstructionFiles(InstructionFilesSettings(cache_ttl=0.05, walk_threads=1))
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            await files.load(ws, agent="a")
            write_version(ws, 2)
            await anyio.sleep(0.1)
            assert contents(await files.load(ws, agent="a")) == ["v2\n"]


async def test_invalidate_is_safe_from_another_thread(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            await files.load(ws, agent="a")
            write_version(ws, 2)
            await anyio.to_thread.run_sync(files.invalidate, ws)
            assert contents(await files.load(ws, agent="a")) == ["v2\n"]


# -- shared reads ---------------------------------------------------------------------------------


async def test_concurrent_loads_of_one_key_share_one_read(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = GatedWalk(monkeypatch)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    results: list[InstructionSet] = []

    async def load() -> None:
        results.append(await files.load(ws, agent="a"))

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            for _ in range(25):
                group.start_soon(load)
            await gated.wait_arrived()
            await anyio.wait_all_tasks_blocked()
            gated.gate.set()
    assert gated.calls == 1
    assert len(results) == 25 and all(result is results[0] for result in results)


async def test_different_keys_are_not_shared(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = GatedWalk(monkeypatch, gated=False)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            for agent in ("a", "b", "c"):
                group.start_soon(partial(files.load, ws, agent=agent))
    assert gated.calls == 3


async def test_waiters_share_the_leaders_error(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    sqlite = SqliteInstructionStore(tmp_path / "missing.db")

    class CountingStore:  # the real SQLite store, counting its reads
        name = sqlite.name
        cache_rows = True
        generation = 0
        child_specs = sqlite.child_specs
        aclose = sqlite.aclose

        async def read(self, project_id: str, agent: str) -> StoreRead:
            reads.append("read")
            return await sqlite.read(project_id, agent)

    files = InstructionFiles(SETTINGS, store=CountingStore())
    errors: list[BaseException] = []

    async def load() -> None:
        try:
            await files.load(ws, agent="a", project_id="p")
        except InstructionStoreError as exc:
            errors.append(exc)

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(load)
    # All ten started together: one read (the leader's), its error given to every waiter.
    assert reads == ["read"] and len(errors) == 10
    [leader] = [e for e in errors if not isinstance(e.__cause__, InstructionStoreError)]
    # Each waiter raises its own copy (its own traceback), caused by the leader's error.
    assert len({id(error) for error in errors}) == 10
    assert all(error is leader or error.__cause__ is leader for error in errors)
    assert len({str(error) for error in errors}) == 1 and "missing.db" in str(leader)


async def test_a_cancelled_leader_hands_over_to_a_waiter(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = GatedWalk(monkeypatch)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    waiter_result: list[InstructionSet] = []

    async def waiter() -> None:
        waiter_result.append(await files.load(ws, agent="a"))

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            leader_scope = anyio.CancelScope()

            async def leader() -> None:
                with leader_scope:
                    await files.load(ws, agent="a")

            group.start_soon(leader)
            await gated.wait_arrived()
            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()
            leader_scope.cancel()  # the leader gives up; its walk thread is abandoned
            await gated.wait_arrived()  # the waiter leads a fresh read
            gated.gate.set()
    assert contents(waiter_result[0]) == ["v1\n"]
    assert gated.calls == 2


# -- the load-invalidate-write race ---------------------------------------------------------------


async def test_read_before_invalidate_is_never_cached(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = GatedWalk(monkeypatch)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    early: list[InstructionSet] = []

    async def early_load() -> None:
        early.append(await files.load(ws, agent="a"))

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            async with anyio.create_task_group() as group:
                group.start_soon(early_load)
                await gated.wait_arrived()  # v1 has been read; the write is still to come
                write_version(ws, 2)
                files.invalidate()
                gated.gate.set()
            assert contents(early[0]) == ["v1\n"]  # began before invalidate: may be old
            assert contents(await files.load(ws, agent="a")) == ["v2\n"]  # began after: never


async def test_load_started_after_invalidate_does_not_join_a_stale_read(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = GatedWalk(monkeypatch)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    early: list[InstructionSet] = []
    late: list[InstructionSet] = []

    async def load(into: list[InstructionSet]) -> None:
        into.append(await files.load(ws, agent="a"))

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            group.start_soon(load, early)
            await gated.wait_arrived()  # the early read holds v1
            write_version(ws, 2)
            files.invalidate(ws)
            group.start_soon(load, late)  # starts after invalidate returned
            await gated.wait_arrived()  # ...so it reads afresh instead of joining
            gated.gate.set()
    assert contents(early[0]) == ["v1\n"]
    assert contents(late[0]) == ["v2\n"]
    assert gated.calls == 2


async def test_workspace_resolved_before_invalidate_is_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A symlinked workspace retargeted, and invalidated from another thread, while a load
    resolves it: what that load read is not cached."""
    old, new = tmp_path / "old", tmp_path / "new"
    for directory, text in ((old, "old"), (new, "new")):
        directory.mkdir()
        write_version(directory, text)
    link = tmp_path / "current"
    link.symlink_to(old, target_is_directory=True)
    original = files_module.resolve_workspace
    files = InstructionFiles(SETTINGS)
    raced: list[bool] = []

    def resolve(workspace: str) -> str:
        answer = original(workspace)
        if not raced:  # once: retarget and invalidate from another thread, then answer
            raced.append(True)

            def retarget() -> None:
                link.unlink()
                link.symlink_to(new, target_is_directory=True)
                files.invalidate(link)

            other = threading.Thread(target=retarget)
            other.start()
            other.join(10)
        return answer

    monkeypatch.setattr(files_module, "resolve_workspace", resolve)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            first = await files.load(link, agent="a")
            assert contents(first) == ["vold\n"]  # resolved before the invalidate
            assert contents(await files.load(link, agent="a")) == ["vnew\n"]
            assert contents(await files.load(old, agent="a")) == ["vold\n"]


async def test_stale_write_race_under_many_concurrent_loads(ws: Path, make_db: DbMaker) -> None:
    """Writers bump a version then invalidate; no load started afterwards sees an older one."""
    database = make_db([("p", "a", "row")])
    files = InstructionFiles(SETTINGS, database=database)
    rng = random.Random(7)
    published = 0  # the newest version whose invalidate() has returned
    write_version(ws, 0)
    violations: list[tuple[int, int]] = []
    loads = 0

    async def writer() -> None:
        nonlocal published
        for version in range(1, 41):
            write_version(ws, version)
            files.invalidate(ws, project_id="p" if version % 3 else None)
            published = version
            await anyio.sleep(rng.random() * 0.004)

    async def loader() -> None:
        nonlocal loads
        for _ in range(15):
            floor = published
            found = await files.load(ws, agent="a", project_id="p")
            seen = int(found.sources[0].content.strip()[1:])
            if seen < floor:
                violations.append((seen, floor))
            loads += 1
            await anyio.sleep(rng.random() * 0.002)

    with anyio.fail_after(40):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            group.start_soon(writer)
            for _ in range(20):
                group.start_soon(loader)
    assert loads == 300
    assert violations == []
    with anyio.fail_after(10):
        final = await files.load(ws, agent="a", project_id="p")
    assert contents(final)[0] == "v40\n"


# -- the cache task dies --------------------------------------------------------------------------


async def test_cache_task_killed_during_loads(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gated = GatedWalk(monkeypatch)
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    results: list[InstructionSet] = []

    async def load() -> None:
        results.append(await files.load(ws, agent="a"))

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()], max_restarts=10) as supervisor:
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(load)
                await gated.wait_arrived()
                assert files._crash_cache()  # the task dies with reads in flight
                for _ in range(1000):  # the supervisor restarts it (no event to wait on)
                    if supervisor.which_children()[0].restarts == 1 and files.cache_running:
                        break
                    await anyio.sleep(0.005)
                gated.gate.set()
            assert len(results) == 20 and all(contents(r) == ["v1\n"] for r in results)
            # The restarted table is empty: nothing read for the dead table was written to it.
            write_version(ws, 2)
            assert contents(await files.load(ws, agent="a")) == ["v2\n"]
            info = supervisor.which_children()[0]
            assert info.status == "running" and info.restarts == 1


async def test_repeated_crashes_never_fail_a_load(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    answered = 0
    with anyio.fail_after(20):
        async with Supervisor([files.child_spec()], max_restarts=50, max_seconds=60) as sup:

            async def loader() -> None:
                nonlocal answered
                for _ in range(20):
                    assert contents(await files.load(ws, agent="a")) == ["v1\n"]
                    answered += 1
                    await anyio.lowlevel.checkpoint()

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(loader)
                for _ in range(5):
                    await anyio.sleep(0.01)
                    files._crash_cache()
            # The last crash may not be processed yet ("restarting"): then it soon is.
            while sup.which_children()[0].status != "running":
                assert sup.which_children()[0].status == "restarting"
                await anyio.sleep(0.001)
    assert answered == 100


async def test_loads_answer_uncached_while_the_cache_task_is_down(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec("cache")]) as supervisor:
            await files.load(ws, agent="a")
            await supervisor.terminate_child("cache")
            assert not files.cache_running
            for version in (2, 3):
                write_version(ws, version)
                assert contents(await files.load(ws, agent="a")) == [f"v{version}\n"]
            await supervisor.restart_child("cache")
            assert files.cache_running
            cached = await files.load(ws, agent="a")
            write_version(ws, 4)
            assert await files.load(ws, agent="a") is cached


async def test_only_one_cache_task_per_instance(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            await group.start(files.run_cache)
            with pytest.raises(RuntimeError, match="already has a running cache task"):
                await group.start(files.run_cache)
            assert files.cache_running
            group.cancel_scope.cancel()
    assert not files.cache_running


def test_bad_arguments(ws: Path) -> None:
    files = InstructionFiles(SETTINGS)

    async def main() -> None:
        with anyio.fail_after(10):
            with pytest.raises(ValueError, match="agent"):
                await files.load(ws, agent="")
            with pytest.raises(ValueError, match="project_id"):
                await files.load(ws, agent="a", project_id="")

    anyio.run(main)


@pytest.mark.parametrize("bad", [{"agent": ""}, {"project_id": ""}, {"agent": 5}])
def test_invalidate_refuses_a_filter_load_would_refuse(bad: dict[str, object]) -> None:
    files = InstructionFiles(SETTINGS)
    with pytest.raises(ValueError, match="must be a non-empty string"):
        files.invalidate(**bad)  # type: ignore[arg-type]


async def test_invalidating_a_path_inside_a_workspace_reaches_it(ws: Path) -> None:
    """A file watcher reports the edited file (or its directory): that is enough."""
    files = InstructionFiles(SETTINGS)
    (ws / "pkg").mkdir()
    (ws / "pkg" / "AGENTS.md").write_text("pkg v1\n")
    write_version(ws, 1)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            root = await files.load(ws, agent="a")
            nested = await files.load(ws / "pkg", agent="a")
            assert contents(root) == ["v1\n", "pkg v1\n"] and contents(nested) == ["pkg v1\n"]
            (ws / "pkg" / "AGENTS.md").write_text("pkg v2\n")
            files.invalidate(ws / "pkg" / "AGENTS.md")
            assert contents(await files.load(ws, agent="a")) == ["v1\n", "pkg v2\n"]
            assert contents(await files.load(ws / "pkg", agent="a")) == ["pkg v2\n"]
            files.invalidate(ws.parent)  # a directory above the workspace reaches it too
            write_version(ws, 3)
            assert contents(await files.load(ws, agent="a")) == ["v3\n", "pkg v2\n"]
            other = ws.parent / "wsx"  # a sibling sharing a name prefix is not inside
            other.mkdir()
            write_version(other, 1)
            assert contents(await files.load(other, agent="a")) == ["v1\n"]
            write_version(other, 2)
            files.invalidate(ws)
            assert contents(await files.load(other, agent="a")) == ["v1\n"]
