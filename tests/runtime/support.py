"""Helpers the runtime tests import (conftest cannot be imported under importlib mode)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio


async def until(predicate: Callable[[], bool]) -> None:
    """Return once ``predicate()`` holds (callers bound this with ``anyio.fail_after``)."""
    while not predicate():  # noqa: ASYNC110 (for states that no event announces)
        await anyio.sleep(0.001)


class Boom(Exception):
    """The crash a scripted child raises."""


def crash_on(event: anyio.Event) -> Callable[[Any], Awaitable[None]]:
    """A start function that signals ready, then crashes with ``Boom`` once ``event`` is set."""

    async def crasher(task_status: Any) -> None:
        task_status.started()
        await event.wait()
        raise Boom("crasher")

    return crasher
