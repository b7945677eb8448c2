"""The traced methods ``instrument`` swaps in, and how they are put back.

Each patch replaces one method on one class with a wrapper that calls the original and tells
``Signals`` what it saw; ``restore`` puts the original back. Patching, rather than a flag
checked in each method, keeps the uninstrumented hot paths (a hook chain runs in about a
microsecond) exactly as they are.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import time
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import StatusCode

from harness.telemetry._signals import Signals

__all__ = ["Patch", "install"]

Wrapper = Callable[[Signals, Callable[..., Any]], Callable[..., Any]]

# Set by the traced source read while a traced load runs: that load read files (a miss).
_READ: ContextVar[list[float] | None] = ContextVar("harness_telemetry_read", default=None)


@dataclass(slots=True)
class Patch:
    owner: type
    name: str
    original: Any

    def restore(self) -> None:
        setattr(self.owner, self.name, self.original)


@contextlib.contextmanager
def _current(
    signals: Signals, name: str, attributes: dict[str, Any] | None = None
) -> Iterator[Any]:
    """A current span; a failure sets its status and ``error.type`` only: an exception's
    message may quote a unit or a payload, which only ``capture_content`` lets through."""
    with signals.tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except BaseException as exc:
            span.set_status(StatusCode.ERROR)
            span.set_attribute("error.type", type(exc).__qualname__)
            if signals.capture_content:
                span.record_exception(exc)
            raise


def _traced_build(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def build(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _current(signals, "harness.build") as span:
            result = await original(self, *args, **kwargs)
            span.set_attributes(signals.build_attributes(result))  # metrics even if unsampled
            return result

    return build


def _traced_load(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def scoped(self: Any, workspace: Any, agent: str, project_id: Any, targets: Any) -> Any:
        # One span, started after the fact (nothing runs under it): half the cost of a
        # current span around the call, on the path of every warm build.
        started = time.time_ns()
        read: list[float] = []
        token = _READ.set(read)
        name = "harness.instruction_files.load"
        try:
            result = await original(self, workspace, agent, project_id, targets)
        except Exception as exc:
            failed = {"error.type": type(exc).__qualname__}
            span = signals.tracer.start_span(name, attributes=failed, start_time=started)
            span.set_status(StatusCode.ERROR)
            span.end()
            raise
        finally:
            _READ.reset(token)
        attributes = signals.load_attributes(
            result, read=bool(read), scoped=bool(targets), seconds=read[0] if read else None
        )
        signals.tracer.start_span(name, attributes=attributes, start_time=started).end()
        return result

    return scoped


def _timed_read(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def read_sources(self: Any, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        result = await original(self, *args, **kwargs)
        read = _READ.get()
        if read is not None:
            read.append(time.perf_counter() - started)
        return result

    return read_sources


def _traced_hooks(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def run(self: Any, phase: str, payload: Any) -> Any:
        attributes = signals.payload_attributes(phase, payload)
        with _current(signals, "harness.hooks.run", attributes) as s:
            started = time.perf_counter()
            outcome = await original(self, phase, payload)
            s.set_attributes(signals.hook_attributes(outcome, phase, time.perf_counter() - started))
            return outcome

    return run


def _traced_command(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    async def run(self: Any, data: bytes) -> Any:
        attributes: dict[str, Any] = {"harness.hooks.phase": self.phase}
        if signals.capture_content:
            attributes["harness.hooks.command"] = self.command
        with _current(signals, "harness.hooks.command", attributes) as s:
            started = time.perf_counter()
            try:
                result = await original(self, data)
            finally:
                s.set_attribute("harness.hooks.command.duration", time.perf_counter() - started)
            s.set_attribute("harness.hooks.command.exit_status", result[0])
            return result

    return run


def _restarted(table: Any, child_id: str) -> bool:
    """Whether the child just started had started before (its count is raised before the
    log). Searched from the newest: a dynamic supervisor's new child is the last of
    thousands, and a restart is rare."""
    for child in reversed(table._children):
        if child.spec.id == child_id:
            return bool(child.restarts > 0)
    return False


def _runtime_log(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def log(self: Any, level: int, event: str, child_id: str, detail: str = "") -> None:
        original(self, level, event, child_id, detail)
        restart = event == "child_started" and _restarted(self, child_id)
        signals.runtime_event(event, self.name, child_id, detail, restart=restart)

    return log


def _listener_log(signals: Signals, original: Callable[..., Any]) -> Callable[..., Any]:
    connected: weakref.WeakSet[Any] = weakref.WeakSet()

    @functools.wraps(original)
    def log(self: Any, level: int, event: str, detail: str) -> None:
        original(self, level, event, detail)
        if event == "listener_connected" and self not in connected:
            connected.add(self)
            signals.listener_event(event)
        elif event == "listener_disconnected" and self in connected:
            connected.discard(self)
            signals.listener_event(event)

    return log


_TARGETS: tuple[tuple[str, str, str, Wrapper], ...] = (
    ("harness._harness", "Harness", "build", _traced_build),
    ("harness.instruction_files._files", "InstructionFiles", "_scoped", _traced_load),
    ("harness.instruction_files._files", "InstructionFiles", "_read_sources", _timed_read),
    ("harness.hooks._hooks", "Hooks", "run", _traced_hooks),
    ("harness.hooks.command", "CommandHook", "_run", _traced_command),
    ("harness.runtime._children", "ChildTable", "log", _runtime_log),
    ("harness.instruction_files.stores.postgres._listener", "Listener", "_log", _listener_log),
)


def _targets() -> Iterator[tuple[type, str, Wrapper]]:
    for module_name, class_name, name, wrapper in _TARGETS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # the PostgreSQL listener without asyncpg: nothing to trace there
            continue
        yield getattr(module, class_name), name, wrapper


def install(signals: Signals) -> list[Patch]:
    """Swap the traced methods in; the patches that put the originals back."""
    patches: list[Patch] = []
    for owner, name, wrapper in _targets():
        original = owner.__dict__[name]
        patches.append(Patch(owner, name, original))
        setattr(owner, name, wrapper(signals, original))
    return patches
