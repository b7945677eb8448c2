"""A bounded, thread-safe memo for pure functions of immutable values (the manifest's caches).

::

    from harness.prompt_assembler._memo import Memo

    memo: Memo[str, int] = Memo(max_size=1000)
    if (value := memo.get("key")) is None:
        value = 42
        memo.put("key", value, size=3)
    assert memo.get("key") == 42
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["Memo"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """Values by key, at most ``max_size`` in total size, oldest evicted first."""

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.size = 0  # the sum of the held entries' sizes
        self._entries: dict[K, tuple[V, int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The value put for ``key``, or None."""
        entry = self._entries.get(key)
        return None if entry is None else entry[0]

    def put(self, key: K, value: V, size: int) -> None:
        """Remember ``value`` for ``key`` (nothing if ``size`` alone exceeds ``max_size``)."""
        if size > self.max_size:
            return
        entries = self._entries
        with self._lock:
            if key in entries:
                return
            entries[key] = (value, size)
            self.size += size
            while self.size > self.max_size:
                oldest = next(iter(entries))
                self.size -= entries.pop(oldest)[1]
