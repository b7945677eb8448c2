"""The InstructionStore seam: ``open_store``'s registry, and how ``InstructionFiles`` obeys a
store's events, ``cache_rows`` and ``generation``.

``ControlledStore`` is a real store: it reads the row from a real SQLite file through
``SqliteInstructionStore`` and only adds the knobs a store with a change channel has (what the
PostgreSQL store's listener turns).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from harness import HarnessError
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionSet,
    InstructionStoreError,
    SqliteInstructionStore,
    StoreEvents,
    StoreRead,
    open_store,
)
from harness.instruction_files.stores import InstructionStore
from harness.runtime import ChildSpec, Supervisor
from harness.stores import register_store, store_factory, url_scheme
from harness.stores._registry import _REGISTRY

from .conftest import DbMaker, Writer, insert_rows

SETTINGS = InstructionFilesSettings(walk_threads=1)


class ControlledStore:
    """The SQLite store plus switches: ``cache_rows``, ``generation``, a gate on reads."""

    def __init__(self, database: Path) -> None:
        self.sqlite = SqliteInstructionStore(database, timeout=5.0)
        self.cache_rows = True
        self.generation = 0
        self.reads = 0
        self.gate: anyio.Event | None = None  # when set, a read waits for it
        self.reading = anyio.Event()  # set once a read has started
        self.closed = 0

    @property
    def name(self) -> str:
        return f"controlled:{self.sqlite.name}"

    async def read(self, project_id: str, agent: str) -> StoreRead:
        self.reads += 1
        self.reading.set()
        if self.gate is not None:
            await self.gate.wait()
        return await self.sqlite.read(project_id, agent)

    def child_specs(self, events: StoreEvents) -> Sequence[ChildSpec]:
        return ()

    async def aclose(self) -> None:
        self.closed += 1


def texts(found: InstructionSet) -> list[str]:
    return [source.content.strip() for source in found]


def controlled(
    write: Writer, make_db: DbMaker, rows: list[tuple[str, str, object]], root: str = "root"
) -> tuple[Path, ControlledStore, InstructionFiles]:
    """A workspace whose root file says ``root``, a database with ``rows``, and the
    ``InstructionFiles`` reading them through a ``ControlledStore``."""
    database = make_db(rows)
    write("AGENTS.md", root)
    store = ControlledStore(database)
    return database, store, InstructionFiles(SETTINGS, store=store)


async def test_a_controlled_store_is_an_instruction_store(make_db: DbMaker) -> None:
    assert isinstance(ControlledStore(make_db([])), InstructionStore)
    assert isinstance(SqliteInstructionStore("x.db"), InstructionStore)


async def test_row_changed_drops_only_that_agents_entries(
    ws: Path, write: Writer, make_db: DbMaker
) -> None:
    database, store, files = controlled(write, make_db, [("p", "a", "a1"), ("p", "b", "b1")])
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            await files.load(ws, agent="a", project_id="p")
            await files.load(ws, agent="b", project_id="p")
            insert_rows(database, [("p", "a", "a2"), ("p", "b", "b2")])
            files.row_changed("p", "a")
            assert texts(await files.load(ws, agent="a", project_id="p")) == ["root", "a2"]
            assert texts(await files.load(ws, agent="b", project_id="p")) == ["root", "b1"]
            files.row_changed("", "\x00odd")  # a notice is data: odd ids never raise
    assert store.reads == 3


async def test_rows_unreliable_drops_every_entry_with_a_row_and_keeps_the_rest(
    ws: Path, write: Writer, make_db: DbMaker
) -> None:
    database, _, files = controlled(write, make_db, [("p", "a", "a1")], "root1")
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            await files.load(ws, agent="a", project_id="p")
            await files.load(ws, agent="a", project_id="q")  # no row: still a row's answer
            await files.load(ws, agent="a")
            write("AGENTS.md", "root2")
            insert_rows(database, [("p", "a", "a2"), ("q", "a", "qa")])
            files.rows_unreliable()
            assert texts(await files.load(ws, agent="a", project_id="p")) == ["root2", "a2"]
            assert texts(await files.load(ws, agent="a", project_id="q")) == ["root2", "qa"]
            assert texts(await files.load(ws, agent="a")) == ["root1"]  # no row: kept


async def test_nothing_with_a_row_is_cached_while_the_store_says_cache_rows_false(
    ws: Path, write: Writer, make_db: DbMaker
) -> None:
    database, store, files = controlled(write, make_db, [("p", "a", "v1")])
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            store.cache_rows = False
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v1"
            insert_rows(database, [("p", "a", "v2")])
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v2"
            await files.load(ws, agent="a")
            await files.load(ws, agent="a")  # rows are not involved: cached as always
            store.cache_rows = True
            await files.load(ws, agent="a", project_id="p")
            insert_rows(database, [("p", "a", "v3")])
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v2"  # cached
    assert store.reads == 3


async def test_a_read_that_spans_a_generation_change_is_not_cached(
    ws: Path, write: Writer, make_db: DbMaker
) -> None:
    database, store, files = controlled(write, make_db, [("p", "a", "v1")])
    store.gate = anyio.Event()
    results: list[InstructionSet] = []

    async def load() -> None:
        results.append(await files.load(ws, agent="a", project_id="p"))

    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]), anyio.create_task_group() as group:
            group.start_soon(load)
            await store.reading.wait()
            store.generation += 1  # e.g. the listener reconnected while the row was read
            store.gate.set()
            store.gate = None
        assert texts(results[0])[-1] == "v1"  # answered, but not cached:
        insert_rows(database, [("p", "a", "v2")])
        async with Supervisor([files.child_spec()]):
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v2"


async def test_an_entry_cached_in_an_earlier_generation_is_not_served(
    ws: Path, write: Writer, make_db: DbMaker
) -> None:
    database, store, files = controlled(write, make_db, [("p", "a", "v1")])
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            await files.load(ws, agent="a", project_id="p")
            insert_rows(database, [("p", "a", "v2")])
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v1"  # a hit
            store.generation += 1  # no event at all: the generation alone is enough
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v2"
            insert_rows(database, [("p", "a", "v3")])
            assert texts(await files.load(ws, agent="a", project_id="p"))[-1] == "v2"  # cached


# -- open_store ------------------------------------------------------------------------------


def test_a_path_opens_the_sqlite_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store("relative.db", timeout=2.0)
    assert isinstance(store, SqliteInstructionStore)
    assert store.path == tmp_path / "relative.db"  # absolute: a later chdir does not move it
    assert isinstance(open_store(tmp_path / "p.db", timeout=2.0), SqliteInstructionStore)


def test_url_schemes_are_recognised_and_paths_are_not() -> None:
    assert url_scheme("postgresql://user:secret@localhost/db") == "postgresql"
    assert url_scheme("Postgres://localhost/db") == "postgres"
    assert url_scheme("relative/path.db") is None
    assert url_scheme("/abs/postgresql:/x.db") is None
    assert url_scheme(Path("postgresql://x")) is None  # a Path is always a path


def test_an_unknown_scheme_is_a_typed_error_naming_the_supported_ones() -> None:
    with pytest.raises(InstructionStoreError, match=r"'mysql' is not supported.*postgresql://"):
        open_store("mysql://localhost/db", timeout=1.0)


def test_postgres_urls_go_to_the_postgres_backend() -> None:
    for scheme in ("postgresql", "postgres", "PostgreSQL"):
        factory = store_factory(scheme, kind="instructions", error=InstructionStoreError)
        assert factory.__name__ == "PostgresInstructionStore"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by the test are undone after it."""
    monkeypatch.setattr(
        "harness.stores._registry._REGISTRY",
        {kind: dict(found) for kind, found in _REGISTRY.items()},
    )


@pytest.mark.usefixtures("registry")
def test_a_backend_whose_module_is_missing_says_it_is_not_available() -> None:
    register_store("nosuch", "harness_no_such_module_x:Store", kind="instructions")
    with pytest.raises(InstructionStoreError, match="nosuch:// stores are not available") as e:
        open_store("nosuch://host/db", timeout=1.0)
    assert isinstance(e.value, HarnessError)


@pytest.mark.usefixtures("registry")
def test_a_backend_whose_driver_is_missing_names_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "harness_test_backend_x.py").write_text(
        "import harness_driver_not_installed_x\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    register_store("drv", "harness_test_backend_x:Store", kind="instructions")
    with pytest.raises(InstructionStoreError, match="pip install harness_driver_not_installed_x"):
        open_store("drv://host/db", timeout=1.0)
    sys.modules.pop("harness_test_backend_x", None)


@pytest.mark.usefixtures("registry")
def test_a_registered_factory_gets_the_url_and_the_timeout(make_db: DbMaker) -> None:
    database = make_db([])
    calls: list[tuple[str, float]] = []

    def factory(url: str, *, timeout: float, heartbeat: float) -> InstructionStore:
        calls.append((url, timeout))
        return SqliteInstructionStore(database, timeout=timeout)

    register_store("mem", factory, kind="instructions")
    files = InstructionFiles(InstructionFilesSettings(database_timeout=3.5), database="mem://x")
    assert calls == [("mem://x", 3.5)]
    assert files.database == database  # the store's file, as in the first release


async def test_instruction_files_closes_only_a_store_it_opened(make_db: DbMaker) -> None:
    given = ControlledStore(make_db([]))
    await InstructionFiles(SETTINGS, store=given).aclose()
    assert given.closed == 0


def test_database_and_store_together_are_refused(make_db: DbMaker) -> None:
    database = make_db([])
    with pytest.raises(ValueError, match=r"either database= .* or store=") as caught:
        InstructionFiles(SETTINGS, database=database, store=ControlledStore(database))
    assert isinstance(caught.value, HarnessError)
