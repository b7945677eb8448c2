"""The recording fast path (layer dicts shared between records, parts looked up by the very
layer dict, one reused JSON encoder) writes byte for byte what the slow path writes: every
record encoded alone, from an unshared deep copy, by a store that has seen nothing."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Unit, assemble
from harness.manifests import _codec as codec
from harness.manifests._record import ManifestRecord
from tests.manifests.helpers import timed_layers

START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def _layers(step: int, read_at: datetime, files_at: datetime, rules: int) -> dict[str, Any]:
    layers = timed_layers(files_at, read_at)
    glossary = Unit(".AGENTS/b.md", f"Glossary {step % 2}.", ".AGENTS/b.md", observed_at=read_at)
    layers["project_context"].append(glossary)
    layers["business_rules"] = [Unit(f"rules:{i}", f"Rule {i}.") for i in range(rules)]
    return layers


def _record(step: int, read_at: datetime, files_at: datetime, rules: int) -> ManifestRecord:
    prompt = assemble(
        _layers(step, read_at, files_at, rules), budgets={"project_context": 40}, now=read_at
    )
    return ManifestRecord.of(
        prompt,
        workspace="/srv/acme",
        agent="reviewer",
        project_id="acme",
        requested_at=read_at,
        tokenizer_spec="approximate",
        manifest_id=f"{step:026d}",
    )


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 3), st.booleans(), st.integers(0, 3), st.integers(1, 4)),
        min_size=1,
        max_size=12,
    )
)
def test_batches_match_records_encoded_alone_from_unshared_copies(
    steps: list[tuple[int, bool, int, int]],
) -> None:
    records = []
    files_at = START
    for step, (seconds, new_files, rules, size) in enumerate(steps):
        if new_files:
            files_at = START + timedelta(seconds=step)
        read_at = START + timedelta(seconds=seconds)
        records.append((_record(step, read_at, files_at, rules), size))
    written = codec.Written()
    rows, parts, texts = [], {}, {}
    at = 0
    for _, size in records:
        group = [record for record, _ in records[at : at + size]]
        at += size
        if not group:
            break
        batch = codec.encode(group, written)
        written.add(batch.parts)
        written.add(batch.texts)
        rows += batch.rows
        parts.update(batch.parts)
        texts.update(batch.texts)
    expected_rows, expected_parts, expected_texts = [], {}, {}
    for record, _ in records[:at]:
        alone = ManifestRecord(copy.deepcopy(dict(record.manifest)), dict(record.texts))
        batch = codec.encode([alone], codec.Written())
        expected_rows += batch.rows
        expected_parts.update(batch.parts)
        expected_texts.update(batch.texts)
    assert rows == expected_rows
    assert parts == expected_parts
    assert texts == expected_texts
    for row, (record, _) in zip(rows, records, strict=False):
        header = codec.inflate("test", row[-1], "row")
        manifest = codec.expand("test", header, parts)
        assert json.dumps(manifest, sort_keys=True) == json.dumps(record.manifest, sort_keys=True)


@settings(max_examples=30, deadline=None)
@given(fails=st.lists(st.booleans(), min_size=1, max_size=8))
def test_records_encoded_before_a_write_failed_are_sent_whole_after_it(fails: list[bool]) -> None:
    # A recorder encodes each build as it comes, while an earlier batch may still be failing:
    # which parts and texts a batch sends is decided when it is written, so a batch after a
    # failure (the store then assumes nothing stored) carries all its rows point to.
    written = codec.Written()
    stored: dict[str, bytes] = {}
    texts: dict[str, bytes] = {}
    ready = [codec.encode_one(_record(0, START, START, 2), written)]
    for step, fail in enumerate(fails, start=1):
        coming = [codec.encode_one(_record(step, START, START, 2), written)]  # before the outcome
        made = codec.batch(ready, written)
        if fail:
            written.clear()
            stored.clear()
            texts.clear()
        else:
            stored.update(made.parts)
            texts.update(made.texts)
            written.add(made.parts)
            written.add(made.texts)
            for row in made.rows:
                header = codec.inflate("test", row[-1], "row")
                manifest = codec.expand("test", header, stored)
                for layer in manifest["layers"]:
                    assert all(entry["sha256"] in texts for entry in layer["units"])
        ready = coming


def test_a_record_holds_the_prompts_manifest_and_context() -> None:
    for step in range(3):
        record = _record(step, START, START, 2)
        prompt = assemble(
            _layers(step, START, START, 2), budgets={"project_context": 40}, now=START
        )
        context = {k: v for k, v in record.manifest.items() if k not in prompt.manifest()}
        assert {**prompt.manifest(), **context} == record.manifest


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(value=_JSON)
def test_the_reused_encoder_writes_what_json_dumps_writes(value: Any) -> None:
    expected = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert codec._json(value) == expected.encode("utf-8", "surrogatepass")
