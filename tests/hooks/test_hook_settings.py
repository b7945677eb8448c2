"""load_hook_settings: Claude Code's matcher rule, file order, skipped entries, malformed files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.hooks import HookSettingsError, HookValueError, load_hook_settings
from harness.hooks._matching import claude_matcher, matches, parse_match
from harness.hooks._settings import HOOK_TYPES
from harness.hooks.command import CommandHook


def halting(matcher: str | None) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": "echo hit >&2; exit 2"}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"PreToolUse": [group]}


@pytest.mark.parametrize(
    ("matcher", "tool", "hit"),
    [
        ("Edit", "NotebookEdit", False),
        ("Edit", "Edit", True),
        ("mcp__.*", "mcp__memory__read", True),
        ("mcp__memory__.*", "mcp__github__read", False),
        ("Edit,Write", "Write", True),
        ("Edit, Write", "Edit", True),
        ("Edit|Write", "MultiEdit", False),
        ("Notebook.*", "NotebookEdit", True),
        ("Notebook.*", "Edit", False),
        ("", "Anything", True),
        ("*", "Anything", True),
        (None, "Anything", True),
        ("bash", "Bash", False),
    ],
)
async def test_claude_matcher_cases(
    tmp_path: Path, matcher: str | None, tool: str, hit: bool
) -> None:
    with anyio.fail_after(20):
        loaded = load_hook_settings(halting(matcher), cwd=tmp_path)
        assert loaded.skipped == ()
        outcome = await loaded.hooks.run("pre_tool_use", {"tool_name": tool, "tool_input": {}})
        assert outcome.halted is hit


def test_the_matcher_rule_itself() -> None:
    assert claude_matcher(" Edit , Write ") == "Edit|Write"
    assert matches(parse_match(claude_matcher("mcp__.*")), "x_mcp__y")  # searched


async def test_hooks_run_in_file_order_across_groups(tmp_path: Path) -> None:
    log = tmp_path / "log"
    settings = {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": f"echo one >> {log}"}],
                },
                {"hooks": [{"type": "command", "command": f"echo two >> {log}"}]},
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": f"echo three >> {log}"}],
                },
            ]
        }
    }
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(settings))
    with anyio.fail_after(20):
        loaded = load_hook_settings(path, cwd=tmp_path)
        outcome = await loaded.hooks.run("pre_tool_use", {"tool_name": "Bash", "tool_input": {}})
    assert not outcome.halted
    assert log.read_text().split() == ["one", "two", "three"]


def test_unsupported_events_types_and_matchers_are_reported(tmp_path: Path) -> None:
    loaded = load_hook_settings(
        {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "true"}]}],
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "is it safe?"}]},
                {"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]},
                {
                    "matcher": "Bash",
                    "hooks": [{"type": "command", "command": "true", "async": True}],
                },
            ],
            "SessionStart": [
                {"matcher": "startup", "hooks": [{"type": "command", "command": "x"}]}
            ],
        },
        cwd=tmp_path,
    )
    assert loaded.hooks.handlers("pre_tool_use") == ()
    assert loaded.hooks.handlers("session_start") == ()
    text = "\n".join(loaded.skipped)
    assert len(loaded.skipped) == 5
    assert "hooks.UserPromptSubmit: event 'UserPromptSubmit' is not supported" in text
    assert "hooks.PreToolUse[0].hooks[0]: hook type 'prompt' is not supported" in text
    assert "hooks.PreToolUse[1].matcher: 'Bash(' is not a valid regular expression" in text
    assert "hooks.PreToolUse[2].hooks[0]: async command hooks are not supported" in text
    assert "hooks.SessionStart[0]: matcher 'startup'" in text


def test_all_four_events_map_to_the_phases(tmp_path: Path) -> None:
    group = [{"hooks": [{"type": "command", "command": "true"}]}]
    loaded = load_hook_settings(
        {"PreToolUse": group, "PostToolUse": group, "SessionStart": group, "SessionEnd": group},
        cwd=tmp_path,
    )
    for phase in ("pre_tool_use", "post_tool_use", "session_start", "session_end"):
        (registration,) = loaded.hooks.registrations(phase)
        assert registration.name == "true" and registration.timeout == 60.0


@pytest.mark.parametrize(
    ("settings", "json_path"),
    [
        ({"hooks": []}, "hooks"),
        ({"PreToolUse": {}}, "hooks.PreToolUse"),
        ({"PreToolUse": ["x"]}, "hooks.PreToolUse[0]"),
        ({"PreToolUse": [{"matcher": 1, "hooks": []}]}, "hooks.PreToolUse[0].matcher"),
        ({"PreToolUse": [{"matcher": "Bash"}]}, "hooks.PreToolUse[0].hooks"),
        ({"PreToolUse": [{"hooks": [{"command": "true"}]}]}, "hooks.PreToolUse[0].hooks[0].type"),
        (
            {"PreToolUse": [{"hooks": [{"type": "command"}]}]},
            "hooks.PreToolUse[0].hooks[0].command",
        ),
        (
            {"PreToolUse": [{"hooks": [{"type": "command", "command": "true", "timeout": 0}]}]},
            "hooks.PreToolUse[0].hooks[0].timeout",
        ),
    ],
)
def test_a_malformed_file_names_the_json_path(
    tmp_path: Path, settings: Any, json_path: str
) -> None:
    with pytest.raises(
        ValueError, match="^" + json_path.replace("[", r"\[").replace("]", r"\]") + ":"
    ) as info:
        load_hook_settings(settings, cwd=tmp_path)
    assert isinstance(info.value, HookSettingsError) and info.value.json_path == json_path


def test_an_unreadable_or_invalid_file_is_a_value_error(tmp_path: Path) -> None:
    bad = tmp_path / "settings.json"
    bad.write_text("{not json")
    with pytest.raises(HookSettingsError, match="not valid JSON"):
        load_hook_settings(bad, cwd=tmp_path)
    with pytest.raises(HookSettingsError, match="cannot read"):
        load_hook_settings(tmp_path / "missing.json", cwd=tmp_path)


def test_disable_all_hooks_is_honoured(tmp_path: Path) -> None:
    loaded = load_hook_settings({"disableAllHooks": True, "hooks": halting(None)}, cwd=tmp_path)
    assert loaded.hooks.handlers("pre_tool_use") == () and loaded.skipped


@pytest.mark.parametrize("matcher", ["Bash Edit", "Bash|Read Edit"])
def test_a_matcher_with_a_space_inside_a_name_names_its_json_path(
    tmp_path: Path, matcher: str
) -> None:
    group = {"matcher": matcher, "hooks": [{"type": "command", "command": "true"}]}
    settings = {"PreToolUse": [{"hooks": []}, group]}
    with pytest.raises(HookSettingsError, match=r"^hooks\.PreToolUse\[1\]\.matcher: ") as info:
        load_hook_settings(settings, cwd=tmp_path)
    assert info.value.json_path == "hooks.PreToolUse[1].matcher"
    assert repr(matcher) in str(info.value)


def test_a_settings_file_nested_too_deeply_is_a_settings_error(tmp_path: Path) -> None:
    deep = tmp_path / "settings.json"
    deep.write_text('{"hooks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(HookSettingsError, match="nested too deeply") as info:
        load_hook_settings(deep, cwd=tmp_path)
    assert isinstance(info.value, ValueError) and info.value.json_path == str(deep)


def test_hook_types_come_from_the_table(tmp_path: Path) -> None:
    assert set(HOOK_TYPES) == {"command"}
    settings = {"PreToolUse": [{"hooks": [{"type": "http", "url": "http://x"}]}]}
    loaded = load_hook_settings(settings, cwd=tmp_path)
    assert loaded.hooks.handlers("pre_tool_use") == ()
    assert loaded.skipped == (
        "hooks.PreToolUse[0].hooks[0]: hook type 'http' is not supported (only 'command')",
    )


def test_the_env_allowlist_reaches_every_command_hook(tmp_path: Path) -> None:
    group = {"hooks": [{"type": "command", "command": "true"}] * 2}
    loaded = load_hook_settings({"PreToolUse": [group]}, cwd=tmp_path, env_allowlist=["PATH"])
    hooks = loaded.hooks.handlers("pre_tool_use")
    assert [h.env_allowlist for h in hooks if isinstance(h, CommandHook)] == [("PATH",)] * 2
    default = load_hook_settings({"PreToolUse": [group]}, cwd=tmp_path).hooks
    assert all(h.env_allowlist is None for h in default.handlers("pre_tool_use"))


@pytest.mark.parametrize("allowlist", ["PATH", [1], ["PATH", None]])
def test_an_env_allowlist_must_be_names(tmp_path: Path, allowlist: Any) -> None:
    with pytest.raises(HookValueError, match="env_allowlist"):
        load_hook_settings({}, cwd=tmp_path, env_allowlist=allowlist)
