"""The store seam: one classifier of locations, one registry per kind, drivers as extras."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness import HarnessError
from harness.instruction_files import InstructionStoreError
from harness.manifests import ManifestStore, ManifestStoreError
from harness.stores import StoreSchemeError, is_url, register_store, store_factory, url_scheme
from harness.stores._registry import _REGISTRY
from tests.cli import ACME, ACME_DB, ROOT


@pytest.fixture(autouse=True)
def _registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations made by a test are undone after it."""
    monkeypatch.setattr(
        "harness.stores._registry._REGISTRY",
        {kind: dict(found) for kind, found in _REGISTRY.items()},
    )


@pytest.mark.parametrize(
    ("location", "scheme"),
    [
        ("postgresql://app@db/engine", "postgresql"),
        ("Postgres://db/engine", "postgres"),
        ("mysql+async://db", "mysql+async"),
        ("records/manifests.db", None),
        ("/abs/postgresql:/x.db", None),
        ("C:/stores/x.db", None),
        (Path("postgresql://x"), None),  # a Path is always a path
    ],
)
def test_one_classifier_tells_urls_from_paths(location: str | Path, scheme: str | None) -> None:
    assert url_scheme(location) == scheme
    assert is_url(location) is (scheme is not None)


def test_every_kind_opens_postgresql_urls() -> None:
    for kind in ("instructions", "manifests"):
        for scheme in ("postgresql", "postgres"):
            assert store_factory(scheme, kind=kind, error=HarnessError) is not None


async def test_a_registered_manifest_backend_opens_its_urls(tmp_path: Path) -> None:
    from harness.manifests._sqlite import SqliteBackend

    opened: list[str] = []

    async def factory(url: str, *, create: bool, wait: float) -> SqliteBackend:
        opened.append(url)
        return await SqliteBackend.open(tmp_path / "m.db", create=create, wait=wait)

    register_store("memo", factory, kind="manifests")
    async with ManifestStore.open("memo://records", create=True) as store:
        assert await store.list() == []
    assert opened == ["memo://records"]


async def test_an_unknown_scheme_is_the_kind_s_own_error() -> None:
    with pytest.raises(
        ManifestStoreError, match=r"manifest store URL scheme 'mysql' is not supported"
    ):
        await ManifestStore.open("mysql://db/records")
    register_store("mysql", "some_module:Store", kind="instructions")  # one kind only
    with pytest.raises(ManifestStoreError, match="'mysql' is not supported"):
        await ManifestStore.open("mysql://db/records")


def test_registering_checks_the_kind_and_the_scheme() -> None:
    with pytest.raises(StoreSchemeError, match="kind 'tables' is unknown"):
        register_store("x", "m:F", kind="tables")  # type: ignore[arg-type]
    with pytest.raises(StoreSchemeError, match="not a URL scheme"):
        register_store("no scheme", "m:F", kind="pins")


def test_a_missing_driver_names_the_extra_that_installs_it(tmp_path: Path) -> None:
    (tmp_path / "harness_backend_needing_asyncpg_x.py").write_text(
        "import asyncpg.no_such_module_x\n", encoding="utf-8"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        register_store("pgx", "harness_backend_needing_asyncpg_x:Store", kind="instructions")
        with pytest.raises(InstructionStoreError, match=r"pip install 'harness\[postgres\]'"):
            store_factory("pgx", kind="instructions", error=InstructionStoreError)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("harness_backend_needing_asyncpg_x", None)


WITHOUT_ASYNCPG = textwrap.dedent(
    """
    import sys

    class NoAsyncpg:
        def find_spec(self, name, path=None, target=None):
            if name == "asyncpg" or name.startswith("asyncpg."):
                raise ModuleNotFoundError("No module named 'asyncpg'", name="asyncpg")
            return None

    sys.meta_path.insert(0, NoAsyncpg())
    import harness
    from harness.cli import main
    from harness.instruction_files import open_store
    try:
        open_store("postgresql://db/engine", timeout=1.0)
    except harness.HarnessError as exc:
        print("refused:", exc, file=sys.stderr)
    sys.exit(main(sys.argv[1:]))
    """
)


def test_the_base_install_works_without_asyncpg() -> None:
    """``import harness`` and the README's debug command need no PostgreSQL driver."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_ASYNCPG,
            "debug",
            str(ACME),
            "--agent",
            "reviewer",
            "--project-id",
            "acme",
            "--db",
            str(ACME_DB),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert "harness[postgres]" in done.stderr
    assert "reviewer" in done.stdout and "asyncpg" not in done.stdout
