"""What travels through an actor's mailbox: calls (with the caller's future), casts, infos."""

from __future__ import annotations

import asyncio
from typing import Any, Final, TypeAlias

from harness.runtime._errors import ActorExited

__all__ = ["NORMAL_STOPS", "Caller", "Cast", "Envelope", "ExitReason", "Info", "exited", "fail"]

ExitReason: TypeAlias = BaseException | str
"""Why an actor stopped: the exception that crashed it, ``"normal"`` or ``"shutdown"``."""

NORMAL_STOPS: Final = ("normal", "shutdown")


class Caller:
    """A call waiting for its reply; what ``defer()`` hands out to answer with ``reply``."""

    __slots__ = ("future", "msg")

    def __init__(self, msg: Any, future: asyncio.Future[Any]) -> None:
        self.msg = msg
        self.future = future


class Cast:
    __slots__ = ("msg",)

    def __init__(self, msg: Any) -> None:
        self.msg = msg


class Info(Cast):
    __slots__ = ()


Envelope: TypeAlias = Caller | Cast | None  # None: a wake-up (an outside stop())


def exited(reason: ExitReason) -> ActorExited:
    error = ActorExited(reason)
    if isinstance(reason, BaseException):
        error.__cause__ = reason
    return error


def fail(call: Caller, reason: ExitReason) -> None:
    if not call.future.done():
        call.future.set_exception(exited(reason))
