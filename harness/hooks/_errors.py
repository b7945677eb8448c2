"""Typed errors of the hooks: each is a ``HarnessError`` and the builtin it naturally is.

Catch them by what went wrong, or all at once as ``HarnessError``::

    from harness.errors import HarnessError
    from harness.hooks import Hooks

    try:
        Hooks().register("pre_tool_use", print, match="Edit*")
    except HarnessError as exc:  # also a ValueError
        print(exc)

Three of them (``HookTimeoutError``, ``HookResultError``, ``CommandHookError``) are never raised
out of ``Hooks.run``: they are stored in ``HookOutcome.error`` of a run that failed closed, and
their message is the halt's whole ``reason``.
"""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = [
    "CommandHookError",
    "HookResultError",
    "HookSettingsError",
    "HookTimeoutError",
    "HookTypeError",
    "HookValueError",
]


class HookValueError(HarnessError, ValueError):
    """A value the hooks refuse: an unknown phase, a bad matcher or timeout, an empty halt."""


class HookTypeError(HarnessError, TypeError):
    """A value of the wrong type given to the hooks (a handler that is not callable, ...)."""


class HookSettingsError(HookValueError):
    """A Claude Code settings file (or mapping) that cannot be read as hooks.

    ``json_path`` names the place of the problem, e.g. ``hooks.PreToolUse[0].hooks[1].command``.
    """

    def __init__(self, json_path: str, problem: str) -> None:
        super().__init__(f"{json_path}: {problem}")
        self.json_path = json_path


class HookTimeoutError(HarnessError, TimeoutError):
    """Stored in ``HookOutcome.error`` when a handler ran past its own ``timeout``.

    A distinct type so callers can tell "the guard was too slow" from a ``TimeoutError`` the
    handler raised itself.
    """

    def __init__(self, handler_name: str, timeout: float) -> None:
        super().__init__(f"handler {handler_name!r} ran past its timeout of {timeout:g}s")
        self.handler_name = handler_name
        self.timeout = timeout


class HookResultError(HarnessError, TypeError):
    """Stored in ``HookOutcome.error`` when a handler *returned* something that is no verdict.

    ``True``, a generator, the ``Halt`` class, ...: the handler raised nothing, so the reason
    says what it returned; the run still fails closed.
    """


class CommandHookError(HarnessError, RuntimeError):
    """Stored in ``HookOutcome.error`` when a command hook failed (not started, crashed, exit
    status other than 0 or 2, invalid JSON, too much output): the run failed closed."""
