"""The top-level package re-exports exactly the public API, lazily, and its two lists agree."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import harness


def _type_checking_names() -> set[str]:
    tree = ast.parse(Path(harness.__file__).read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    names.update(alias.asname or alias.name for alias in stmt.names)
    return names


def test_the_type_checking_block_and_the_lazy_table_list_the_same_names() -> None:
    assert _type_checking_names() == set(harness.__all__)


def test_every_public_name_resolves_to_its_defining_object() -> None:
    for name in harness.__all__:
        value = getattr(harness, name)
        module = importlib.import_module(harness._EXPORTS[name])
        expected = module if harness._EXPORTS[name] == f"harness.{name}" else getattr(module, name)
        assert value is expected, name
    assert set(harness.__all__) <= set(dir(harness))


def test_contract_names_are_importable_from_the_top_level() -> None:
    contract = {
        "Tokenizer", "ApproximateTokenizer", "TiktokenTokenizer", "LAYERS", "Strategy",
        "DEFAULT_STRATEGIES", "DEFAULT_BUDGETS", "Unit", "assemble", "LayerReport",
        "AssembledPrompt", "PHASES", "Halt", "Hooks", "HookOutcome", "InstructionSource",
        "InstructionSet", "InstructionFiles", "InstructionStoreError", "Harness",
        "HarnessConfig", "UnknownAgent", "load_config", "debug",
    }  # fmt: skip
    assert contract <= set(harness.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        harness.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
