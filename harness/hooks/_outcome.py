"""Verdicts and outcomes of a hook run: ``Halt``, ``HookOutcome`` and the fail-closed checks.

A handler answers with ``None`` (continue), a new payload (rewrite it) or ``Halt(reason)``
(stop); a run answers with a ``HookOutcome``. This module holds those values and the rules that
turn a failure or a result that is no verdict into a halting outcome, so ``harness.hooks._hooks``
is only the chain.

Example::

    from harness.hooks._outcome import Halt, failed, not_a_verdict

    assert Halt("no rm").reason == "no rm"
    assert not_a_verdict(True) == "True"   # a bool is never a payload
    outcome = failed("guard", RuntimeError("boom"), {"tool_name": "Bash"}, ["guard"])
    assert outcome.halted and outcome.halted_by == "guard"

Errors that describe themselves (a timeout, a bad result, a command hook's failure) keep their
own message as the reason; any other exception is reported as "handler 'x' raised ...".
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from harness.errors import describe_reason
from harness.hooks._errors import (
    CommandHookError,
    HookResultError,
    HookTimeoutError,
    HookTypeError,
    HookValueError,
)

__all__ = ["Halt", "HookOutcome", "check_result", "failed", "not_a_verdict", "outcome"]

# Results that are errors rather than verdicts, reported as such (never "raised").
_SELF_DESCRIBING: Final = (HookTimeoutError, HookResultError, CommandHookError)


@dataclass(frozen=True, slots=True)
class Halt:
    """Returned by a handler to stop the chain; ``reason`` says why, for whoever asked."""

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str):
            raise HookTypeError(f"Halt reason must be a str, got {type(self.reason).__name__}")
        if not self.reason.strip():
            raise HookValueError(
                "Halt needs a non-empty reason: say why the tool was stopped, "
                "e.g. Halt('rm -rf is not allowed')"
            )


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What a run did: whether and why it halted, by whom, and the payload it ended with."""

    halted: bool
    reason: str | None
    halted_by: str | None
    payload: Any
    """The payload after the last handler that ran to completion (the halting one excluded)."""
    ran: tuple[str, ...]
    """Handler names in call order, the halting one included; skipped handlers are absent."""
    error: BaseException | None


class _OutcomeBuilder:
    """Builds a ``HookOutcome`` at half the cost of its ``__init__``.

    The frozen dataclass's ``__init__`` goes through ``object.__setattr__`` once per field.
    This class has the very same slots, so it sets them plainly and then becomes a
    ``HookOutcome`` (``__class__`` assignment between classes of identical layout). Kept
    because ``benchmarks/hooks.py`` shows it: every run builds one, and the constructor costs
    about a tenth of a pluggy call of ten handlers more. ``tests/hooks`` checks that it builds
    exactly what the constructor builds, field by field, so a new field cannot slip past it.
    """

    __slots__ = HookOutcome.__slots__

    def __init__(
        self,
        halted: bool,
        reason: str | None,
        halted_by: str | None,
        payload: Any,
        ran: tuple[str, ...],
        error: BaseException | None,
    ) -> None:
        self.halted = halted
        self.reason = reason
        self.halted_by = halted_by
        self.payload = payload
        self.ran = ran
        self.error = error
        self.__class__ = HookOutcome  # type: ignore[assignment]


outcome: Callable[..., HookOutcome] = _OutcomeBuilder  # type: ignore[assignment]
"""``outcome(halted, reason, halted_by, payload, ran, error)``: a ``HookOutcome``, built fast."""


def failed(name: str, exc: BaseException, payload: Any, ran: list[str]) -> HookOutcome:
    """The halting outcome of handler ``name`` failing with ``exc`` (fail closed)."""
    if isinstance(exc, _SELF_DESCRIBING):
        reason = str(exc)
    else:
        reason = f"handler {name!r} raised {describe_reason(exc)}"
    return outcome(True, reason, name, payload, tuple(ran), exc)


def check_result(name: str, result: object) -> None:
    """Refuse results that are almost certainly a mistake rather than a new payload.

    Treating them as a payload would silently continue the chain with garbage, which is the one
    thing a guard must not do; raising here makes the run fail closed instead.
    """
    what = not_a_verdict(result)
    if what is not None:
        raise HookResultError(
            f"handler {name!r} returned {what}, which is no verdict; return None to continue, "
            "a new payload to rewrite it, or Halt(reason) to stop"
        )


def not_a_verdict(result: object) -> str | None:
    """What ``result`` is, if it cannot be a payload (a bool, a generator, ...); else None."""
    if isinstance(result, bool):
        return repr(result)
    if result is Halt or (isinstance(result, type) and issubclass(result, Halt)):
        return "the Halt class (write Halt('reason'))"
    if inspect.isgenerator(result) or inspect.isasyncgen(result):
        kind = "a generator" if inspect.isgenerator(result) else "an async generator"
        return f"{kind} (a generator function is not a handler; use def or async def)"
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited on purpose: avoid the "never awaited" warning
        return "an awaitable that resolved to another awaitable (await it inside the handler)"
    return None
