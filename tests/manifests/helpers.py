"""Helpers for the manifest-store tests (import as ``tests.manifests.helpers``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from harness import Unit, assemble
from harness.prompt_assembler import AssembledPrompt


def sample_layers() -> dict[str, Any]:
    """Five non-trivial layers: sourced files, a blob to truncate, rules and state."""
    return {
        "identity": "You are the reviewer.",
        "instruction_files": [
            Unit("AGENTS.md", "Root rules.\n" * 20, source="AGENTS.md"),
            Unit("pkg/AGENTS.md", "Package rules.\n" * 5, source="pkg/AGENTS.md"),
            Unit("db:acme/reviewer", "Review like acme.", source="db:acme/reviewer"),
        ],
        "project_context": [
            Unit(".AGENTS/overview.md", "Overview. " * 200, source=".AGENTS/overview.md"),
            Unit(".AGENTS/glossary.md", "Glossary. " * 50, source=".AGENTS/glossary.md"),
        ],
        "business_rules": [Unit("rules:1", "Never log card numbers.")],
        "task_state": [Unit("goal", "Ship the refund endpoint."), Unit("next", "Tests.")],
    }


def timed_layers(files_at: datetime | None, read_at: datetime) -> dict[str, Any]:
    """Layers whose units carry read times: the identity, two instruction files read at
    ``files_at``, and a project_context overview read at ``read_at`` (a test adds the rest)."""
    return {
        "identity": "You are the reviewer.",
        "instruction_files": [
            Unit("AGENTS.md", "Root rules.", "AGENTS.md", version="v1", observed_at=files_at),
            Unit("db:acme", "Like acme.", "db:acme", observed_at=files_at),
        ],
        "project_context": [
            Unit(".AGENTS/a.md", "Overview. " * 30, ".AGENTS/a.md", observed_at=read_at),
        ],
    }


def build(
    layers: Mapping[str, Any] | None = None, budgets: Mapping[str, int] | None = None
) -> AssembledPrompt:
    return assemble(
        layers if layers is not None else sample_layers(),
        budgets=budgets if budgets is not None else {"project_context": 300},
    )


def sql(path: Path, statement: str, *values: object) -> list[tuple[Any, ...]]:
    """Run one statement on the store's file behind its back (to tamper, count, inspect)."""
    with closing(sqlite3.connect(path)) as connection:
        rows = connection.execute(statement, values).fetchall()
        connection.commit()
    return rows


def inputs_of(layer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A recorded layer's input units, kept or dropped, in input order."""
    entries = [*layer["units"], *layer["dropped_units"]]
    return sorted(entries, key=lambda entry: int(entry["index"]))
