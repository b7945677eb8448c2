"""Reading Claude Code hook settings into a ``Hooks`` value (``load_hook_settings``).

Hook authors reuse the ``settings.json`` they already have::

    from harness.hooks import load_hook_settings

    settings = load_hook_settings(
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard"}]}]},
        cwd="/srv/checkouts/acme",
    )
    settings.hooks      # a Hooks value: command hooks in file order, failing closed
    settings.skipped    # () here; else every event, matcher or hook it could not honour, and why

Design notes: reading is pure apart from opening the file; the command hooks only run when the
``Hooks`` value runs (``harness.hooks.command``). Anything it cannot honour is reported in
``skipped``, never silently dropped; a file whose shape is wrong raises ``HookSettingsError``
(a ``ValueError``) naming the JSON path of the problem.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.hooks.command import CommandHook
from harness.hooks.errors import HookSettingsError
from harness.hooks.hooks import Hooks
from harness.hooks.matching import claude_matcher

__all__ = ["DEFAULT_TIMEOUT", "HookSettings", "load_hook_settings"]

DEFAULT_TIMEOUT: Final = 60.0  # seconds, as in Claude Code's settings
_PHASES: Final[Mapping[str, str]] = {
    "PreToolUse": "pre_tool_use",
    "PostToolUse": "post_tool_use",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
}
_TOOL_EVENTS: Final = frozenset({"PreToolUse", "PostToolUse"})


@dataclass(frozen=True, slots=True)
class HookSettings:
    """What ``load_hook_settings`` read: the ``Hooks`` value and what it had to skip."""

    hooks: Hooks
    skipped: tuple[str, ...]


def load_hook_settings(
    path_or_mapping: str | os.PathLike[str] | Mapping[str, Any], *, cwd: str | os.PathLike[str]
) -> HookSettings:
    """Read a Claude Code ``settings.json`` (a path), or a mapping: a whole settings object
    (with a ``"hooks"`` key) or its ``"hooks"`` object. Command hooks run in ``cwd``."""
    if isinstance(path_or_mapping, Mapping):
        root: Any = path_or_mapping
        if "hooks" in root:
            return _read(root, cwd)
        return _read({"hooks": root}, cwd)
    path = Path(path_or_mapping)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise HookSettingsError(str(path), f"cannot read the settings file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise HookSettingsError(str(path), f"not UTF-8: {exc}") from None
    try:
        root = json.loads(text)
    except ValueError as exc:
        raise HookSettingsError(str(path), f"not valid JSON: {exc}") from None
    if not isinstance(root, dict):
        raise HookSettingsError(str(path), "a settings file must hold a JSON object")
    return _read(root, cwd)


def _read(root: Mapping[str, Any], cwd: str | os.PathLike[str]) -> HookSettings:
    workdir = os.fspath(cwd)
    skipped: list[str] = []
    hooks = Hooks()
    if root.get("disableAllHooks") is True:
        return HookSettings(hooks, ("disableAllHooks is true: no hooks loaded",))
    events = root.get("hooks", {})
    if not isinstance(events, Mapping):
        raise HookSettingsError("hooks", "must be an object of event -> groups")
    for event, groups in events.items():
        at = f"hooks.{event}"
        if not isinstance(groups, list):
            raise HookSettingsError(at, "must be a list of matcher groups")
        if event not in _PHASES:
            skipped.append(
                f"{at}: event {event!r} is not supported; supported: {', '.join(_PHASES)}"
            )
            continue
        for g, group in enumerate(groups):
            hooks = _read_group(hooks, event, group, f"{at}[{g}]", workdir, skipped)
    return HookSettings(hooks, tuple(skipped))


def _read_group(
    hooks: Hooks, event: str, group: object, at: str, cwd: str, skipped: list[str]
) -> Hooks:
    if not isinstance(group, Mapping):
        raise HookSettingsError(at, "a matcher group must be an object")
    raw = group.get("matcher", "")
    if not isinstance(raw, str):
        raise HookSettingsError(f"{at}.matcher", "must be a string")
    entries = group.get("hooks")
    if not isinstance(entries, list):
        raise HookSettingsError(f"{at}.hooks", "must be a list of hooks")
    match: str | re.Pattern[str] | None
    if event not in _TOOL_EVENTS and raw.strip() not in ("", "*"):
        skipped.append(
            f"{at}: matcher {raw!r} on {event} selects a session source, which harness does "
            "not have; its hooks are not run"
        )
        return hooks
    try:
        match = claude_matcher(raw)
    except re.error as exc:
        skipped.append(
            f"{at}.matcher: {raw!r} is not a valid regular expression ({exc}); "
            "its hooks are not run"
        )
        return hooks
    for h, entry in enumerate(entries):
        hook_at = f"{at}.hooks[{h}]"
        handler, timeout = _read_hook(entry, hook_at, cwd, _PHASES[event], skipped)
        if handler is not None:
            hooks = hooks.register(
                _PHASES[event], handler, name=handler.command, match=match, timeout=timeout
            )
    return hooks


def _read_hook(
    entry: object, at: str, cwd: str, phase: str, skipped: list[str]
) -> tuple[CommandHook | None, float]:
    if not isinstance(entry, Mapping):
        raise HookSettingsError(at, "a hook must be an object")
    kind = entry.get("type")
    if not isinstance(kind, str):
        raise HookSettingsError(f"{at}.type", 'must be a string such as "command"')
    if kind != "command":
        skipped.append(f'{at}: hook type {kind!r} is not supported (only "command")')
        return None, 0.0
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookSettingsError(f"{at}.command", "must be a non-empty string")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or math.isnan(timeout)
        or timeout <= 0
    ):
        raise HookSettingsError(
            f"{at}.timeout", f"must be a number of seconds > 0, got {timeout!r}"
        )
    if entry.get("async") is True:
        skipped.append(f"{at}: async command hooks are not supported (hooks run in order)")
        return None, 0.0
    return CommandHook(command, cwd, phase), float(timeout)
