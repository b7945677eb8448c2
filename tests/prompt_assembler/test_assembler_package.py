"""The prompt assembler as a package (issues 11, 17, 18): the typed manifest and its JSON round
trip, the strategy registry, the one budget check, typed errors and the short ``repr``."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import HarnessConfig, Tokenizer
from harness.config import Envelope
from harness.errors import HarnessError
from harness.prompt_assembler import (
    DEFAULT_BUDGETS,
    LAYERS,
    SCHEMA_VERSION,
    AssemblyError,
    BudgetError,
    DroppedUnitManifest,
    LayerManifest,
    Manifest,
    ManifestSchemaError,
    Strategy,
    Unit,
    UnitManifest,
    assemble,
    merge_budgets,
)
from harness.prompt_assembler.strategies import implementation

TEXTS = st.text(max_size=40)
IDS = st.text(min_size=1, max_size=8)
OPTIONAL_TEXT = st.none() | TEXTS
TUPLE_OF_TEXT = st.lists(TEXTS, max_size=4).map(tuple)

MOMENTS = st.none() | st.datetimes(
    timezones=st.builds(
        timezone, st.integers(-14 * 60, 14 * 60).map(lambda m: timedelta(minutes=m))
    )
)
PROVENANCE: dict[str, Any] = {
    "index": st.integers(0, 10**6),
    "trust": st.sampled_from(["trusted", "untrusted"]),
    "version": OPTIONAL_TEXT,
    "observed_at": MOMENTS,
    "max_age": st.none() | st.floats(0, 1e12, allow_nan=False, allow_infinity=False),
}
UNIT_MANIFESTS = st.builds(
    UnitManifest,
    **PROVENANCE,
    id=IDS,
    source=OPTIONAL_TEXT,
    sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
    tokens=st.integers(0, 10**9),
    truncated=st.booleans(),
    kept_chars=st.none() | st.integers(0, 10**6),
).filter(lambda unit: unit.truncated or unit.kept_chars is None)
DROPPED_MANIFESTS = st.builds(
    DroppedUnitManifest, id=IDS, source=OPTIONAL_TEXT, sha256=TEXTS, reason=TEXTS, **PROVENANCE
)
LAYER_MANIFESTS = st.builds(
    LayerManifest,
    name=st.sampled_from(LAYERS),
    authority=st.sampled_from(["instruction", "information"]),
    strategy=st.sampled_from([s.value for s in Strategy]),
    budget=st.integers(0, 10**9),
    tokens=st.integers(0, 10**9),
    estimated=st.booleans(),
    truncated=st.booleans(),
    kept=TUPLE_OF_TEXT,
    dropped=TUPLE_OF_TEXT,
    notes=TUPLE_OF_TEXT,
    units=st.lists(UNIT_MANIFESTS, max_size=3).map(tuple),
    dropped_units=st.lists(DROPPED_MANIFESTS, max_size=3).map(tuple),
)
MANIFESTS = st.builds(
    Manifest,
    digest=TEXTS,
    tokens=st.integers(0, 10**9),
    estimated=st.booleans(),
    tokenizer=TEXTS,
    layer_order=st.just(LAYERS),
    layer_separator=TEXTS,
    unit_separator=TEXTS,
    truncation_marker=TEXTS,
    layers=st.lists(LAYER_MANIFESTS, max_size=5).map(tuple),
    now=MOMENTS,
)


@settings(max_examples=200, deadline=None)
@given(MANIFESTS)
def test_manifest_json_round_trip(manifest: Manifest) -> None:
    text = manifest.to_json()
    assert Manifest.from_json(text) == manifest
    assert Manifest.from_json(text.encode("utf-8")) == manifest
    assert Manifest.from_dict(json.loads(text)).to_json() == text  # canonical


UNITS = st.lists(
    st.tuples(st.sampled_from(LAYERS), st.text(max_size=30), st.none() | st.sampled_from(["a.md"])),
    max_size=10,
)


@settings(max_examples=100, deadline=None)
@given(UNITS, st.dictionaries(st.sampled_from(LAYERS), st.integers(0, 30)))
def test_an_assembly_manifest_round_trips_and_is_the_contract_dict(
    items: list[tuple[str, str, str | None]], budgets: dict[str, int]
) -> None:
    layers: dict[str, list[Unit]] = {}
    for index, (layer, text, source) in enumerate(items):
        layers.setdefault(layer, []).append(Unit(f"u{index}", text, source))
    prompt = assemble(layers, budgets=budgets)
    record = prompt.manifest_record()
    assert Manifest.from_json(record.to_json()) == record
    assert prompt.manifest() == record.to_dict() == json.loads(record.to_json())
    assert prompt.manifest()["manifest_version"] == record.schema_version == SCHEMA_VERSION
    assert [layer.name for layer in record.layers] == list(LAYERS)


def test_manifest_refuses_other_schemas_with_a_typed_error() -> None:
    data = assemble({"identity": "hi"}).manifest()
    for bad in ({**data, "manifest_version": 99}, {k: v for k, v in data.items() if k != "tokens"}):
        with pytest.raises(ManifestSchemaError) as caught:
            Manifest.from_dict(bad)
        assert isinstance(caught.value, HarnessError) and isinstance(caught.value, ValueError)
    with pytest.raises(ManifestSchemaError, match="must be JSON"):
        Manifest.from_json("{not json")
    with pytest.raises(ManifestSchemaError, match="JSON object"):
        Manifest.from_json("[]")


def test_manifest_records_are_frozen_values() -> None:
    record = assemble({"identity": "hi"}).manifest_record()
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.tokens = 3  # type: ignore[misc]
    assert hash(record) == hash(Manifest.from_json(record.to_json()))


def test_every_strategy_has_a_module_with_a_general_and_a_byte_path() -> None:
    for strategy in Strategy:
        impl = implementation(strategy)
        assert impl.trim.__module__ == f"harness.prompt_assembler.strategies.{strategy.value}"
        assert impl.trim_bytes is not None


def test_the_general_path_alone_gives_the_byte_path_result() -> None:
    # A tokenizer that counts like ApproximateTokenizer but is not one takes the general path.
    class Bytes4:
        name = "bytes4"
        estimated = True

        def count(self, text: str) -> int:
            return -(-len(text.encode()) // 4)

        def truncate(self, text: str, max_tokens: int) -> str:
            from harness import ApproximateTokenizer

            return ApproximateTokenizer().truncate(text, max_tokens)

    units = [Unit(f"u{i}", f"unit {i} " * (i + 1), source=f"{i}.md") for i in range(8)]
    for strategy in Strategy:
        layers = {"business_rules": units}
        options = {"budgets": {"business_rules": 40}, "strategies": {"business_rules": strategy}}
        fast = assemble(layers, **options)  # type: ignore[arg-type]
        general = assemble(layers, tokenizer=Bytes4(), **options)  # type: ignore[arg-type]
        assert fast.text == general.text
        assert fast.layer("business_rules") == general.layer("business_rules")


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "builtin", "message"),
    [
        (lambda: assemble({"persona": "x"}), ValueError, "unknown layer(s) 'persona'"),
        (lambda: assemble({"task_state": [Unit("a", "1"), Unit("a", "2")]}), ValueError, "'a'"),
        (lambda: assemble({}, strategies={"identity": "shuffle"}), ValueError, "'shuffle'"),
        (lambda: assemble({}, budgets={"identity": -1}), ValueError, "cannot be negative"),
        (lambda: assemble({}, budgets={"identity": True}), ValueError, "must be an int"),
        (lambda: assemble({"identity": 3}), TypeError, "expected a str"),  # type: ignore[dict-item]
        (lambda: assemble({"identity": [3]}), TypeError, "expected Unit"),  # type: ignore[list-item]
        (lambda: assemble([]), TypeError, "mapping"),  # type: ignore[arg-type]
        (lambda: assemble({}, tokenizer=object()), TypeError, "Tokenizer"),  # type: ignore[arg-type]
        (lambda: Unit(1, "x"), TypeError, "Unit.id"),  # type: ignore[arg-type]
    ],
)
def test_every_deliberate_error_is_a_harness_error_and_its_builtin(
    call: object, builtin: type[Exception], message: str
) -> None:
    with pytest.raises(builtin, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        call()  # type: ignore[operator]
    assert isinstance(caught.value, HarnessError)


def test_a_duck_typed_tokenizer_is_accepted_and_a_bad_empty_count_refused() -> None:
    class Words:
        name = "words"
        estimated = True

        def __init__(self, empty: int = 0) -> None:
            self.empty = empty

        def count(self, text: str) -> int:
            return len(text.split()) or self.empty

        def truncate(self, text: str, max_tokens: int) -> str:
            return " ".join(text.split()[:max_tokens])

    assert isinstance(Words(), Tokenizer)
    assert assemble({"identity": "a b c"}, tokenizer=Words()).tokens == 3
    with pytest.raises(AssemblyError, match="counts the empty string as 1"):
        assemble({}, tokenizer=Words(empty=1))


# --- the one budget check -------------------------------------------------------------------


def test_merge_budgets_is_the_one_rule_for_config_and_per_call_budgets() -> None:
    envelope = Envelope(
        model_context_limit=1000, reserved_response=100, reserved_tool_observations=0
    )
    assert merge_budgets({"identity": 10}, {}, envelope=envelope) == {"identity": 10}
    with pytest.raises(BudgetError, match="over by 25284 tokens; lower"):
        merge_budgets({"identity": 1800}, envelope=envelope)
    # The same total refused by a config file, with the config's hint.
    with pytest.raises(ValueError, match=r"over by 25284 tokens; lower \[budgets\]"):
        HarnessConfig(envelope=envelope, budgets={**DEFAULT_BUDGETS, "identity": 1800})
    assert issubclass(BudgetError, HarnessError) and issubclass(BudgetError, ValueError)


# --- repr -----------------------------------------------------------------------------------


def test_repr_is_one_short_summary_line() -> None:
    rules = [Unit(f"rule-{i}", "Refunds need approval. " * 40) for i in range(8)]
    prompt = assemble(
        {"identity": "You are the reviewer.", "business_rules": rules},
        budgets={"business_rules": 1500},
    )
    assert len(prompt.text) > 5000
    text = repr(prompt)
    assert "\n" not in text and len(text) < 250, text
    assert f"{prompt.tokens} tokens" in text
    assert prompt.digest[:12] in text
    assert "business_rules 6/2" in text and "identity 1/0" in text


# --- the fast constructors ------------------------------------------------------------------


def test_the_fast_constructors_give_what_the_constructors_give() -> None:
    import dataclasses

    from harness.prompt_assembler import LayerReport
    from harness.prompt_assembler._prompt import new_prompt
    from harness.prompt_assembler._values import fast_new, new_report

    prompt = assemble({"identity": "You are the reviewer.", "task_state": [Unit("t", "x")]})
    for report in prompt.layers:
        values = [getattr(report, f.name) for f in dataclasses.fields(report)]
        assert type(report) is LayerReport
        assert new_report(*values) == LayerReport(*values) == report
        assert vars(new_report(*values)) == vars(LayerReport(*values))
    fields = [getattr(report, f.name) for f in dataclasses.fields(report)]
    values = [getattr(prompt, f.name) for f in dataclasses.fields(prompt)]
    rebuilt = new_prompt(*values)
    positional = [f.name for f in dataclasses.fields(prompt) if not f.kw_only]
    keywords = {f.name: getattr(prompt, f.name) for f in dataclasses.fields(prompt) if f.kw_only}
    assert vars(rebuilt) == vars(type(prompt)(*values[: len(positional)], **keywords))
    assert rebuilt.manifest() == prompt.manifest()
    # A field added and not passed fails loudly instead of leaving an attribute unset.
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'borrowed'"):
        new_report(*fields[:-1])
    with pytest.raises(TypeError, match="validates"):
        fast_new(Unit)
