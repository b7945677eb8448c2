"""Reading Claude Code hook settings into a ``Hooks`` value (``load_hook_settings``).

Hook authors reuse the ``settings.json`` they already have::

    from harness.hooks import load_hook_settings

    settings = load_hook_settings(
        {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard"}]}]},
        cwd="/srv/checkouts/acme",
    )
    settings.hooks      # a Hooks value: command hooks in file order, failing closed
    settings.skipped    # () here; else every event, matcher or hook it could not honour, and why

Reading is pure apart from opening the file; the hooks only run when the ``Hooks`` value runs.
Anything it cannot honour is reported in ``skipped``, never silently dropped; a file whose shape
is wrong raises ``HookSettingsError`` (a ``ValueError``) naming the JSON path of the problem.

Command hooks inherit the whole environment of the process that runs them (as in Claude Code),
secrets included. ``env_allowlist=["PATH", "HOME"]`` gives them only those variables, plus
``CLAUDE_PROJECT_DIR``.

Hook types come from ``HOOK_TYPES`` (type name -> factory), so a new kind of hook is one module
with a factory and one entry there.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeAlias

from harness.hooks._claude_code import PHASE_OF_EVENT, TOOL_EVENTS
from harness.hooks._errors import HookSettingsError, HookValueError
from harness.hooks._hooks import HookHandler, Hooks
from harness.hooks._matching import claude_matcher, parse_match
from harness.hooks.command import from_settings as command_from_settings

__all__ = ["DEFAULT_TIMEOUT", "HOOK_TYPES", "HookFactory", "HookSettings", "load_hook_settings"]

DEFAULT_TIMEOUT: Final = 60.0  # seconds, as in Claude Code's settings

HookFactory: TypeAlias = Callable[
    [Mapping[str, Any], str, str, str, "Sequence[str] | None"], tuple[HookHandler, str]
]
"""``factory(entry, json_path, cwd, phase, env_allowlist)`` -> (handler, its name); raises
``HookSettingsError`` naming the JSON path of a field it cannot use."""

HOOK_TYPES: Final[Mapping[str, HookFactory]] = {"command": command_from_settings}
"""The hook types a settings file may use, by their ``"type"``."""


@dataclass(frozen=True, slots=True)
class _Site:
    """Where the hooks being read will run."""

    cwd: str
    env_allowlist: Sequence[str] | None


@dataclass(frozen=True, slots=True)
class HookSettings:
    """What ``load_hook_settings`` read: the ``Hooks`` value and what it had to skip."""

    hooks: Hooks
    skipped: tuple[str, ...]


def load_hook_settings(
    path_or_mapping: str | os.PathLike[str] | Mapping[str, Any],
    *,
    cwd: str | os.PathLike[str],
    env_allowlist: Sequence[str] | None = None,
) -> HookSettings:
    """Read a Claude Code ``settings.json`` (a path), or a mapping: a whole settings object
    (with a ``"hooks"`` key) or its ``"hooks"`` object. Command hooks run in ``cwd``.

    ``env_allowlist``: ``None`` (the default) lets command hooks inherit the whole environment,
    as Claude Code does; a sequence of variable names passes only those (when set), plus
    ``CLAUDE_PROJECT_DIR``.
    """
    if env_allowlist is not None:
        env_allowlist = _check_allowlist(env_allowlist)
    site = _Site(os.fspath(cwd), env_allowlist)
    if isinstance(path_or_mapping, Mapping):
        root: Any = path_or_mapping
        return _read(root if "hooks" in root else {"hooks": root}, site)
    return _read(_read_file(Path(path_or_mapping)), site)


def _check_allowlist(names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise HookValueError(
            f"env_allowlist must be a sequence of variable names, got {names!r}; "
            'e.g. env_allowlist=["PATH", "HOME"]'
        )
    return tuple(names)


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise HookSettingsError(str(path), f"cannot read the settings file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise HookSettingsError(str(path), f"not UTF-8: {exc}") from None
    try:
        root = json.loads(text)
    except RecursionError:
        raise HookSettingsError(str(path), "not valid JSON: nested too deeply") from None
    except ValueError as exc:
        raise HookSettingsError(str(path), f"not valid JSON: {exc}") from None
    if not isinstance(root, dict):
        raise HookSettingsError(str(path), "a settings file must hold a JSON object")
    return root


def _read(root: Mapping[str, Any], site: _Site) -> HookSettings:
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
        if event not in PHASE_OF_EVENT:
            supported = ", ".join(PHASE_OF_EVENT)
            skipped.append(f"{at}: event {event!r} is not supported; supported: {supported}")
            continue
        for g, group in enumerate(groups):
            hooks = _read_group(hooks, event, group, f"{at}[{g}]", site, skipped)
    return HookSettings(hooks, tuple(skipped))


def _read_group(
    hooks: Hooks, event: str, group: object, at: str, site: _Site, skipped: list[str]
) -> Hooks:
    if not isinstance(group, Mapping):
        raise HookSettingsError(at, "a matcher group must be an object")
    raw = group.get("matcher", "")
    if not isinstance(raw, str):
        raise HookSettingsError(f"{at}.matcher", "must be a string")
    entries = group.get("hooks")
    if not isinstance(entries, list):
        raise HookSettingsError(f"{at}.hooks", "must be a list of hooks")
    if event not in TOOL_EVENTS and raw.strip() not in ("", "*"):
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
    try:
        parse_match(match)
    except HookValueError:
        raise HookSettingsError(
            f"{at}.matcher",
            f"{raw!r} names a tool with a space inside; separate tool names with | or , "
            "(e.g. 'Bash|Edit' or 'Bash, Edit')",
        ) from None
    phase = PHASE_OF_EVENT[event]
    for h, entry in enumerate(entries):
        read = _read_hook(entry, f"{at}.hooks[{h}]", site, phase, skipped)
        if read is not None:
            handler, name, timeout = read
            hooks = hooks.register(phase, handler, name=name, match=match, timeout=timeout)
    return hooks


def _read_hook(
    entry: object, at: str, site: _Site, phase: str, skipped: list[str]
) -> tuple[HookHandler, str, float] | None:
    if not isinstance(entry, Mapping):
        raise HookSettingsError(at, "a hook must be an object")
    kind = entry.get("type")
    if not isinstance(kind, str):
        raise HookSettingsError(f"{at}.type", 'must be a string such as "command"')
    factory = HOOK_TYPES.get(kind)
    if factory is None:
        known = ", ".join(repr(name) for name in HOOK_TYPES)
        skipped.append(f"{at}: hook type {kind!r} is not supported (only {known})")
        return None
    handler, name = factory(entry, at, site.cwd, phase, site.env_allowlist)
    timeout = _timeout(entry, at)
    if entry.get("async") is True:
        skipped.append(f"{at}: async {kind} hooks are not supported (hooks run in order)")
        return None
    return handler, name, timeout


def _timeout(entry: Mapping[str, Any], at: str) -> float:
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
    return float(timeout)
