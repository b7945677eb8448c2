"""The checks ``Hooks.register`` applies to a handler, its name, phase and timeout (pure).

Everything is checked at ``register`` time, so a bad registration fails at startup rather than
on the first tool call::

    >>> check_timeout(2), check_timeout(float("inf")), default_name(len)
    (2.0, None, 'len')
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, Final

from harness.hooks._errors import HookTypeError, HookValueError

__all__ = [
    "PHASES",
    "check_name",
    "check_phase",
    "check_timeout",
    "default_name",
    "is_async",
    "unknown_phase",
]

PHASES: Final[tuple[str, ...]] = ("pre_tool_use", "post_tool_use", "session_start", "session_end")


def unknown_phase(phase: object) -> str:
    return f"unknown hook phase {phase!r}; expected one of: {', '.join(PHASES)}"


def check_phase(phase: object) -> None:
    if not isinstance(phase, str) or phase not in PHASES:
        raise HookValueError(unknown_phase(phase))


def check_name(name: object) -> str:
    if not isinstance(name, str):
        raise HookTypeError(f"hook handler name must be a str, got {type(name).__name__}")
    if not name.strip():
        raise HookValueError("hook handler name must not be empty; omit name= to use __qualname__")
    return name


def check_timeout(timeout: object) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise HookTypeError(
            f"hook timeout must be a number of seconds, got {type(timeout).__name__}"
        )
    if math.isnan(timeout) or timeout <= 0:
        raise HookValueError(
            f"hook timeout must be > 0 seconds, got {timeout!r}; use None for none"
        )
    if math.isinf(timeout):
        return None
    return float(timeout)


def default_name(handler: Callable[[Any], object]) -> str:
    """The handler's ``__qualname__``.

    A partial takes its innermost function's; a callable instance its class's.
    """
    target: object = handler
    while isinstance(target, functools.partial):
        target = target.func
    qualname = getattr(target, "__qualname__", None)
    if isinstance(qualname, str) and qualname:
        return qualname
    return type(target).__qualname__


def is_async(handler: Callable[[Any], object]) -> bool:
    """True when calling ``handler`` certainly returns a coroutine (lets ``run`` skip a check)."""
    if inspect.iscoroutinefunction(handler):  # also sees through functools.partial
        return True
    target: object = handler
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isfunction(target) or inspect.ismethod(target):
        return False
    return inspect.iscoroutinefunction(type(target).__call__)
