"""Layouts (the layers as data) and the ``fit_whole_units`` strategy."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import ApproximateTokenizer, HarnessConfig, load_config
from harness.prompt_assembler import (
    DEFAULT_BUDGETS,
    DEFAULT_LAYOUT,
    DEFAULT_STRATEGIES,
    EXTENDED_LAYOUT,
    LAYERS,
    UNIT_SEPARATOR,
    LayerSpec,
    Strategy,
    Unit,
    assemble,
    replay_inputs,
)
from harness.prompt_assembler._render import render, sha256
from harness.prompt_assembler.strategies import implementation

EXTENDED_NAMES = (
    "identity",
    "instruction_files",
    "skills",
    "tools",
    "project_context",
    "business_rules",
    "evidence",
    "task_state",
)


class Plain(ApproximateTokenizer):
    """Counts as bytes/4 but is not recognised as byte-exact: the general path runs."""

    def count(self, text: str) -> int:
        return super().count(text)


# --- layouts --------------------------------------------------------------------------------


def test_the_default_layout_is_the_five_layers_with_their_defaults() -> None:
    assert tuple(spec.name for spec in DEFAULT_LAYOUT) == LAYERS
    assert {spec.name: spec.strategy for spec in DEFAULT_LAYOUT} == dict(DEFAULT_STRATEGIES)
    assert {spec.name: spec.budget for spec in DEFAULT_LAYOUT} == dict(DEFAULT_BUDGETS)
    assert [s.name for s in DEFAULT_LAYOUT if s.authority == "instruction"] == [
        "identity",
        "instruction_files",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_LAYOUT[0].budget = 1  # type: ignore[misc]


def test_the_extended_layout_has_eight_layers_with_their_strategies() -> None:
    specs = {spec.name: spec for spec in EXTENDED_LAYOUT}
    assert tuple(specs) == EXTENDED_NAMES
    for name in ("instruction_files", "skills"):
        assert (specs[name].authority, specs[name].strategy) == (
            "instruction",
            Strategy.FIT_WHOLE_UNITS,
        )
    for name in ("tools", "evidence"):
        assert (specs[name].authority, specs[name].strategy) == (
            "information",
            Strategy.DROP_WHOLE_UNITS,
        )
    assert (specs["skills"].budget, specs["tools"].budget, specs["evidence"].budget) == (
        4000,
        8000,
        16000,
    )
    for name in ("identity", "project_context", "business_rules", "task_state"):
        assert specs[name].strategy is DEFAULT_STRATEGIES[name]


def test_reports_follow_the_layout_in_its_order() -> None:
    prompt = assemble(
        {"evidence": "the log says 500", "identity": "You are the reviewer.", "tools": "grep"},
        layout=EXTENDED_LAYOUT,
    )
    assert tuple(report.name for report in prompt.layers) == EXTENDED_NAMES
    assert prompt.text == "You are the reviewer.\n\ngrep\n\nthe log says 500"
    assert prompt.manifest()["layer_order"] == list(EXTENDED_NAMES)
    assert [layer["authority"] for layer in prompt.manifest()["layers"]][:4] == [
        "instruction",
        "instruction",
        "instruction",
        "information",
    ]
    mine = (
        LayerSpec("task_state", Strategy.DROP_WHOLE_UNITS, 10),
        LayerSpec("identity", Strategy.KEEP_OR_DROP, 10, "instruction"),
    )
    assert assemble({"identity": "I", "task_state": "T"}, layout=mine).text == "T\n\nI"


def test_names_budgets_and_strategies_are_checked_against_the_layout() -> None:
    with pytest.raises(ValueError, match=r"'skills'.*the layout's layers: .*'identity'"):
        assemble({"skills": "x"})
    with pytest.raises(ValueError, match="budget for unknown layer 'evidence'"):
        assemble({}, budgets={"evidence": 3})
    with pytest.raises(ValueError, match="strategy for unknown layer 'tools'"):
        assemble({}, strategies={"tools": "keep_or_drop"})
    assemble({"skills": "x"}, layout=EXTENDED_LAYOUT, budgets={"evidence": 3})
    with pytest.raises(ValueError, match="twice"):
        assemble({}, layout=(DEFAULT_LAYOUT[0], DEFAULT_LAYOUT[0]))
    with pytest.raises(ValueError, match="unknown strategy 'nope'"):
        LayerSpec("x", "nope", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="budget must be an int >= 0"):
        LayerSpec("x", Strategy.KEEP_OR_DROP, -1)


def test_untrusted_units_are_refused_in_every_instruction_layer() -> None:
    hostile = Unit("web", "do this", trust="untrusted")
    with pytest.raises(ValueError, match=r"'skills'.*instruction layer"):
        assemble({"skills": [hostile]}, layout=EXTENDED_LAYOUT)
    assert assemble({"evidence": [hostile]}, layout=EXTENDED_LAYOUT).layer("evidence").kept


def test_a_build_of_another_layout_replays_from_its_manifest() -> None:
    units = [Unit("a", "alpha"), Unit("b", "beta " * 40)]
    prompt = assemble({"skills": units}, layout=EXTENDED_LAYOUT, budgets={"skills": 20})
    texts = {sha256(unit.text): unit.text for unit in units}
    inputs = replay_inputs(prompt.manifest_record(), texts)
    skills = dataclasses.replace(EXTENDED_LAYOUT[2], budget=20)
    assert inputs.problems == ()
    assert inputs.layout == (*EXTENDED_LAYOUT[:2], skills, *EXTENDED_LAYOUT[3:])
    assert inputs.assemble().digest == prompt.digest


def test_the_config_reads_a_layout_table(tmp_path: Path) -> None:
    assert HarnessConfig().layout == DEFAULT_LAYOUT
    file = tmp_path / "harness.toml"
    file.write_text(
        '[envelope]\nmodel_context_limit = 131072\n[layout]\nlayers = ["identity", "skills", '
        '"instruction_files", "evidence", "task_state"]\n',
        encoding="utf-8",
    )
    config = load_config(file)
    assert [spec.name for spec in config.layout] == [
        "identity",
        "skills",
        "instruction_files",
        "evidence",
        "task_state",
    ]
    assert config.layout_budgets()["evidence"] == 16000
    assert HarnessConfig.model_validate(config.model_dump()).layout == config.layout
    file.write_text('[layout]\nlayers = ["identity", "memes"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"layout.*'memes'.*known layers: identity"):
        load_config(file)


# --- fit_whole_units ------------------------------------------------------------------------


def test_one_unit_too_big_no_longer_takes_the_smaller_ones_with_it() -> None:
    files = [Unit("root", "r" * 8_000), Unit("deep", "d" * 20_000)]  # 2k and 5k tokens
    for strategy, kept in ((Strategy.DROP_WHOLE_UNITS, ()), (Strategy.FIT_WHOLE_UNITS, ("root",))):
        layer = assemble(
            {"instruction_files": files},
            budgets={"instruction_files": 4_000},
            strategies={"instruction_files": strategy},
        ).layer("instruction_files")
        assert layer.kept == kept
    prompt = assemble(
        {"instruction_files": files},
        budgets={"instruction_files": 4_000},
        strategies={"instruction_files": "fit_whole_units"},
    )
    (layer,) = [
        entry for entry in prompt.manifest()["layers"] if entry["name"] == "instruction_files"
    ]
    assert [(u["id"], u["reason"]) for u in layer["dropped_units"]] == [("deep", "budget")]
    assert "'deep'" in layer["notes"][0]


def reference(units: list[Unit], budget: int, bpt: int) -> list[str]:
    """From the last unit to the first, each kept when it fits in what the kept ones leave."""
    kept: list[Unit] = []
    for unit in reversed(units):
        text = UNIT_SEPARATOR.join(render(u) for u in [unit, *kept])
        if -(-len(text.encode("utf-8", "surrogatepass")) // bpt) <= budget:
            kept.insert(0, unit)
    return [unit.id for unit in kept]


unit_lists = st.lists(
    st.builds(
        Unit,
        id=st.just(""),
        text=st.text(max_size=60) | st.sampled_from(["</context>", "é" * 9, ""]),
        source=st.none() | st.sampled_from(["a.md", "b/AGENTS.md"]),
    ),
    max_size=12,
).map(lambda units: [dataclasses.replace(u, id=f"u{i}") for i, u in enumerate(units)])


@settings(max_examples=300, deadline=None)
@given(units=unit_lists, budget=st.integers(0, 80), bpt=st.integers(1, 5))
def test_fit_whole_units_keeps_what_fits_from_the_most_authoritative_down(
    units: list[Unit], budget: int, bpt: int
) -> None:
    fast = assemble(
        {"task_state": units},
        budgets={"task_state": budget},
        strategies={"task_state": Strategy.FIT_WHOLE_UNITS},
        tokenizer=ApproximateTokenizer(bpt),
    )
    general = assemble(
        {"task_state": units},
        budgets={"task_state": budget},
        strategies={"task_state": Strategy.FIT_WHOLE_UNITS},
        tokenizer=Plain(bpt),
    )
    ids = [unit.id for unit in units]
    for prompt in (fast, general):
        layer = prompt.layer("task_state")
        assert list(layer.kept) == reference(units, budget, bpt)
        assert [i for i in ids if i not in layer.kept] == list(layer.dropped)
        assert layer.tokens == prompt.tokens == ApproximateTokenizer(bpt).count(layer.text)
        assert layer.tokens <= budget and not layer.truncated
        assert layer.text == UNIT_SEPARATOR.join(render(u) for u in units if u.id in layer.kept)
        (entry,) = [e for e in prompt.manifest()["layers"] if e["name"] == "task_state"]
        assert {u["reason"] for u in entry["dropped_units"]} <= {"budget"}
        assert [u["id"] for u in entry["units"]] == list(layer.kept)
        assert bool(layer.notes) == bool(layer.dropped)
    assert fast.text == general.text and fast.manifest() == general.manifest()


def test_the_strategy_is_one_registered_module() -> None:
    impl = implementation(Strategy.FIT_WHOLE_UNITS)
    assert impl.trim.__module__ == "harness.prompt_assembler.strategies.fit_whole_units"
    assert impl.trim_bytes is not None
