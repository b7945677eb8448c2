"""Typed errors of the runtime.

Every error says what happened and what to do about it, so the host of a supervision tree can
react to a class rather than parse a message; all are ``harness.HarnessError`` s::

    from harness.runtime import MaxRestartsExceeded, NoProc

    try:
        reply = await actor.call("ping")
    except NoProc:
        ...  # not running (yet, or any more): retry once its supervisor restarted it

    try:
        async with Supervisor(children) as sup:
            ...
    except MaxRestartsExceeded as exc:
        print(exc.child_id, exc.reason)  # the child that crashed too often, and why
"""

from __future__ import annotations

from harness.errors import HarnessError, describe_reason

__all__ = [
    "ActorError",
    "ActorExited",
    "AdminCallBeforeReady",
    "AlreadyRegistered",
    "CallingSelf",
    "ChildRunning",
    "DuplicateChild",
    "FailedToStartChild",
    "MailboxFull",
    "MaxChildrenReached",
    "MaxRestartsExceeded",
    "NoProc",
    "SupervisorError",
    "SupervisorNotRunning",
    "UnknownChild",
]


class SupervisorError(HarnessError):
    """Base class of the supervisor's errors."""


class MaxRestartsExceeded(SupervisorError):
    """More than ``max_restarts`` restarts happened within ``max_seconds``.

    All children were stopped (in reverse start order) before this left the ``async with``.
    """

    def __init__(
        self,
        supervisor: str = "supervisor",
        *,
        max_restarts: int = 0,
        max_seconds: float = 0.0,
        child_id: str = "?",
        reason: object = None,
    ) -> None:
        self.supervisor = supervisor
        self.max_restarts = max_restarts
        self.max_seconds = max_seconds
        self.child_id = child_id
        self.reason = reason
        if reason == "normal":
            # A permanent child that keeps returning: nothing crashed, the restart type is wrong.
            last = f"child {child_id!r} exited normally"
            advice = (
                "A permanent child is restarted even after a normal exit: make a child that is "
                "meant to finish transient (restarted only after a crash) or temporary, or keep "
                "it running; raise max_restarts / lower max_seconds if such bursts are expected."
            )
        else:
            last = f"child {child_id!r} exited with {describe_reason(reason)}"
            advice = (
                "Fix the crashing child, or raise max_restarts / lower max_seconds if such "
                "bursts are expected."
            )
        super().__init__(
            f"supervisor {supervisor!r} reached its maximum restart intensity: more than "
            f"{max_restarts} restart(s) within {max_seconds} s (last: {last}); all children "
            f"were stopped. {advice}"
        )


class MaxChildrenReached(SupervisorError, RuntimeError):
    """A DynamicSupervisor already runs ``max_children`` children; nothing was started."""

    def __init__(self, supervisor: str, max_children: int) -> None:
        self.supervisor = supervisor
        self.max_children = max_children
        super().__init__(
            f"supervisor {supervisor!r} already has its maximum of {max_children} children "
            "(restarting ones count); nothing was started. Terminate a child first, or raise "
            "max_children"
        )


class FailedToStartChild(SupervisorError):
    """A child raised (or returned) before signalling ``task_status.started()``."""

    def __init__(self, id: str, cause: BaseException) -> None:
        self.id = id
        self.cause = cause
        super().__init__(
            f"child {id!r} failed to start: {describe_reason(cause)}. Its start function must call "
            "task_status.started() once ready; see the cause for why it did not."
        )


class UnknownChild(SupervisorError, KeyError):
    """No child with this id is known to the supervisor."""

    def __init__(self, id: str, known: list[str]) -> None:
        self.id = id
        self.known = known
        super().__init__(f"no child with id {id!r}; known ids: {known}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class DuplicateChild(SupervisorError, ValueError):
    """A child with this id already exists (running or not), or appears twice in a child list.

    ``in_child_list``: raised by the ``Supervisor`` constructor, whose list repeats the id.
    """

    def __init__(self, id: str, status: str, *, in_child_list: bool = False) -> None:
        self.id = id
        self.status = status
        self.in_child_list = in_child_list
        if in_child_list:
            message = (
                f"the id {id!r} appears more than once in the Supervisor's child list; ids in "
                "the child list must be unique: give each ChildSpec its own id"
            )
        else:
            message = (
                f"a child with id {id!r} already exists (status {status!r}); use a unique id, "
                "or terminate_child + delete_child the existing one first"
            )
        super().__init__(message)


class ChildRunning(SupervisorError):
    """The admin call needs a stopped child, but this one is running or restarting."""

    def __init__(self, id: str, status: str, action: str) -> None:
        self.id = id
        self.status = status
        super().__init__(
            f"cannot {action} child {id!r}: it is {status}; call terminate_child({id!r}) first"
        )


class SupervisorNotRunning(SupervisorError, RuntimeError):
    """An admin call was made outside the supervisor's ``async with`` (or while it stops)."""

    def __init__(self, action: str) -> None:
        self.action = action
        super().__init__(
            f"cannot {action}: the supervisor is not running (or is stopping); use it inside "
            "`async with`"
        )


class AdminCallBeforeReady(SupervisorError, RuntimeError):
    """A child called its supervisor's admin API before signalling ``task_status.started()``.

    The supervisor serialises admin calls with starting children, and it is itself waiting
    for this child's readiness: the call could never proceed, so it fails at once instead.
    """

    def __init__(self, action: str, id: str) -> None:
        self.action = action
        self.id = id
        super().__init__(
            f"child {id!r} called {action}() on its supervisor before signalling ready; the "
            "supervisor waits for that readiness before it serves admin calls, so this would "
            "never proceed. Call task_status.started() first, then call the supervisor."
        )


class ActorError(HarnessError):
    """Base class of the actor errors."""


class ActorExited(ActorError):
    """The actor (or a ``start_nolink`` task) stopped before replying: it crashed, or was
    shut down, with ``reason``."""

    def __init__(self, reason: object, what: str = "actor") -> None:
        self.reason = reason
        super().__init__(
            f"the {what} exited before replying (reason: {describe_reason(reason)}); if it is "
            "supervised it may be restarted, so the call can be retried"
        )


class NoProc(ActorError):
    """The actor is not running (never started, stopped, or between crash and restart)."""

    def __init__(self, actor: str = "the actor") -> None:
        self.actor = actor
        super().__init__(
            f"{actor} is not running; start it under a Supervisor (actor.child_spec()) "
            "and retry once it is running"
        )


class MailboxFull(ActorError):
    """``cast`` found the bounded mailbox full: the message was NOT delivered."""

    def __init__(self, actor: str, size: int) -> None:
        self.actor = actor
        self.size = size
        super().__init__(
            f"the mailbox of {actor} is full ({size} messages); the cast was not delivered. "
            "Slow down, use `await actor.call(...)` (which waits for room), or raise "
            "mailbox_size"
        )


class CallingSelf(ActorError, HarnessError, RuntimeError):
    """An actor called itself (from a callback, or a task started inside one): OTP's
    ``calling_self``. The call could never be answered, since the actor handles one message
    at a time and is busy with the caller, so it fails at once instead of at its timeout."""

    def __init__(self, actor: str = "the actor") -> None:
        self.actor = actor
        super().__init__(
            f"{actor} called itself: it would wait for its own reply forever. Handle the "
            "message directly (call the method, not actor.call), or cast it to yourself"
        )


class AlreadyRegistered(ActorError, ValueError):
    """The unique key is taken by another actor that is starting or running."""

    def __init__(self, key: object, holder: str) -> None:
        self.key = key
        self.holder = holder
        super().__init__(
            f"the key {key!r} is already registered to {holder}; a unique registry holds one "
            "actor per key: use another key, stop that actor first, or use "
            "Registry(keys='duplicate')"
        )
