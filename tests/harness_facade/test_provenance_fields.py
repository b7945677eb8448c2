"""``Harness`` fills each unit's provenance: a file's sha256 and a
row's ``updated_at`` as ``version``, when it was read as ``observed_at``, and the build's
clock as ``now``, so caller units with ``max_age`` are judged fresh or stale."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

from harness import Harness, Unit
from harness.instruction_files import SCHEMA_SQL


async def test_versions_observed_times_and_now_are_recorded(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("root rules\n")
    (tmp_path / ".AGENTS").mkdir()
    (tmp_path / ".AGENTS" / "overview.md").write_text("overview\n")
    db = tmp_path / "i.db"
    with sqlite3.connect(db) as connection:
        connection.executescript(SCHEMA_SQL)
        connection.execute(
            "INSERT INTO agent_instructions VALUES ('p', 'reviewer', 'row', '2026-11-30T10:00:00Z')"
        )
    connection.close()
    before = datetime.now(UTC)
    old = before - timedelta(hours=2)
    with anyio.fail_after(30):
        async with Harness(database=db) as h:
            prompt = await h.build_prompt(
                tmp_path,
                agent="reviewer",
                project_id="p",
                task_state=[
                    Unit("fresh", "still true", observed_at=before, max_age=3600),
                    Unit("stale", "was true", observed_at=old, max_age=3600),
                ],
            )
    manifest = prompt.manifest()
    assert datetime.fromisoformat(manifest["now"]) >= before
    layers = {layer["name"]: layer for layer in manifest["layers"]}
    files = {unit["id"]: unit for unit in layers["instruction_files"]["units"]}
    assert files["AGENTS.md"]["version"] == hashlib.sha256(b"root rules\n").hexdigest()
    assert files["db:p/reviewer"]["version"] == "2026-11-30T10:00:00Z"
    for unit in files.values():
        assert datetime.fromisoformat(unit["observed_at"]) >= before
    [context] = layers["project_context"]["units"]
    assert context["version"] == hashlib.sha256(b"overview\n").hexdigest()
    assert datetime.fromisoformat(context["observed_at"]) >= before
    state = prompt.layer("task_state")
    assert state.kept == ("fresh",) and state.dropped == ("stale",)
    assert any("stale" in note for note in state.notes)
