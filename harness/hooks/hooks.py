"""Hooks: an immutable phase -> handlers value whose chain halts (ADR 0006, "Hooks").

The value is pure: ``register`` returns a new ``Hooks`` and never touches the old one, so a
run can never observe a registration made while it is in flight, and one value can be shared
by any number of concurrent runs without locks. ``run`` is the hot path of every tool call, so
the per-phase chains are precomputed at register time and sync handlers without a timeout are
plain function calls: no task, no cancel scope, no clock read.

Failure policy (the reason this module exists): a handler that raises, or runs past its
timeout, *halts* the chain -- a guard that crashed must never read as "allowed". Cancellation
from outside is not a handler failure and always propagates.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import anyio
import anyio.lowlevel

from harness.errors import HarnessError

__all__ = [
    "PHASES",
    "Halt",
    "HookHandler",
    "HookOutcome",
    "HookRegistration",
    "HookTimeoutError",
    "Hooks",
]

PHASES: Final[tuple[str, ...]] = ("pre_tool_use", "post_tool_use", "session_start", "session_end")

HookHandler: TypeAlias = Callable[[Any], object]
"""A handler: ``handler(payload)`` returns ``None``, a new payload or a ``Halt``, or an awaitable
resolving to one of those (``async def``, an object with an async ``__call__``, a
``functools.partial`` of an async function, or a sync function returning an awaitable)."""

# Characters that make a matcher look like a glob or a regex. Matching is exact, so "Edit*" or
# "mcp__.*" would silently never match; refusing them at register time makes the mistake loud.
_PATTERN_CHARS: Final = frozenset("*?[](){}^$+\\")

# One precomputed chain entry: (name, handler, tool names or None for all, timeout or None,
# handler is known to be a coroutine function). Plain tuples unpack faster than attribute reads.
_Entry: TypeAlias = tuple[str, HookHandler, frozenset[str] | None, float | None, bool]


@dataclass(frozen=True, slots=True)
class Halt:
    """Returned by a handler to stop the chain; ``reason`` says why, for whoever asked."""

    reason: str

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str):
            raise TypeError(f"Halt reason must be a str, got {type(self.reason).__name__}")
        if not self.reason.strip():
            raise ValueError(
                "Halt needs a non-empty reason: say why the tool was stopped, "
                "e.g. Halt('rm -rf is not allowed')"
            )


class HookTimeoutError(HarnessError, TimeoutError):
    """Stored in ``HookOutcome.error`` when a handler ran past its own ``timeout``.

    A distinct type so callers can tell "the guard was too slow" from a ``TimeoutError`` the
    handler raised itself.
    """

    def __init__(self, handler_name: str, timeout: float) -> None:
        super().__init__(f"handler {handler_name!r} ran past its timeout of {timeout:g}s")
        self.handler_name = handler_name
        self.timeout = timeout


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


@dataclass(frozen=True, slots=True)
class HookRegistration:
    """One registered handler, as returned by ``Hooks.registrations``."""

    phase: str
    name: str
    handler: HookHandler
    match: str | None
    """``None`` matches every payload; otherwise exact tool names joined by ``|``."""
    timeout: float | None


class Hooks:
    """An immutable mapping of phase -> handlers in registration order.

    ``register`` returns a new value; ``run`` calls the matching handlers of one phase one at a
    time, in registration order, and stops at the first ``Halt`` (or failure).
    """

    __slots__ = ("_chains", "_registrations")

    _chains: dict[str, tuple[_Entry, ...]]
    _registrations: dict[str, tuple[HookRegistration, ...]]

    def __init__(self) -> None:
        object.__setattr__(self, "_chains", {phase: () for phase in PHASES})
        object.__setattr__(self, "_registrations", {phase: () for phase in PHASES})

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Hooks is immutable: register() returns a new Hooks value")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("Hooks is immutable: register() returns a new Hooks value")

    def __repr__(self) -> str:
        counts = ", ".join(f"{phase}={len(regs)}" for phase, regs in self._registrations.items())
        return f"Hooks({counts})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hooks):
            return NotImplemented
        return self._registrations == other._registrations

    def __hash__(self) -> int:
        return hash(tuple(self._registrations.values()))

    def __copy__(self) -> Hooks:
        return self  # immutable: a copy would be indistinguishable

    def __deepcopy__(self, memo: dict[int, object]) -> Hooks:
        return self

    def __reduce__(self) -> tuple[Callable[..., Hooks], tuple[HookRegistration, ...]]:
        # __setattr__ refuses slot state, so pickle by replaying the registrations.
        return _replay, tuple(r for regs in self._registrations.values() for r in regs)

    def register(
        self,
        phase: str,
        handler: HookHandler,
        *,
        name: str | None = None,
        match: str | None = None,
        timeout: float | None = None,
    ) -> Hooks:
        """Return a new ``Hooks`` with ``handler`` appended to ``phase``; ``self`` is unchanged.

        Everything is validated here, so a bad registration fails at startup rather than
        on the first tool call.
        """
        _check_phase(phase)
        if not callable(handler):
            raise TypeError(f"hook handler must be callable, got {type(handler).__name__}")
        resolved_name = _default_name(handler) if name is None else _check_name(name)
        tools = _parse_match(match)
        resolved_timeout = _check_timeout(timeout)

        registration = HookRegistration(
            phase=phase,
            name=resolved_name,
            handler=handler,
            match=None if tools is None else match,
            timeout=resolved_timeout,
        )
        entry: _Entry = (resolved_name, handler, tools, resolved_timeout, _is_async(handler))

        new = object.__new__(Hooks)
        chains = dict(self._chains)
        chains[phase] = (*chains[phase], entry)
        registrations = dict(self._registrations)
        registrations[phase] = (*registrations[phase], registration)
        object.__setattr__(new, "_chains", chains)
        object.__setattr__(new, "_registrations", registrations)
        return new

    def handlers(self, phase: str) -> tuple[HookHandler, ...]:
        """The handlers of ``phase`` in registration order (the order ``run`` uses)."""
        _check_phase(phase)
        return tuple(r.handler for r in self._registrations[phase])

    def registrations(self, phase: str) -> tuple[HookRegistration, ...]:
        """Like ``handlers``, with each handler's name, match and timeout."""
        _check_phase(phase)
        return self._registrations[phase]

    async def run(self, phase: str, payload: Any) -> HookOutcome:
        """Run ``phase``'s matching handlers one at a time, in registration order.

        Each handler sees the payload as the previous one left it. The first ``Halt`` stops
        the chain; so does a handler that raises or runs past its timeout (fail closed).
        Cancellation from outside propagates and is never reported as a halt.
        """
        try:
            chain = self._chains[phase]
        except (KeyError, TypeError):
            raise ValueError(_unknown_phase(phase)) from None
        ran: list[str] = []
        # Outside cancellation is told apart from a handler's own failure by the task's count of
        # pending cancellation requests: it grows only when someone cancels this task, which can
        # only happen while we await. So the count is read just before the first await (-1: none
        # yet), and a chain of plain sync handlers never pays for reading it.
        task: asyncio.Task[Any] | None = None
        baseline = -1
        for name, handler, tools, timeout, is_async in chain:
            if tools is not None:
                try:
                    tool_name = _tool_name(payload)
                except Exception as exc:
                    ran.append(name)  # the halting handler is in `ran`, as for any halt
                    return HookOutcome(
                        True,
                        f"could not read tool_name from the payload to match handler {name!r}: "
                        f"{_describe(exc)}",
                        name,
                        payload,
                        tuple(ran),
                        exc,
                    )
                if tool_name not in tools:
                    continue
            ran.append(name)
            if timeout is None:
                # Hot path: a sync handler is a bare call; only non-None results are inspected.
                # Only an await can take a cancellation from outside, so only after one do we
                # look for one the handler may have swallowed.
                try:
                    if is_async:
                        if baseline < 0:
                            task, baseline = _cancel_baseline()
                        result = await handler(payload)  # type: ignore[misc]
                        if task is not None and task.cancelling() > baseline:
                            await _propagate_outside_cancellation(task, baseline, None)
                    else:
                        result = handler(payload)
                        if result is not None and inspect.isawaitable(result):
                            if baseline < 0:
                                task, baseline = _cancel_baseline()
                            result = await result
                            if task is not None and task.cancelling() > baseline:
                                await _propagate_outside_cancellation(task, baseline, None)
                    if result is None:
                        continue
                    if isinstance(result, Halt):
                        return HookOutcome(True, result.reason, name, payload, tuple(ran), None)
                    _check_result(name, result)
                except BaseException as exc:
                    await _propagate_outside_cancellation(task, baseline, exc)
                    return _failed(name, exc, payload, ran)
                payload = result
            else:
                if baseline < 0:
                    task, baseline = _cancel_baseline()
                try:
                    result = await _call_with_timeout(name, handler, payload, timeout)
                    if task is not None and task.cancelling() > baseline:
                        await _propagate_outside_cancellation(task, baseline, None)
                except BaseException as exc:
                    await _propagate_outside_cancellation(task, baseline, exc)
                    return _failed(name, exc, payload, ran)
                if result is None:
                    continue
                if isinstance(result, Halt):
                    return HookOutcome(True, result.reason, name, payload, tuple(ran), None)
                payload = result
        return HookOutcome(False, None, None, payload, tuple(ran), None)


def _replay(*registrations: HookRegistration) -> Hooks:
    hooks = Hooks()
    for r in registrations:
        hooks = hooks.register(r.phase, r.handler, name=r.name, match=r.match, timeout=r.timeout)
    return hooks


async def _call_with_timeout(name: str, handler: HookHandler, payload: Any, limit: float) -> Any:
    """Call one handler under its own deadline; raise ``HookTimeoutError`` if it ran past it.

    The deadline lives in a cancel scope of our own, so only *its* expiry becomes a timeout: an
    outer cancellation is not swallowed by the scope and propagates. A sync handler cannot be
    preempted, so it is checked after it returns; finishing late still counts as a timeout.
    """
    deadline = anyio.current_time() + limit
    scope: anyio.CancelScope | None = None
    try:
        result = handler(payload)
        if inspect.isawaitable(result):
            with anyio.CancelScope(deadline=deadline) as scope:
                result = await result
            if scope.cancel_called:
                raise HookTimeoutError(name, limit)
        elif anyio.current_time() > deadline:
            raise HookTimeoutError(name, limit)
    except HookTimeoutError:
        raise
    except Exception as exc:
        if scope is not None and scope.cancel_called:
            # The handler turned our cancellation into an error of its own: still a timeout.
            raise HookTimeoutError(name, limit) from exc
        raise
    if result is not None and not isinstance(result, Halt):
        _check_result(name, result)
    return result


def _cancel_baseline() -> tuple[asyncio.Task[Any] | None, int]:
    """The running task and its count of cancellation requests already being handled when
    this run began (None, 0 off asyncio).

    A request not yet delivered (the task cancelled itself, or was cancelled from another
    thread, just before the run) is not "being handled": it will land inside a handler and is
    a cancellation from outside. asyncio exposes that state only as ``Task._must_cancel``.
    """
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not running on asyncio
        return None, 0
    if task is None:
        return None, 0
    undelivered = 1 if getattr(task, "_must_cancel", False) else 0
    return task, task.cancelling() - undelivered


async def _propagate_outside_cancellation(
    task: asyncio.Task[Any] | None, baseline: int, exc: BaseException | None
) -> None:
    """Re-raise a cancellation from outside that a handler swallowed or turned into an error.

    Returns only when no outside cancellation is pending and ``exc`` (if any) is a handler
    failure to report as a halt: an ``Exception``, or a ``CancelledError`` of the handler's own
    (say, from awaiting a task someone else cancelled), which must not make the caller look
    cancelled. Other ``BaseException``s (``KeyboardInterrupt``, ``SystemExit``, ...) are not a
    handler's verdict and propagate.
    """
    if exc is not None and not isinstance(exc, Exception | asyncio.CancelledError):
        raise exc
    if baseline < 0:
        return  # nothing was awaited yet, so nothing from outside can have arrived
    if task is None:
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            raise exc
        return
    if task.cancelling() <= baseline:
        return  # no cancellation from outside: a handler's own CancelledError is its failure
    if isinstance(exc, asyncio.CancelledError):
        raise exc
    # The handler swallowed the cancellation. An anyio cancel scope delivers it again at the
    # next checkpoint, recognisably as its own; a plain Task.cancel() is re-raised here.
    await anyio.lowlevel.checkpoint()
    raise asyncio.CancelledError("cancelled from outside while a hook handler ran") from exc


def _failed(name: str, exc: BaseException, payload: Any, ran: list[str]) -> HookOutcome:
    if isinstance(exc, HookTimeoutError):
        reason = str(exc)
    else:
        reason = f"handler {name!r} raised {_describe(exc)}"
    return HookOutcome(True, reason, name, payload, tuple(ran), exc)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _check_result(name: str, result: object) -> None:
    """Refuse results that are almost certainly a mistake rather than a new payload.

    Treating them as a payload would silently continue the chain with garbage, which is the one
    thing a guard must not do; raising here makes the run fail closed instead.
    """
    if isinstance(result, bool):
        raise TypeError(
            f"handler {name!r} returned {result!r}; return None to continue, "
            "a new payload to rewrite it, or Halt(reason) to stop"
        )
    if result is Halt or (isinstance(result, type) and issubclass(result, Halt)):
        raise TypeError(f"handler {name!r} returned the Halt class; return Halt('reason')")
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()  # never awaited on purpose: avoid the "never awaited" warning
        raise TypeError(
            f"handler {name!r} returned an awaitable that resolved to another awaitable; "
            "await it inside the handler"
        )


def _tool_name(payload: Any) -> str | None:
    """The payload's ``tool_name``: a mapping key first, else an attribute; ``None`` if absent.

    Anything but a ``str`` counts as absent, so it never matches a specific matcher.
    """
    if type(payload) is dict or isinstance(payload, Mapping):
        tool_name = payload.get("tool_name")
    else:
        tool_name = getattr(payload, "tool_name", None)
    return tool_name if isinstance(tool_name, str) else None


def _unknown_phase(phase: object) -> str:
    return f"unknown hook phase {phase!r}; expected one of: {', '.join(PHASES)}"


def _check_phase(phase: object) -> None:
    if not isinstance(phase, str) or phase not in PHASES:
        raise ValueError(_unknown_phase(phase))


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"hook handler name must be a str, got {type(name).__name__}")
    if not name.strip():
        raise ValueError("hook handler name must not be empty; omit name= to use __qualname__")
    return name


def _check_timeout(timeout: object) -> float | None:
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(f"hook timeout must be a number of seconds, got {type(timeout).__name__}")
    if math.isnan(timeout) or timeout <= 0:
        raise ValueError(f"hook timeout must be > 0 seconds, got {timeout!r}; use None for none")
    if math.isinf(timeout):
        return None
    return float(timeout)


def _parse_match(match: object) -> frozenset[str] | None:
    """``None``/``"*"`` -> None (every payload); ``"Bash|Edit"`` -> frozenset of exact names."""
    if match is None or match == "*":
        return None
    if not isinstance(match, str):
        raise TypeError(f"hook match must be a str or None, got {type(match).__name__}")
    names = match.split("|")
    for tool in names:
        if not tool:
            raise ValueError(
                f"hook match {match!r} has an empty tool name; "
                "write exact names joined by '|', e.g. 'Bash|Edit', or '*' for all"
            )
        if tool != tool.strip() or any(ch.isspace() for ch in tool):
            raise ValueError(
                f"hook match {match!r}: tool name {tool!r} contains whitespace; "
                "write 'Bash|Edit', not 'Bash | Edit'"
            )
        if _PATTERN_CHARS.intersection(tool):
            raise ValueError(
                f"hook match {match!r}: {tool!r} looks like a pattern, but matching is by "
                "exact, case-sensitive tool name; list the names ('Edit|NotebookEdit') "
                "or use '*' alone for all"
            )
    return frozenset(names)


def _default_name(handler: HookHandler) -> str:
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


def _is_async(handler: HookHandler) -> bool:
    """True when calling ``handler`` certainly returns a coroutine (lets ``run`` skip a check)."""
    if inspect.iscoroutinefunction(handler):  # also sees through functools.partial
        return True
    target: object = handler
    while isinstance(target, functools.partial):
        target = target.func
    if inspect.isfunction(target) or inspect.ismethod(target):
        return False
    return inspect.iscoroutinefunction(type(target).__call__)
