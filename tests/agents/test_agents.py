"""The agent roster: a validated, immutable slug -> identity-line map."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import UnknownAgent
from harness._agents import Roster
from harness.config import load_roster


def test_shipped_roster_has_one_line_per_slug() -> None:
    roster = load_roster()
    assert {"planner", "implementer", "reviewer", "tester"} <= set(roster)
    assert all(line and "\n" not in line for line in roster.values())
    assert roster.slugs == tuple(sorted(roster))


def test_unknown_agent_is_a_key_error_listing_known_slugs() -> None:
    roster = Roster({"b-agent": "B.", "a-agent": "A."})
    with pytest.raises(KeyError) as caught:
        roster["c-agent"]
    assert isinstance(caught.value, UnknownAgent)
    assert str(caught.value).startswith("unknown agent 'c-agent'; known agents: a-agent, b-agent.")
    assert caught.value.slug == "c-agent"
    assert caught.value.known == ("a-agent", "b-agent")


def test_extend_returns_a_new_roster() -> None:
    roster = Roster({"a": "A."})
    bigger = roster.extend({"b": "B.", "a": "A, replaced."})
    assert dict(roster) == {"a": "A."}
    assert dict(bigger) == {"a": "A, replaced.", "b": "B."}


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"Has Space": "x"}, "is invalid"),
        ({"ok": "two\nlines"}, "ONE line"),
        ({"ok": "   "}, "empty"),
        ({"ok": 3}, "must be a string"),
    ],
)
def test_bad_entries_are_rejected(entries: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Roster(entries)  # type: ignore[arg-type]


def test_a_roster_equals_a_mapping_with_the_same_entries() -> None:
    roster = Roster({"a": "You are a."})
    same = {"a": "You are a."}
    assert roster == same
    assert same.__eq__(roster) is NotImplemented and (same == roster)  # reflected to Roster
    assert roster != {"a": "You are b."}
    assert hash(roster) == hash(Roster({"a": "You are a."}))


def test_an_edited_roster_file_is_read_again(tmp_path: Path) -> None:
    roster_file = tmp_path / "agents.toml"
    roster_file.write_text('reviewer = "You review."\n', encoding="utf-8")
    assert dict(load_roster(roster_file)) == {"reviewer": "You review."}
    roster_file.write_text('reviewer = "You review."\ntriage = "You triage."\n', encoding="utf-8")
    assert set(load_roster(roster_file)) == {"reviewer", "triage"}
    replacement = tmp_path / "new.toml"
    replacement.write_text('planner = "You plan."\n', encoding="utf-8")
    replacement.replace(roster_file)  # same path, another file
    assert set(load_roster(roster_file)) == {"planner"}
