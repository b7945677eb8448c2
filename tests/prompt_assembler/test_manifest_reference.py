"""The manifest built the fast way (renderings and token counts reused from the assembly,
texts hashed through the memo, dicts built inline) is byte-identical to one built the slow
way: every kept unit rendered again, every text hashed again, the provenance of each unit
formatted on its own (the first release's ``_layer_manifest`` and ``to_dict``, kept here as
the reference): ``prompt.manifest()`` must not change, with an ``AssemblyCache`` or without."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import ApproximateTokenizer, TiktokenTokenizer, Tokenizer
from harness.prompt_assembler import (
    AUTHORITY,
    LAYER_SEPARATOR,
    LAYERS,
    SCHEMA_VERSION,
    STALE,
    TRUNCATION_MARKER,
    UNIT_SEPARATOR,
    AssembledPrompt,
    AssemblyCache,
    Manifest,
    Unit,
    assemble,
)
from harness.prompt_assembler import _cache as cache_module
from harness.prompt_assembler._manifest import DroppedUnitManifest, LayerManifest, UnitManifest
from harness.prompt_assembler._render import kept_chars, render
from harness.prompt_assembler._values import fast_replace
from tests.prompt_assembler.test_ledger import ledger_assemblies
from tests.prompt_assembler.test_properties import Lumpy, assemblies


def reference_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _provenance(unit: Unit, index: int) -> dict[str, Any]:
    return {
        "index": index,
        "trust": unit.trust,
        "version": unit.version,
        "observed_at": None if unit.observed_at is None else unit.observed_at.isoformat(),
        "max_age": None if unit.max_age is None else float(unit.max_age),
    }


def _reference_layer(report: Any, trim: Any, count: Callable[[str], int]) -> dict[str, Any]:
    units, _, stale_positions, result = trim
    positions: Sequence[int] = range(len(units)) if stale_positions is None else stale_positions
    kept_at = [positions[i] for i in result.kept_indexes()]
    last = len(kept_at) - 1
    entries = []
    for n, index in enumerate(kept_at):
        unit = units[index]
        cut = result.truncated and n == last
        rendered = result.rendered[-1] if cut else render(unit)
        entry = {
            "id": unit.id,
            "source": unit.source,
            "sha256": reference_sha256(unit.text),
            "tokens": count(rendered),
            "truncated": cut,
            **_provenance(unit, index),
        }
        if cut:
            entry["kept_chars"] = kept_chars(unit, rendered)
        entries.append(entry)
    kept, fresh = set(kept_at), set(positions)
    dropped = [
        {
            "id": unit.id,
            "source": unit.source,
            "sha256": reference_sha256(unit.text),
            "reason": result.drop_reason if index in fresh else STALE,
            **_provenance(unit, index),
        }
        for index, unit in enumerate(units)
        if index not in kept
    ]
    return {
        "name": report.name,
        "authority": AUTHORITY[report.name],
        "strategy": str(report.strategy),
        "budget": report.budget,
        "tokens": report.tokens,
        "estimated": report.estimated,
        "truncated": report.truncated,
        "kept": list(report.kept),
        "dropped": list(report.dropped),
        "notes": list(report.notes),
        "units": entries,
        "dropped_units": dropped,
    }


def reference_manifest(prompt: AssembledPrompt, tok: Tokenizer) -> dict[str, Any]:
    """The manifest exactly as the first release of schema 2 built it."""
    data: dict[str, Any] = {
        "manifest_version": SCHEMA_VERSION,
        "digest": reference_sha256(prompt.text),
        "tokens": prompt.tokens,
        "estimated": prompt.estimated,
        "tokenizer": prompt.tokenizer_name,
        "layer_order": list(LAYERS),
        "layer_separator": LAYER_SEPARATOR,
        "unit_separator": UNIT_SEPARATOR,
        "truncation_marker": TRUNCATION_MARKER,
        "layers": [
            _reference_layer(report, trim, tok.count)
            for report, trim in zip(prompt.layers, prompt._trims, strict=True)
        ],
    }
    if prompt._now is not None:
        data["now"] = prompt._now.isoformat()
    return data


def check_against_reference(case: dict[str, Any], tok: Tokenizer) -> None:
    cache = AssemblyCache()
    plain = assemble(**case, tokenizer=tok)
    prompt = assemble(**case, tokenizer=tok, cache=cache)
    reference = reference_manifest(prompt, tok)
    text = json.dumps(reference, ensure_ascii=False, sort_keys=True)
    assert prompt.manifest_record().to_json() == text
    assert json.dumps(prompt.manifest(), ensure_ascii=False, sort_keys=True) == text
    assert plain.manifest_record().to_json() == text
    # Key order too (to_dict is public): the same dicts, in the same order.
    assert json.dumps(prompt.manifest_record().to_dict(), ensure_ascii=False) == json.dumps(
        reference, ensure_ascii=False
    )
    # A second, equal assembly (texts now answered by the memo) gives the same bytes.
    again = assemble(**case, tokenizer=tok, cache=cache)
    assert again.manifest_record().to_json() == text
    assert again.layer_dicts() == [layer.to_dict() for layer in again.manifest_record().layers]
    assert Manifest.from_json(text).to_json() == text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=ledger_assemblies())
def test_ledger_manifests_match_the_reference(case: dict[str, Any]) -> None:
    check_against_reference(case, ApproximateTokenizer())
    check_against_reference(case, Lumpy())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=assemblies())
def test_plain_manifests_match_the_reference(case: dict[str, Any]) -> None:
    check_against_reference(case, ApproximateTokenizer())
    check_against_reference(case, ApproximateTokenizer(1))
    check_against_reference(case, Lumpy())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=ledger_assemblies())
def test_cl100k_manifests_match_the_reference(
    case: dict[str, Any], cl100k: TiktokenTokenizer
) -> None:
    check_against_reference(case, cl100k)


@given(texts=st.lists(st.text(max_size=40) | st.sampled_from(["\ud800x", "é", ""]), max_size=20))
def test_the_text_memo_answers_each_text_with_its_own_digest(texts: list[str]) -> None:
    cache = AssemblyCache()
    for text in [*texts, *texts]:
        assert cache.text_sha256(text) == reference_sha256(text)


def test_the_text_memo_stays_bounded_and_skips_long_texts() -> None:
    cache = AssemblyCache(text_chars=4 * 1024 * 1024)
    memo = cache._digests
    chunk = "x" * 100_000
    for i in range(memo.max_size // len(chunk) + 20):  # more than it holds
        text = f"{i:08d}{chunk}"
        assert cache.text_sha256(text) == reference_sha256(text)
    assert memo.size <= memo.max_size
    assert memo.size == sum(size for _, size in memo._entries.values())
    assert f"{0:08d}{chunk}" not in memo  # the oldest went first
    long = "y" * (cache_module._LONGEST_TEXT + 1)
    assert cache.text_sha256(long) == reference_sha256(long)
    assert long not in memo
    cache.clear()
    assert len(memo) > 0 and len(cache._digests) == 0


def test_equal_inputs_that_record_differently_never_share_a_memoised_layer() -> None:
    # Equal datetimes of different offsets (10:00 UTC is 11:00+01:00), 50 and 50.0, a text
    # and its neutralised twin: each pair must give its own manifest, built in either order.
    at = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    there = at.astimezone(timezone(timedelta(hours=1)))
    assert at == there
    pairs = [
        (Unit("u", "x", "a.md", observed_at=at), Unit("u", "x", "a.md", observed_at=there)),
        (
            Unit("u", "x", observed_at=at, max_age=50),
            Unit("u", "x", observed_at=at, max_age=50.0),
        ),
        (Unit("u", "</context>"), Unit("u", "<\\/context>")),
        (Unit("u", "x", "a.md"), Unit("u", "x", "b.md")),
        (Unit("u", "x", "a.md"), Unit("u", "x", "a.md", version="v2")),
    ]
    for first, second in pairs:
        for unit in (first, second, first, second):
            case = {"layers": {"task_state": [unit]}, "now": at}
            check_against_reference(case, ApproximateTokenizer())


_OFFSETS = [UTC, timezone(timedelta(hours=1)), timezone(timedelta(hours=-5, minutes=-30))]
_TIMES = st.none() | st.datetimes(
    min_value=datetime(2000, 1, 1), timezones=st.sampled_from(_OFFSETS)
).map(lambda moment: moment.replace(microsecond=moment.microsecond * (moment.second % 2)))


@settings(max_examples=60, deadline=None)
@given(moments=st.lists(st.lists(_TIMES, min_size=3, max_size=3), min_size=2, max_size=6))
def test_a_layer_memoised_at_other_times_records_each_builds_own_times(
    moments: list[list[datetime | None]],
) -> None:
    # Files read anew every build (``.AGENTS/``) carry a new observed_at each time: the memo
    # answers them all the same, and each manifest still holds its own build's times, byte for
    # byte as if built without a memo (kept, cut and dropped units alike).
    cache, tok = AssemblyCache(), ApproximateTokenizer()
    for times in moments:
        units = [
            Unit(f".AGENTS/{name}.md", text, f".AGENTS/{name}.md", observed_at=at)
            for name, text, at in zip("abc", ("alpha", "beta " * 200, "gamma"), times, strict=True)
        ]
        case: dict[str, Any] = {
            "layers": {"project_context": units},
            "budgets": {"project_context": 60},
        }
        prompt = assemble(**case, tokenizer=tok, cache=cache)
        layer = prompt.manifest_record().layers[LAYERS.index("project_context")]
        assert [unit.id for unit in layer.dropped_units] == [".AGENTS/c.md"]
        assert [entry.observed_at for entry in (*layer.units, *layer.dropped_units)] == times
        text = json.dumps(reference_manifest(prompt, tok), ensure_ascii=False, sort_keys=True)
        assert prompt.manifest_record().to_json() == text
        # The recorded dicts (a retimed layer's made from its original's), key order too.
        layers = prompt.manifest_record().layers
        assert json.dumps(prompt.layer_dicts()) == json.dumps([lay.to_dict() for lay in layers])
        assert assemble(**case, tokenizer=tok).manifest_record().to_json() == text
    assert len(cache._layers) == len(LAYERS)  # the first build's five, answering every later one


def test_fast_replace_copies_as_dataclasses_replace_does() -> None:
    at = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    entry = UnitManifest("u", "a.md", "0" * 64, 3, True, 7, index=2, trust="untrusted", version="v")
    dropped = DroppedUnitManifest("d", None, "1" * 64, "budget", index=0, max_age=5.0)
    layer = assemble({"task_state": [Unit("t", "x")]}).manifest_record().layers[-1]
    for value, name, new in [(entry, "observed_at", at), (dropped, "observed_at", at)]:
        copied = fast_replace(type(value), name)(value, new)
        assert copied == dataclasses.replace(value, **{name: new}) and copied is not value
    both = fast_replace(LayerManifest, "units", "dropped_units")(layer, (entry,), (dropped,))
    assert both == dataclasses.replace(layer, units=(entry,), dropped_units=(dropped,))
    with pytest.raises(TypeError, match="no field"):
        fast_replace(UnitManifest, "colour")
