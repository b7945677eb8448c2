"""Hooks: an immutable phase -> handlers value whose chain halts.

Register guards on a phase; ``run`` calls the matching ones in order and stops at the first
``Halt``::

    import anyio
    from harness.hooks import Halt, Hooks

    def no_rm(payload):
        return Halt("no rm") if "rm " in payload["tool_input"]["command"] else None

    hooks = Hooks().register("pre_tool_use", no_rm, match="Bash")
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm x"}}
    outcome = anyio.run(hooks.run, "pre_tool_use", payload)
    assert outcome.halted and outcome.halted_by == "no_rm"

A handler that raises, runs past its timeout or returns something that is no verdict *halts*
the chain: a guard that crashed must never read as "allowed" (``harness.hooks._outcome``).
Cancellation from outside is not a handler failure and always propagates
(``harness.hooks._cancellation``). The value is pure: ``register`` returns a new ``Hooks``, so
a run never observes a registration made while it is in flight, and one value can be shared
by any number of concurrent runs without locks.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import anyio

from harness.errors import describe_reason
from harness.hooks._cancellation import (
    CancelState,
    cancel_state,
    finish_pending,
    propagate_outside_cancellation,
    run_finished,
    run_started,
    start_pending,
)
from harness.hooks._errors import HookTimeoutError, HookTypeError, HookValueError
from harness.hooks._matching import Matcher, matches, parse_match, tool_name
from harness.hooks._outcome import Halt, HookOutcome, check_result, failed
from harness.hooks._outcome import outcome as _outcome
from harness.hooks._registration import (
    PHASES,
    check_name,
    check_phase,
    check_timeout,
    default_name,
    is_async,
    unknown_phase,
)

__all__ = [
    "PHASES",
    "Halt",
    "HookHandler",
    "HookOutcome",
    "HookRegistration",
    "HookTimeoutError",
    "Hooks",
]


HookHandler: TypeAlias = Callable[[Any], object]
"""A handler: ``handler(payload)`` returns ``None``, a new payload or a ``Halt``, or an awaitable
resolving to one of those (``async def``, an object with an async ``__call__``, a
``functools.partial`` of an async function, or a sync function returning an awaitable)."""

# One precomputed chain entry: (name, handler, matcher, timeout or None, handler is known to be
# a coroutine function). Plain tuples unpack faster than attribute reads.
_Entry: TypeAlias = tuple[str, HookHandler, Matcher, float | None, bool]
# What a fast chain runs for one tool name: (handlers, their names, their indexes in the chain).
_Selection: TypeAlias = tuple[tuple[HookHandler, ...], tuple[str, ...], tuple[int, ...]]
_MEMO_LIMIT: Final = 256  # tool names memoised per chain; others are selected on every run


@dataclass(frozen=True, slots=True)
class HookRegistration:
    """One registered handler, as returned by ``Hooks.registrations``."""

    phase: str
    name: str
    handler: HookHandler
    match: str | re.Pattern[str] | None
    """``None`` matches every payload; exact tool names joined by ``|``; or a pattern searched
    in the tool name."""
    timeout: float | None


class _Chain:
    """One phase's handlers, precomputed at register time for ``run``.

    ``fast``: every handler is sync (as far as can be told) and has no timeout, so ``run`` can
    call them in a plain loop. ``select`` memoises, per tool name, which handlers match.
    """

    __slots__ = ("entries", "everything", "fast", "memo", "needs_name")

    def __init__(self, entries: tuple[_Entry, ...]) -> None:
        self.entries = entries
        self.fast = all(timeout is None and not is_async for _, _, _, timeout, is_async in entries)
        self.needs_name = any(matcher is not None for _, _, matcher, _, _ in entries)
        self.everything: _Selection = (
            tuple(e[1] for e in entries),
            tuple(e[0] for e in entries),
            tuple(range(len(entries))),
        )
        self.memo: dict[str | None, _Selection] = {}

    def pick(self, payload: Any) -> _Selection | None:
        """The handlers matching ``payload``'s tool name; None if it cannot be read."""
        # tool_name(payload), inlined for the common case (a dict with a str name)
        name = payload.get("tool_name") if type(payload) is dict else None
        if type(name) is not str:
            try:
                name = tool_name(payload)  # never raises for a dict
            except Exception:
                return None
        selection = self.memo.get(name)
        return self.select(name) if selection is None else selection

    def select(self, name: str | None) -> _Selection:
        selection = self.memo.get(name)
        if selection is None:
            picked = [i for i, e in enumerate(self.entries) if matches(e[2], name)]
            entries = self.entries
            selection = (
                tuple(entries[i][1] for i in picked),
                tuple(entries[i][0] for i in picked),
                tuple(picked),
            )
            if len(self.memo) < _MEMO_LIMIT:
                self.memo[name] = selection
        return selection


_EMPTY_CHAIN: Final = _Chain(())


class Hooks:
    """An immutable mapping of phase -> handlers in registration order.

    ``register`` returns a new value; ``run`` calls the matching handlers of one phase one at a
    time, in registration order, and stops at the first ``Halt`` (or failure).
    """

    __slots__ = ("_chains", "_registrations")

    _chains: dict[str, _Chain]
    _registrations: dict[str, tuple[HookRegistration, ...]]

    def __init__(self) -> None:
        self._set({phase: _EMPTY_CHAIN for phase in PHASES}, {phase: () for phase in PHASES})

    def _set(
        self, chains: dict[str, _Chain], registrations: dict[str, tuple[HookRegistration, ...]]
    ) -> None:
        # The one place the fields are written: by __init__, and on a new value by register.
        object.__setattr__(self, "_chains", chains)
        object.__setattr__(self, "_registrations", registrations)

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
        match: str | re.Pattern[str] | None = None,
        timeout: float | None = None,
    ) -> Hooks:
        """Return a new ``Hooks`` with ``handler`` appended to ``phase``; ``self`` is unchanged.

        ``match``: ``None``/``"*"`` (every payload), exact tool names joined by ``|``, or a
        compiled ``re.Pattern`` searched in the tool name. Everything is validated here, so a
        bad registration fails at startup rather than on the first tool call.
        """
        check_phase(phase)
        if not callable(handler):
            raise HookTypeError(f"hook handler must be callable, got {type(handler).__name__}")
        resolved_name = default_name(handler) if name is None else check_name(name)
        matcher = parse_match(match)
        resolved_timeout = check_timeout(timeout)

        registration = HookRegistration(
            phase=phase,
            name=resolved_name,
            handler=handler,
            match=None if matcher is None else match,
            timeout=resolved_timeout,
        )
        entry: _Entry = (resolved_name, handler, matcher, resolved_timeout, is_async(handler))

        chains = dict(self._chains)
        chains[phase] = _Chain((*chains[phase].entries, entry))
        registrations = dict(self._registrations)
        registrations[phase] = (*registrations[phase], registration)
        new = Hooks()
        new._set(chains, registrations)
        return new

    def handlers(self, phase: str) -> tuple[HookHandler, ...]:
        """The handlers of ``phase`` in registration order (the order ``run`` uses)."""
        check_phase(phase)
        return tuple(r.handler for r in self._registrations[phase])

    def registrations(self, phase: str) -> tuple[HookRegistration, ...]:
        """Like ``handlers``, with each handler's name, match and timeout."""
        check_phase(phase)
        return self._registrations[phase]

    async def run(self, phase: str, payload: Any) -> HookOutcome:
        """Run ``phase``'s matching handlers one at a time, in registration order.

        Each handler sees the payload as the previous one left it. The first ``Halt`` stops the
        chain; so does a handler that raises, runs past its timeout or returns no verdict (fail
        closed). Cancellation from outside, before or during the run, propagates (never a halt).
        """
        try:
            chain = self._chains[phase]
        except (KeyError, TypeError):
            raise HookValueError(unknown_phase(phase)) from None
        state = cancel_state()
        if start_pending(state):
            state = await run_started(state)
        if not chain.fast:
            outcome = await _run_chain(chain.entries, 0, payload, [], state)
        else:
            # Fast path, the hot path of every tool call (docs/architecture/hooks.md): a plain
            # loop over the handlers selected for this tool name; the first that answers
            # anything but None (or raises) hands over to the general loop.
            if chain.needs_name:
                picked = chain.pick(payload)
                if picked is None:  # the general loop fails closed naming the handler
                    return await _finish(_run_chain(chain.entries, 0, payload, [], state), state)
                handlers, names, indexes = picked
            else:
                handlers, names, indexes = chain.everything
            remaining = iter(handlers)
            try:
                for handler in remaining:
                    result = handler(payload)
                    if result is not None:
                        break
                else:
                    if finish_pending(state):
                        await run_finished(state)
                    return _outcome(False, None, None, payload, names, None)
            except BaseException as exc:
                done = len(handlers) - sum(1 for _ in remaining)
                outcome = await _fast_failed(exc, payload, names[:done], state)
            else:
                done = len(handlers) - sum(1 for _ in remaining)
                outcome = await _resume(chain.entries, indexes, done, payload, result, names, state)
        if finish_pending(state):
            await run_finished(state)
        return outcome


async def _resume(
    chain: tuple[_Entry, ...],
    indexes: tuple[int, ...],
    done: int,
    payload: Any,
    result: object,
    names: tuple[str, ...],
    state: CancelState,
) -> HookOutcome:
    """The fast loop's exit: its ``done``-th handler answered ``result`` (not ``None``).

    A ``Halt`` halts; an awaitable is awaited (the handler was async after all); a new payload
    is checked and the general loop (``_run_chain``) goes on after that handler.
    """
    ran_names = names[:done]
    ran = list(ran_names)
    name = ran_names[-1]
    if isinstance(result, Halt):
        return _outcome(True, result.reason, name, payload, ran_names, None)
    try:
        if inspect.isawaitable(result):
            result = await result
            task, baseline = state
            if task is not None and task.cancelling() > baseline:
                await propagate_outside_cancellation(task, baseline, None)
        if isinstance(result, Halt):
            return _outcome(True, result.reason, name, payload, ran_names, None)
        if result is not None:
            check_result(name, result)
            payload = result
    except BaseException as exc:
        await propagate_outside_cancellation(state[0], state[1], exc)
        return failed(name, exc, payload, ran)
    return await _run_chain(chain, indexes[done - 1] + 1, payload, ran, state)


async def _fast_failed(
    exc: BaseException, payload: Any, ran_names: tuple[str, ...], state: CancelState
) -> HookOutcome:
    """The fast loop's last handler (of ``ran_names``) raised ``exc``: halt, naming it."""
    await propagate_outside_cancellation(state[0], state[1], exc)
    return failed(ran_names[-1], exc, payload, list(ran_names))


async def _finish(outcome: Awaitable[HookOutcome], state: CancelState) -> HookOutcome:
    result = await outcome
    if finish_pending(state):
        await run_finished(state)
    return result


async def _run_chain(
    chain: tuple[_Entry, ...], start: int, payload: Any, ran: list[str], state: CancelState
) -> HookOutcome:
    """The general loop: ``chain[start:]`` with async handlers and timeouts.

    ``tool_name`` is read once, and again only after a handler rewrote the payload.
    """
    task, baseline = state
    name_of: Any = None
    name: str | None = None
    for index in range(start, len(chain)):
        handler_name, handler, matcher, timeout, is_async = chain[index]
        if matcher is not None:
            if payload is not name_of:
                try:
                    name = tool_name(payload)
                except Exception as exc:
                    ran.append(handler_name)  # the halting handler is in `ran`, as for any halt
                    reason = (
                        "could not read tool_name from the payload to match handler "
                        f"{handler_name!r}: {describe_reason(exc)}"
                    )
                    return _outcome(True, reason, handler_name, payload, tuple(ran), exc)
                name_of = payload
            if not matches(matcher, name):
                continue
        ran.append(handler_name)
        try:
            if timeout is not None:
                result = await _call_with_timeout(handler_name, handler, payload, timeout)
            else:
                result = handler(payload)
                if result is not None and (is_async or inspect.isawaitable(result)):
                    result = await result  # type: ignore[misc]
            if task is not None and task.cancelling() > baseline:
                await propagate_outside_cancellation(task, baseline, None)
            if result is None:
                continue
            if isinstance(result, Halt):
                return _outcome(True, result.reason, handler_name, payload, tuple(ran), None)
            check_result(handler_name, result)
        except BaseException as exc:
            await propagate_outside_cancellation(task, baseline, exc)
            return failed(handler_name, exc, payload, ran)
        payload = result
    return _outcome(False, None, None, payload, tuple(ran), None)


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
    return result
