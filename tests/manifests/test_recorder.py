"""The recorder actor: durable before it answers, group commit, failures reach only their build."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskStatus

from harness.manifests import ManifestRecord, ManifestStore, ManifestStoreError
from harness.manifests._recorder import Recorder
from harness.runtime import Supervisor
from tests.manifests.helpers import build, sql

RecordMaker = Callable[..., ManifestRecord]


async def test_concurrent_records_share_transactions_and_all_land(
    store_path: Path, make_record: RecordMaker
) -> None:
    prompt = build()
    records = [make_record(prompt) for _ in range(200)]
    with anyio.fail_after(60):
        async with ManifestStore.open(store_path, create=True) as store:
            recorder = Recorder(store)
            async with Supervisor([recorder.child_spec()]):
                async with anyio.create_task_group() as group:
                    for record in records:
                        group.start_soon(recorder.record, record)
                batches = recorder.batches
            listed = await store.list(limit=1000)
    assert {row["manifest_id"] for row in listed} == {r.manifest_id for r in records}
    assert 1 <= batches < len(records)  # group commit: builds shared transactions


async def test_a_record_is_committed_when_record_returns(
    store_path: Path, make_record: RecordMaker
) -> None:
    record = make_record()
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            recorder = Recorder(store)
            async with Supervisor([recorder.child_spec()]):
                await recorder.record(record)
                # Another connection sees it at once: it is committed, not buffered.
                rows = sql(
                    store_path,
                    "SELECT count(*) FROM manifests WHERE manifest_id = ?",
                    record.manifest_id,
                )
    assert rows == [(1,)]


async def test_a_bad_record_fails_alone_and_the_recorder_keeps_running(
    store_path: Path, make_record: RecordMaker
) -> None:
    first = make_record()
    good = [make_record() for _ in range(5)]
    outcomes: dict[str, str] = {}
    with anyio.fail_after(20):
        async with ManifestStore.open(store_path, create=True) as store:
            recorder = Recorder(store)
            async with Supervisor([recorder.child_spec()]) as supervisor:
                await recorder.record(first)

                async def attempt(record: ManifestRecord, key: str) -> None:
                    try:
                        await recorder.record(record)
                        outcomes[key] = "ok"
                    except ManifestStoreError:
                        outcomes[key] = "error"

                async with anyio.create_task_group() as group:
                    for index, record in enumerate(good):
                        group.start_soon(attempt, record, f"good{index}")
                    group.start_soon(attempt, first, "duplicate")  # its id is taken
                await recorder.record(make_record())
                [child] = supervisor.which_children()
    assert outcomes.pop("duplicate") == "error"
    assert set(outcomes.values()) == {"ok"} and len(outcomes) == 5
    assert child.restarts == 0


async def test_a_stopped_recorder_refuses_with_a_store_error(
    store_path: Path, make_record: RecordMaker
) -> None:
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            recorder = Recorder(store)
            with pytest.raises(ManifestStoreError, match="not running"):
                await recorder.record(make_record())


async def test_a_store_that_cannot_be_written_fails_the_waiting_record(
    tmp_path: Path, make_record: RecordMaker
) -> None:
    directory = tmp_path / "d"
    directory.mkdir()
    with anyio.fail_after(10):
        async with ManifestStore.open(directory / "m.db", create=True) as store:
            recorder = Recorder(store)
            async with Supervisor([recorder.child_spec()]):
                await recorder.record(make_record())
                async for path in anyio.Path(directory).iterdir():
                    await path.unlink()
                await anyio.Path(directory).rmdir()
                with pytest.raises(ManifestStoreError, match="gone"):
                    await recorder.record(make_record())


class _Seen(logging.Handler):
    """Sets an event when the recorder logs ``recorder_drain``."""

    def __init__(self) -> None:
        super().__init__()
        self.drain = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "event", None) == "recorder_drain":
            self.drain.set()


class _Flagging(Recorder):
    """A recorder that says when a write begins."""

    def __init__(self, store: ManifestStore) -> None:
        super().__init__(store)
        self.writing = anyio.Event()

    async def _flush(self) -> None:
        self.writing.set()
        await super()._flush()


async def test_stopping_drains_an_interrupted_batch(
    store_path: Path, make_record: RecordMaker
) -> None:
    record = make_record()
    seen = _Seen()
    logger = logging.getLogger("harness.manifests._recorder")
    logger.addHandler(seen)
    logger.setLevel(logging.INFO)
    outcome: list[str] = []
    try:
        with anyio.fail_after(20):
            async with ManifestStore.open(store_path, create=True) as store:
                recorder = _Flagging(store)
                held = anyio.Event()

                async def hold_the_store() -> None:
                    # The recorder's write waits for this, until the recorder is stopping.
                    async with store._lock:
                        held.set()
                        await seen.drain.wait()

                async def build() -> None:
                    try:
                        await recorder.record(record)
                        outcome.append("recorded")
                    except ManifestStoreError as exc:
                        outcome.append(f"error: {exc}")

                async with anyio.create_task_group() as group:
                    group.start_soon(hold_the_store)
                    await held.wait()
                    async with Supervisor([recorder.child_spec()]):
                        group.start_soon(build)
                        await recorder.writing.wait()
                    # left: the recorder was stopped mid-write and drained on its way out
                found = await store.get(record.manifest_id)
    finally:
        logger.removeHandler(seen)
    assert outcome == ["recorded"] and found["digest"] == record.manifest["digest"]


async def test_a_record_not_taken_in_time_fails_and_the_one_being_written_lands(
    store_path: Path, make_record: RecordMaker
) -> None:
    first, second = make_record(), make_record()
    outcomes: dict[str, str] = {}
    with anyio.fail_after(20):
        async with ManifestStore.open(store_path, create=True) as store:
            recorder = _Flagging(store)
            recorder.enqueue_timeout = 0.3
            release = anyio.Event()

            async def hold_the_store(task_status: TaskStatus[None]) -> None:
                async with store._lock:  # the first batch's write waits for this
                    task_status.started()
                    await release.wait()

            async def attempt(record: ManifestRecord, key: str) -> None:
                try:
                    await recorder.record(record)
                    outcomes[key] = "ok"
                except ManifestStoreError as exc:
                    outcomes[key] = str(exc)
                    release.set()  # the second failed while the first was still held

            async with Supervisor([recorder.child_spec()]), anyio.create_task_group() as group:
                await group.start(hold_the_store)
                group.start_soon(attempt, first, "first")
                await recorder.writing.wait()  # first is taken, its write is held
                group.start_soon(attempt, second, "second")
            listed = {row["manifest_id"] for row in await store.list()}
    assert outcomes["first"] == "ok" and first.manifest_id in listed
    assert "did not take the record within 0.3s" in outcomes["second"]
    assert second.manifest_id not in listed
