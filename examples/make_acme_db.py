"""Regenerate ``examples/acme.db``: the example's ``agent_instructions`` rows.

The database is committed so the README command needs no setup; this script is how it was
made. It is deterministic (fixed rows, fixed timestamps, ``VACUUM``), so re-running it gives
the same rows. Usage: ``python examples/make_acme_db.py [OUTPUT]``.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

SCHEMA = """
CREATE TABLE agent_instructions (
    project_id TEXT NOT NULL,
    agent_slug TEXT NOT NULL,
    content    TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, agent_slug)
)
"""

ROWS = [
    (
        "acme",
        "reviewer",
        "# Reviewer instructions for Acme (from the database)\n\n"
        "- Block any change that edits generated code or the frozen v2 API schema.\n"
        "- Ask for a contract test for every new or changed endpoint.\n"
        "- Quote the rule you rely on, with its file, in every review comment.",
        "2026-01-15T09:30:00Z",
    ),
    (
        "acme",
        "implementer",
        "# Implementer instructions for Acme (from the database)\n\n"
        "- Open a draft PR early; keep each commit green.\n"
        "- Touch the ledger only through LedgerWriter.",
        "2026-01-15T09:30:00Z",
    ),
]


def build(path: Path) -> None:
    """Write a fresh database at ``path`` (replacing any existing file)."""
    path.unlink(missing_ok=True)
    connection = sqlite3.connect(path)
    try:
        connection.execute(SCHEMA)
        connection.executemany("INSERT INTO agent_instructions VALUES (?, ?, ?, ?)", ROWS)
        connection.commit()
        connection.execute("VACUUM")
    finally:
        connection.close()


if __name__ == "__main__":
    default = Path(__file__).resolve().parent / "acme.db"
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    build(target)
    print(f"wrote {target}")
