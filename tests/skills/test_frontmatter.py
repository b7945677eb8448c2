"""``parse_skill`` and the configuration keys of skills: the specification's fields, read
with PyYAML's base loader, and ``skills_dirs`` / ``user_skills_dirs`` as top-level keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness import ConfigError, HarnessConfig, load_config
from harness.skills._frontmatter import parse_skill, split_frontmatter


def test_the_frontmatter_ends_at_the_closing_line_only() -> None:
    text = "---\nname: a\ndescription: 'x --- y'\n---\nbody\n---\nmore body\n"
    parsed, notes = parse_skill(text, "a")
    assert parsed is not None and notes == []
    assert parsed.description == "x --- y"
    assert parsed.body == "body\n---\nmore body"


def test_crlf_and_a_closing_line_at_the_end_of_the_file() -> None:
    parsed, _ = parse_skill("---\r\nname: a\r\ndescription: d\r\n---", "a")
    assert parsed is not None and (parsed.name, parsed.description, parsed.body) == ("a", "d", "")
    assert split_frontmatter("--- \nname: a\n---  \nb") == ("name: a\n", "b", 2)


def test_every_scalar_is_a_string_as_written() -> None:
    text = "---\nname: a\ndescription: yes\nmetadata:\n  version: 1.10\n  on: no\n---\n"
    parsed, notes = parse_skill(text, "a")
    assert parsed is not None and notes == []
    assert parsed.description == "yes"
    assert parsed.metadata == {"version": "1.10", "on": "no"}


def test_wrong_types_are_dropped_with_a_warning() -> None:
    text = (
        "---\nname: a\ndescription: d\nlicense: [MIT]\nmetadata:\n  nested: {x: y}\n"
        "allowed-tools: [Read, Grep]\n---\n"
    )
    parsed, notes = parse_skill(text, "a")
    assert parsed is not None
    assert parsed.license is None and parsed.metadata == {}
    assert parsed.allowed_tools == ("Read", "Grep")
    assert sorted(note.level for note in notes) == ["strict", "warn", "warn"]


@given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1))
def test_a_description_is_never_shortened(description: str) -> None:
    quoted = description.replace("\\", "\\\\").replace('"', '\\"')
    parsed, _ = parse_skill(f'---\nname: a\ndescription: "{quoted}"\n---\n', "a")
    if description.strip():
        assert parsed is not None and parsed.description == description.strip()


def test_config_keys_are_top_level_toml_keys(tmp_path: Path) -> None:
    path = tmp_path / "harness.toml"
    path.write_text(
        'skills_dirs = [".claude/skills/", "tools/skills"]\n'
        f'user_skills_dirs = ["{tmp_path}/mine"]\n'
    )
    config = load_config(path)
    assert config.skills_dirs == (".claude/skills", "tools/skills")
    assert config.user_skills_dirs == (f"{tmp_path}/mine",)
    assert HarnessConfig().user_skills_dirs == ()
    for bad in ('skills_dirs = ["../up"]', 'user_skills_dirs = ["relative"]'):
        path.write_text(bad + "\n")
        with pytest.raises(ConfigError, match="skills_dirs"):
            load_config(path)
