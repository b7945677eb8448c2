"""Harness(manifests=...): every build recorded before build_prompt returns, or no prompt."""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness import Harness
from harness.manifests import ManifestStore, ManifestStoreError
from tests.cli import ACME, ACME_DB, ROOT

RULES = ["Never log card numbers.", "Refunds need two approvals."]


async def test_a_recorded_build_carries_its_id_and_replays_identical(store_path: Path) -> None:
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB, manifests=store_path) as h:
            prompt = await h.build_prompt(
                ACME, agent="reviewer", project_id="acme", business_rules=RULES
            )
            assert prompt.manifest_id is not None
            store = h.manifests
            assert store is not None
            manifest = await store.get(prompt.manifest_id)
            replay = await store.replay(prompt.manifest_id)
    assert replay.identical, replay.differences
    assert manifest["digest"] == prompt.digest and manifest["manifest_id"] == prompt.manifest_id
    assert manifest["agent"] == "reviewer" and manifest["project_id"] == "acme"
    assert manifest["workspace"] == str(ACME.resolve()) and manifest["targets"] == []
    assert manifest["tokenizer"] == prompt.tokenizer_name
    assert manifest["tokenizer_spec"] == "approximate"
    assert manifest["harness_version"] and manifest["requested_at"].endswith("+00:00")
    assert set(manifest["budgets"]) == set(manifest["strategies"])
    assert store.closed  # closed after the Harness was left


async def test_without_a_store_the_id_is_none() -> None:
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB) as h:
            prompt = await h.build_prompt(ACME, agent="reviewer", project_id="acme")
            assert h.manifests is None
    assert prompt.manifest_id is None


async def test_200_concurrent_builds_get_distinct_ids_and_all_replay_identical(
    store_path: Path,
) -> None:
    ids: list[str] = []

    async def build(h: Harness, n: int) -> None:
        prompt = await h.build_prompt(
            ACME, agent="reviewer", project_id="acme", task_state=[f"step {n % 7}"]
        )
        assert prompt.manifest_id is not None
        ids.append(prompt.manifest_id)

    with anyio.fail_after(120):
        async with Harness(database=ACME_DB, manifests=store_path) as h:
            async with anyio.create_task_group() as group:
                for n in range(200):
                    group.start_soon(build, h, n)
            store = h.manifests
            assert store is not None
            replays = [await store.replay(manifest_id) for manifest_id in ids]
            listed = await store.list(limit=1000)
    assert len(set(ids)) == 200
    assert {row["manifest_id"] for row in listed} == set(ids)
    assert all(replay.identical for replay in replays), [
        replay.differences for replay in replays if not replay.identical
    ]


async def test_a_store_that_cannot_be_written_fails_the_build(tmp_path: Path) -> None:
    directory = tmp_path / "records"
    directory.mkdir()
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB, manifests=directory / "m.db") as h:
            await h.build_prompt(ACME, agent="reviewer", project_id="acme")
            async for path in anyio.Path(directory).iterdir():
                await path.unlink()
            await anyio.Path(directory).rmdir()
            with pytest.raises(ManifestStoreError, match="gone"):
                await h.build_prompt(ACME, agent="reviewer", project_id="acme")
            [child] = [c for c in h.supervisor.which_children() if c.id == "manifest_recorder"]
            assert child.status == "running" and child.restarts == 0


async def test_a_store_that_cannot_be_opened_fails_the_entry(tmp_path: Path) -> None:
    foreign = tmp_path / "notes.txt"
    await anyio.Path(foreign).write_text("not a store\n")
    with anyio.fail_after(30):
        with pytest.raises(ManifestStoreError, match="directory"):
            async with Harness(manifests=tmp_path / "missing" / "m.db"):
                pass
        with pytest.raises(ManifestStoreError, match="not an SQLite"):
            async with Harness(manifests=foreign):
                pass
    with pytest.raises(ManifestStoreError, match="empty"):
        Harness(manifests="")


_KILLED_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import anyio
    from harness import Harness

    async def main() -> None:
        async with Harness(database=sys.argv[2], manifests=sys.argv[3]) as h:
            prompt = await h.build_prompt(sys.argv[1], agent="reviewer", project_id="acme")
            os.write(1, (prompt.manifest_id + "\\n").encode())
            os.kill(os.getpid(), signal.SIGKILL)  # right after build_prompt returned

    anyio.run(main)
    """
)


def test_a_build_survives_sigkill_right_after_it_returned(store_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_CHILD, str(ACME), str(ACME_DB), str(store_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    manifest_id = child.stdout.strip()

    async def replay() -> bool:
        with anyio.fail_after(30):
            async with ManifestStore.open(store_path) as store:
                outcome = await store.replay(manifest_id)
        return outcome.identical

    assert anyio.run(replay)


class _Drain(logging.Handler):
    """Sets an event when the recorder logs ``recorder_drain``."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "event", None) == "recorder_drain":
            self.seen.set()


async def test_leaving_the_harness_drains_a_pending_record_before_closing_the_store(
    store_path: Path,
) -> None:
    drain = _Drain()
    logger = logging.getLogger("harness.manifests._recorder")
    logger.addHandler(drain)
    logger.setLevel(logging.INFO)
    built: list[str | None] = []
    try:
        with anyio.fail_after(30):
            h = Harness(database=ACME_DB, manifests=store_path)
            async with anyio.create_task_group() as group, h:
                store = h.manifests
                assert store is not None
                held, writing = anyio.Event(), anyio.Event()

                async def hold_the_store() -> None:
                    async with store._lock:  # the recorder's write waits behind this
                        held.set()
                        await drain.seen.wait()  # released once the Harness drains

                original = store.record

                async def observed(*records: Any) -> None:  # says when a write starts
                    writing.set()
                    await original(*records)

                store.record = observed  # type: ignore[method-assign]

                async def build() -> None:
                    prompt = await h.build_prompt(ACME, agent="reviewer", project_id="acme")
                    built.append(prompt.manifest_id)

                group.start_soon(hold_the_store)
                await held.wait()
                group.start_soon(build)
                await writing.wait()  # the build's record is being written
                # left with the record pending: the drain wrote it, then the store closed
            assert store.closed and built and built[0] is not None
            async with ManifestStore.open(store_path) as again:
                assert (await again.replay(built[0])).identical
    finally:
        logger.removeHandler(drain)


async def test_a_store_log_truncated_under_a_running_harness_fails_every_later_build(
    store_path: Path,
) -> None:
    """SQLite keeps committing into a write-ahead log that another program truncated, and the
    records vanish at the next checkpoint: such a build must not be handed out."""
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB, manifests=store_path) as h:
            await h.build_prompt(ACME, agent="reviewer", project_id="acme")
            os.truncate(f"{store_path}-wal", 0)
            for _ in range(3):
                with pytest.raises(ManifestStoreError, match="truncated or damaged"):
                    await h.build_prompt(ACME, agent="reviewer", project_id="acme")


async def test_a_store_file_truncated_under_a_running_harness_fails_the_build(
    store_path: Path,
) -> None:
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB, manifests=store_path) as h:
            await h.build_prompt(ACME, agent="reviewer", project_id="acme")
            with sqlite3.connect(store_path) as other:
                other.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            other.close()
            os.truncate(store_path, 4096)
            with pytest.raises(ManifestStoreError):
                await h.build_prompt(ACME, agent="reviewer", project_id="acme")


def _workspace_named(parent: Path, name: bytes) -> Path:
    workspace = Path(os.fsdecode(os.fsencode(parent) + b"/" + name))
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Rules.\n", encoding="utf-8")
    return workspace


async def test_one_build_that_cannot_be_recorded_fails_alone_in_a_batch(tmp_path: Path) -> None:
    """A workspace path that is not UTF-8 fails its own build with a clear error; the 59 good
    builds around it are recorded."""
    bad = _workspace_named(tmp_path, b"caf\xe9")
    outcomes: list[str | BaseException] = []

    async def build(h: Harness, workspace: Path) -> None:
        try:
            prompt = await h.build_prompt(workspace, agent="reviewer", project_id="acme")
        except ManifestStoreError as exc:
            outcomes.append(exc)
        else:
            outcomes.append(str(prompt.manifest_id))

    with anyio.fail_after(60):
        async with Harness(database=ACME_DB, manifests=tmp_path / "m.db") as h:
            async with anyio.create_task_group() as group:
                for n in range(60):
                    group.start_soon(build, h, bad if n == 30 else ACME)
            store = h.manifests
            assert store is not None
            recorded = await store.list(limit=100)
    errors = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(errors) == 1 and "workspace path" in str(errors[0])
    assert "not valid UTF-8" in str(errors[0])
    assert len(recorded) == 59
