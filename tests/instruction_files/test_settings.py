"""InstructionFilesSettings: defaults, immutability, validation (the [instruction_files] table)."""

from __future__ import annotations

import tomllib

import pydantic
import pytest

from harness import InstructionFilesSettings


def test_defaults() -> None:
    settings = InstructionFilesSettings()
    assert settings.names == ("AGENTS.override.md", "AGENTS.md")
    for vendored in (
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".tox",
    ):
        assert vendored in settings.vendored
    assert ".git" not in settings.vendored  # .git is pruned unconditionally, not by this list
    assert settings.max_bytes > 0 and settings.cache_maxsize > 0
    assert settings.cache_ttl is None and settings.walk_threads is None


def test_frozen() -> None:
    settings = InstructionFilesSettings()
    with pytest.raises(pydantic.ValidationError):
        settings.max_bytes = 1


def test_from_a_toml_table() -> None:
    table = tomllib.loads(
        """
        [instruction_files]
        names = ["CLAUDE.md", "AGENTS.md"]
        vendored = ["node_modules", "third_party"]
        max_bytes = 4096
        cache_ttl = 30.0
        database_timeout = 0.5
        """
    )["instruction_files"]
    settings = InstructionFilesSettings.model_validate(table)
    assert settings.names == ("CLAUDE.md", "AGENTS.md")
    assert settings.vendored == ("node_modules", "third_party")
    assert (settings.max_bytes, settings.cache_ttl, settings.database_timeout) == (4096, 30.0, 0.5)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("names", [], "at least 1"),
        ("names", ["docs/AGENTS.md"], "plain file name"),
        ("names", [".."], "plain file name"),
        ("names", ["AGENTS.md", "AGENTS.md"], "twice"),
        ("vendored", ["a/b"], "plain file name"),
        ("max_bytes", 0, "greater than 0"),
        ("cache_maxsize", 0, "greater than 0"),
        ("cache_ttl", 0, "greater than 0"),
        ("database_timeout", -1, "greater than or equal to 0"),
        ("walk_threads", 0, "greater than or equal to 1"),
        ("unknown_option", 1, "Extra inputs are not permitted"),
    ],
)
def test_invalid_values_are_rejected_with_a_reason(field: str, value: object, message: str) -> None:
    with pytest.raises(pydantic.ValidationError, match=message):
        InstructionFilesSettings.model_validate({field: value})
