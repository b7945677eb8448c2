"""ManifestStore on real SQLite files: round trip, sharing, integrity, opening checks, listing."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import anyio
import pytest

from harness import Unit
from harness.errors import HarnessError
from harness.manifests import (
    ManifestNotFound,
    ManifestRecord,
    ManifestStore,
    ManifestStoreError,
)
from harness.manifests._codec import SCHEMA_VERSION
from harness.manifests._sqlite import _ROWS_PER_STATEMENT
from tests.manifests.helpers import build, inputs_of, sample_layers, sql

RecordMaker = Callable[..., ManifestRecord]


def _settled_size(path: Path) -> int:
    """The file's size with the WAL folded in (what the store occupies at rest)."""
    sql(path, "PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


async def test_round_trip_returns_the_manifest_as_recorded(
    store_path: Path, make_record: RecordMaker
) -> None:
    record = make_record()
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(record)
            found = await store.get(record.manifest_id)
    assert found == json.loads(json.dumps(record.manifest))
    for key in ("manifest_id", "harness_version", "requested_at", "workspace", "agent"):
        assert found[key] == record.manifest[key]
    assert found["targets"] == [] and found["tokenizer"] == "approximate(bytes/4)"
    assert (
        set(found["budgets"])
        == set(found["strategies"])
        == {layer["name"] for layer in found["layers"]}
    )


async def test_a_store_survives_closing_and_reopening(
    store_path: Path, make_record: RecordMaker
) -> None:
    record = make_record()
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(record)
        store = await ManifestStore.open(store_path)  # the awaitable form
        try:
            assert (await store.get(record.manifest_id))["digest"] == record.manifest["digest"]
        finally:
            await store.aclose()
        assert store.closed
        with pytest.raises(ManifestStoreError, match="closed"):
            await store.get(record.manifest_id)


async def test_every_input_text_is_stored_once_however_many_builds_use_it(
    store_path: Path, make_record: RecordMaker
) -> None:
    prompt = build()
    distinct = {
        unit.text for units in sample_layers().values() if isinstance(units, list) for unit in units
    } | {"You are the reviewer."}
    with anyio.fail_after(30):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(make_record(prompt))
            before = _settled_size(store_path)
            for _ in range(10):
                await store.record(*(make_record(prompt) for _ in range(20)))
            after = _settled_size(store_path)
    [(texts,)] = sql(store_path, "SELECT count(*) FROM manifest_texts")
    [(parts,)] = sql(store_path, "SELECT count(*) FROM manifest_parts")
    [(builds,)] = sql(store_path, "SELECT count(*) FROM manifests")
    assert texts == len(distinct) and parts == 6 and builds == 201  # 5 layers, 1 settings
    assert (after - before) / 200 <= 2048  # bytes per additional identical build


async def test_dropped_units_texts_are_stored_too(
    store_path: Path, make_record: RecordMaker
) -> None:
    prompt = build(budgets={"instruction_files": 10})
    dropped = prompt.layer("instruction_files").dropped
    assert dropped  # the budget drops some
    record = make_record(prompt)
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(record)
            manifest = await store.get(record.manifest_id)
            [layer] = [x for x in manifest["layers"] if x["name"] == "instruction_files"]
            addresses = [entry["sha256"] for entry in inputs_of(layer)]
            stored = await store.texts(addresses)
    assert [entry["id"] for entry in inputs_of(layer)] == [
        unit.id for unit in sample_layers()["instruction_files"]
    ]
    assert set(stored) == set(addresses)


async def test_a_batch_is_one_transaction_all_or_nothing(
    store_path: Path, make_record: RecordMaker
) -> None:
    first, second = make_record(), make_record()
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(first)
            with pytest.raises(ManifestStoreError):
                await store.record(second, first)  # first's id exists: the batch fails whole
            with pytest.raises(ManifestNotFound):
                await store.get(second.manifest_id)
            await store.record(second)
            assert [row["manifest_id"] for row in await store.list()] == [
                second.manifest_id,
                first.manifest_id,
            ]


async def test_a_batch_longer_than_one_statement_lands_whole_or_not_at_all(
    store_path: Path, make_record: RecordMaker
) -> None:
    prompt = build()
    records = [make_record(prompt) for _ in range(2 * _ROWS_PER_STATEMENT + 3)]
    with anyio.fail_after(30):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(records[0])
            with pytest.raises(ManifestStoreError):  # the taken id is in its last statement
                await store.record(*records[1:], records[0])
            assert len(await store.list(limit=10_000)) == 1
            await store.record(*records[1:])
            listed = await store.list(limit=10_000)
    assert {row["manifest_id"] for row in listed} == {r.manifest_id for r in records}


async def test_a_batch_of_rows_only_is_one_statement_that_lands_whole_or_not_at_all(
    store_path: Path, make_record: RecordMaker
) -> None:
    """Once a build's texts and layers are stored, the next batch holds rows only and is
    written as one statement without BEGIN: a taken id among them still fails all of them."""
    prompt = build()
    records = [make_record(prompt) for _ in range(5)]
    with anyio.fail_after(30):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(records[0])  # its texts and parts: later batches are rows only
            with pytest.raises(ManifestStoreError):
                await store.record(records[1], records[2], records[0])
            assert len(await store.list(limit=100)) == 1
            await store.record(*records[1:])
            assert len(await store.list(limit=100)) == 5


async def test_unknown_id_raises_manifest_not_found(store_path: Path) -> None:
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            with pytest.raises(ManifestNotFound) as caught:
                await store.get("01NOSUCHMANIFEST0000000000")
            with pytest.raises(KeyError):
                await store.replay("01NOSUCHMANIFEST0000000000")
            with pytest.raises(ManifestNotFound):
                await store.diff("a", "b")
    error = caught.value
    assert isinstance(error, ManifestStoreError) and isinstance(error, HarnessError)
    assert isinstance(error, KeyError) and error.manifest_id == "01NOSUCHMANIFEST0000000000"
    assert str(error).startswith("no manifest '01NOSUCHMANIFEST0000000000'")  # not quoted
    assert "harness manifests" in str(error)


async def test_list_is_newest_first_with_filters_and_limit(
    store_path: Path, make_record: RecordMaker
) -> None:
    records = [
        make_record(agent="reviewer", project_id="acme"),
        make_record(agent="tester", project_id="acme"),
        make_record(agent="reviewer", project_id=None),
        make_record(agent="reviewer", project_id="other"),
    ]
    ids = [record.manifest_id for record in records]
    assert ids == sorted(ids)
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(*records[:2])
            await store.record(*records[2:])
            everything = await store.list()
            reviewer = await store.list(agent="reviewer")
            acme = await store.list(project_id="acme")
            both = await store.list(agent="reviewer", project_id="acme")
            newest = await store.list(limit=1)
            none = await store.list(limit=0)
            with pytest.raises(ValueError, match="limit"):
                await store.list(limit=-1)
    assert [row["manifest_id"] for row in everything] == ids[::-1]
    assert [row["manifest_id"] for row in reviewer] == [ids[3], ids[2], ids[0]]
    assert [row["manifest_id"] for row in acme] == [ids[1], ids[0]]
    assert [row["manifest_id"] for row in both] == [ids[0]]
    assert [row["manifest_id"] for row in newest] == [ids[3]] and none == []
    row = everything[0]
    assert row["agent"] == "reviewer" and row["project_id"] == "other"
    assert row["workspace"] == "/srv/acme" and row["digest"] == records[3].manifest["digest"]
    assert row["tokens"] == records[3].manifest["tokens"]


async def test_hostile_filter_values_are_bound_parameters(
    store_path: Path, make_record: RecordMaker
) -> None:
    hostile = "x' OR '1'='1"
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(make_record(agent=hostile), make_record(agent="reviewer"))
            rows = await store.list(agent=hostile)
    assert [row["agent"] for row in rows] == [hostile]


# ------------------------------------------------------------------------------ opening


async def test_opening_a_missing_file_raises_and_creates_nothing(store_path: Path) -> None:
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match="does not exist") as caught:
            await ManifestStore.open(store_path)
    assert isinstance(caught.value, HarnessError) and isinstance(caught.value, OSError)
    assert not await anyio.Path(store_path).exists()


async def test_create_needs_an_existing_directory(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match="directory"):
            await ManifestStore.open(tmp_path / "nowhere" / "m.db", create=True)
        async with ManifestStore.open(tmp_path / "m.db", create=True) as store:
            assert await store.list() == []
    [(version,)] = sql(tmp_path / "m.db", "SELECT version FROM harness_schema")
    assert version == SCHEMA_VERSION
    [(mode,)] = sql(tmp_path / "m.db", "PRAGMA journal_mode")
    assert mode == "wal"


@pytest.mark.parametrize(
    "content",
    [b"just some notes\n", b"SQLite format 3\x00" + b"\xde\xad" * 2000],
    ids=["text-file", "corrupt-sqlite"],
)
async def test_a_foreign_or_corrupt_file_is_refused(store_path: Path, content: bytes) -> None:
    await anyio.Path(store_path).write_bytes(content)
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match=r"corrupt|foreign|not an SQLite"):
            await ManifestStore.open(store_path, create=True)
    assert await anyio.Path(store_path).read_bytes() == content  # never "repaired" into a store


async def test_an_sqlite_database_of_something_else_is_refused(store_path: Path) -> None:
    sql(store_path, "CREATE TABLE agent_instructions (project_id TEXT)")
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match=r"something else.*agent_instructions"):
            await ManifestStore.open(store_path, create=True)


async def test_a_newer_schema_is_refused_with_upgrade_advice(
    store_path: Path, make_record: RecordMaker
) -> None:
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(make_record())
    sql(store_path, "UPDATE harness_schema SET version = ?", SCHEMA_VERSION + 1)
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match=r"newer.*upgrade harness"):
            await ManifestStore.open(store_path)


async def test_a_damaged_schema_is_refused(store_path: Path) -> None:
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True):
            pass
    sql(store_path, "DROP TABLE manifest_parts")
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match=r"damaged.*manifest_parts"):
            await ManifestStore.open(store_path)


async def test_another_components_schema_row_is_refused(store_path: Path) -> None:
    sql(store_path, "CREATE TABLE harness_schema (component TEXT PRIMARY KEY, version INTEGER)")
    sql(store_path, "INSERT INTO harness_schema VALUES ('something', 1)")
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match="another harness component"):
            await ManifestStore.open(store_path)


async def test_a_directory_or_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    with anyio.fail_after(10):
        with pytest.raises(ManifestStoreError, match="a FIFO"):
            await ManifestStore.open(fifo)
        with pytest.raises(ManifestStoreError, match="a directory"):
            await ManifestStore.open(tmp_path, create=True)


# ------------------------------------------------------------------------------ writing fails


async def test_a_removed_directory_fails_the_write(
    tmp_path: Path, make_record: RecordMaker
) -> None:
    directory = tmp_path / "d"
    directory.mkdir()
    with anyio.fail_after(10):
        async with ManifestStore.open(directory / "m.db", create=True) as store:
            await store.record(make_record())
            for name in os.listdir(directory):
                os.remove(directory / name)
            directory.rmdir()
            with pytest.raises(ManifestStoreError, match="gone"):
                await store.record(make_record())


async def test_a_replaced_file_fails_the_write(store_path: Path, make_record: RecordMaker) -> None:
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(make_record())
            other = store_path.with_name("other.db")
            other.write_bytes(b"")
            os.replace(other, store_path)
            with pytest.raises(ManifestStoreError, match="replaced"):
                await store.record(make_record())


def _record_as_nobody(path: Path, record: ManifestRecord) -> str:
    """In a forked child that dropped to ``nobody`` (root ignores permission bits), open the
    store and try to record; return what happened."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)

            async def attempt() -> str:
                try:
                    async with ManifestStore.open(path) as store:
                        await store.list()  # it can be read
                        await store.record(record)
                except ManifestStoreError as exc:
                    return f"ManifestStoreError: {exc}"
                return "recorded"

            outcome = anyio.run(attempt)
            with os.fdopen(write_end, "w") as pipe:
                pipe.write(outcome)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, data
    return data


def test_a_read_only_store_fails_the_write(make_record: RecordMaker) -> None:
    # A world-traversable place (pytest's tmp_path is root's alone), a directory where nobody
    # may create the WAL files, and the store file itself read-only and root's.
    base = Path(os.path.realpath("/tmp")) / f"harness-manifests-{os.getpid()}"
    base.mkdir(mode=0o755)
    try:
        base.chmod(0o777)
        path = base / "m.db"

        async def create() -> None:
            async with ManifestStore.open(path, create=True) as store:
                await store.record(make_record())

        anyio.run(create)
        path.chmod(0o444)
        outcome = _record_as_nobody(path, make_record())
    finally:
        shutil.rmtree(base)
    assert outcome.startswith("ManifestStoreError") and "read-only" in outcome, outcome


# ------------------------------------------------------------------------------ unit fields


async def test_units_with_lone_surrogates_and_odd_ids_round_trip(
    store_path: Path, make_record: RecordMaker
) -> None:
    layers = {"task_state": [Unit("odd\x1b[31mid", "text \ud800 with a lone surrogate")]}
    record = make_record(build(layers))
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(record)
            replay = await store.replay(record.manifest_id)
    assert replay.identical, replay.differences


def test_the_sqlite_file_is_plain_sqlite(store_path: Path) -> None:
    async def create() -> None:
        async with ManifestStore.open(store_path, create=True):
            pass

    anyio.run(create)
    with closing(sqlite3.connect(store_path)) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert {"harness_schema", "manifests", "manifest_texts", "manifest_parts"} <= tables


async def test_after_a_failed_write_every_text_is_sent_again(
    store_path: Path, make_record: RecordMaker
) -> None:
    # Texts lost behind the store's back (a restore from an older backup, say) are not noticed
    # while the store believes them stored; a failed write ends that belief, so the next
    # record stores its texts again and replays identical.
    with anyio.fail_after(20):
        async with ManifestStore.open(store_path, create=True, timeout=0.2) as store:
            await store.record(make_record())
            with closing(sqlite3.connect(store_path, isolation_level=None)) as other:
                other.execute("DELETE FROM manifest_texts")
                other.execute("BEGIN IMMEDIATE")  # hold the write lock: the next write fails
                with pytest.raises(ManifestStoreError, match="locked"):
                    await store.record(make_record())
                other.execute("ROLLBACK")
            record = make_record()
            await store.record(record)
            replay = await store.replay(record.manifest_id)
            assert replay.identical, replay


async def test_ids_and_filters_that_are_not_text_are_not_found(
    store_path: Path, make_record: RecordMaker
) -> None:
    """Bytes that are not UTF-8 on a command line arrive as lone surrogates: no build has such
    an id, agent or project (never a raw UnicodeEncodeError)."""
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(make_record())
            for bad in ("01M8\udcff", "\ud800"):
                with pytest.raises(ManifestNotFound):
                    await store.get(bad)
                with pytest.raises(ManifestNotFound):
                    await store.replay(bad)
                assert await store.list(agent=bad) == []
                assert await store.list(project_id=bad) == []
            assert len(await store.list()) == 1


async def test_a_record_whose_columns_are_not_text_fails_alone(
    store_path: Path, make_record: RecordMaker
) -> None:
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            with pytest.raises(ManifestStoreError, match=r"workspace path .* is not valid UTF-8"):
                await store.record(make_record(workspace="/srv/caf\udce9"))
            await store.record(make_record())
            assert len(await store.list()) == 1
