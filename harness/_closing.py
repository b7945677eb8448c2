"""``async with`` for anything closed by ``aclose()``: one definition of the two methods.

::

    class Store(AsyncClosing):
        async def aclose(self) -> None: ...

    async with Store() as store:   # aclose() runs on the way out, whatever happened
        ...
"""

from __future__ import annotations

from types import TracebackType
from typing import Self

__all__ = ["AsyncClosing"]


class AsyncClosing:
    """Entering gives the object itself; leaving awaits its ``aclose()``."""

    __slots__ = ()

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
