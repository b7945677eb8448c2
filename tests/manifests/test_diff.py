"""diff: units added, removed, changed and trimmed differently, per layer; text and JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio

from harness import Unit, assemble
from harness.manifests import ManifestRecord, ManifestStore
from harness.manifests._diff import diff_manifests
from tests.manifests.helpers import build, sample_layers

RecordMaker = Callable[..., ManifestRecord]


def _manifest(make_record: RecordMaker, layers: dict[str, Any], **budgets: int) -> dict[str, Any]:
    prompt = build(layers, budgets={"project_context": 300, **budgets})
    return json.loads(json.dumps(make_record(prompt).manifest))


def test_identical_builds_have_no_differences(make_record: RecordMaker) -> None:
    a = _manifest(make_record, sample_layers())
    b = _manifest(make_record, sample_layers())
    change = diff_manifests(a, b)
    assert change.same and all(layer.same for layer in change.layers)
    assert [layer.name for layer in change.layers] == [
        "identity",
        "instruction_files",
        "project_context",
        "business_rules",
        "task_state",
    ]
    assert "no differences" in change.render()
    assert change.to_json()["same"] is True


def test_added_removed_changed_per_layer(make_record: RecordMaker) -> None:
    before = sample_layers()
    after = sample_layers()
    after["instruction_files"] = [
        Unit("AGENTS.md", "Root rules, edited.", source="AGENTS.md"),  # changed
        # pkg/AGENTS.md removed
        Unit("db:acme/reviewer", "Review like acme.", source="db:acme/reviewer"),
        Unit("web/AGENTS.md", "Web rules.", source="web/AGENTS.md"),  # added
    ]
    change = diff_manifests(_manifest(make_record, before), _manifest(make_record, after))
    files = change.layers[1]
    assert files.name == "instruction_files" and not change.same
    assert [unit.id for unit in files.added] == ["web/AGENTS.md"]
    assert [unit.id for unit in files.removed] == ["pkg/AGENTS.md"]
    assert [(a.id, b.id) for a, b in files.changed] == [("AGENTS.md", "AGENTS.md")]
    assert files.changed[0][0].sha256 != files.changed[0][1].sha256
    assert files.trimmed == () and files.settings == ()
    assert [layer.same for layer in change.layers] == [True, False, True, True, True]
    assert {c.name for c in change.context} == {"digest", "tokens"}
    text = change.render()
    assert "+ web/AGENTS.md" in text and "- pkg/AGENTS.md" in text and "~ AGENTS.md" in text
    data = change.to_json()
    json.dumps(data)
    [layer] = [x for x in data["layers"] if x["name"] == "instruction_files"]
    assert [u["id"] for u in layer["added"]] == ["web/AGENTS.md"]
    assert [u["id"] for u in layer["removed"]] == ["pkg/AGENTS.md"]
    assert [c["a"]["id"] for c in layer["changed"]] == ["AGENTS.md"]


def test_trimmed_differently_when_a_budget_changes(make_record: RecordMaker) -> None:
    a = _manifest(make_record, sample_layers())
    b = _manifest(make_record, sample_layers(), instruction_files=60, project_context=4000)
    change = diff_manifests(a, b)
    files, context = change.layers[1], change.layers[2]
    trimmed = {(x.id, x.fate, y.fate) for x, y in files.trimmed}
    assert ("AGENTS.md", "kept", "dropped") in trimmed
    assert all(y.reason for _, y in files.trimmed)  # the recorded reason comes along
    assert not files.added and not files.removed and not files.changed
    assert [(s.name, s.a, s.b) for s in files.settings] == [("budget", 8192, 60)]
    assert {(x.id, x.fate, y.fate) for x, y in context.trimmed} >= {
        (".AGENTS/overview.md", "truncated", "kept")
    }
    text = change.render()
    assert "! AGENTS.md" in text and "kept in A, dropped (budget)" in text
    assert "* budget" in text


def test_the_rendering_escapes_hostile_ids(make_record: RecordMaker) -> None:
    hostile = "evil\x1b[2J\nforged line \ud800"
    before = sample_layers()
    after = sample_layers()
    after["task_state"] = [*after["task_state"], Unit(hostile, "x")]
    change = diff_manifests(_manifest(make_record, before), _manifest(make_record, after))
    text = change.render()
    assert "\x1b" not in text and "forged line" in text
    assert all("forged line" not in line or "evil" in line for line in text.splitlines())
    text.encode("utf-8")  # printable: no lone surrogate reaches the terminal
    assert change.layers[4].added[0].id == hostile  # the JSON form keeps the id as it is


async def test_store_diff_reads_both_builds(store_path: Path, make_record: RecordMaker) -> None:
    a = make_record(build())
    layers = sample_layers()
    layers["business_rules"] = []
    b = make_record(build(layers))
    with anyio.fail_after(10):
        async with ManifestStore.open(store_path, create=True) as store:
            await store.record(a, b)
            change = await store.diff(a.manifest_id, b.manifest_id)
    assert change.a == a.manifest_id and change.b == b.manifest_id
    assert [u.id for u in change.layers[3].removed] == ["rules:1"]


def test_a_unit_gone_stale_is_trimmed_differently_with_its_reason(
    make_record: RecordMaker,
) -> None:
    observed = datetime(2026, 12, 1, 11, 0, tzinfo=UTC)
    layers = sample_layers()
    layers["task_state"] = [Unit("ci", "green", observed_at=observed, max_age=600.0)]
    fresh = assemble(layers, now=observed + timedelta(minutes=5))
    stale = assemble(layers, now=observed + timedelta(hours=1))
    a = json.loads(json.dumps(make_record(fresh).manifest))
    b = json.loads(json.dumps(make_record(stale).manifest))
    change = diff_manifests(a, b)
    [(before, after)] = change.layers[4].trimmed
    assert (before.fate, after.fate, after.reason) == ("kept", "dropped", "stale")
    assert "kept in A, dropped (stale) in B" in change.render()
    assert {c.name for c in change.context} >= {"now", "digest"}
