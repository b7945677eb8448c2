"""Fixtures for the manifest-store tests: real prompts, real SQLite files."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.manifests import ManifestRecord
from harness.prompt_assembler import AssembledPrompt
from tests.manifests.helpers import build

RecordMaker = Callable[..., ManifestRecord]


@pytest.fixture
def make_record() -> RecordMaker:
    """``make_record(prompt=None, agent=..., project_id=..., **context)``: a record to store."""

    def _make(
        prompt: AssembledPrompt | None = None,
        *,
        agent: str = "reviewer",
        project_id: str | None = "acme",
        workspace: str = "/srv/acme",
        tokenizer_spec: str | None = "approximate",
    ) -> ManifestRecord:
        return ManifestRecord.of(
            prompt if prompt is not None else build(),
            workspace=workspace,
            agent=agent,
            project_id=project_id,
            requested_at=datetime.now(UTC),
            tokenizer_spec=tokenizer_spec,
        )

    return _make


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "manifests.db"
