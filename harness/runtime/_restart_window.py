"""The restart intensity of a supervisor: at most N restarts in any T seconds.

``Supervisor(max_restarts=N, max_seconds=T)`` keeps one of these; a restart it refuses makes the
supervisor give up with ``MaxRestartsExceeded``. Used on its own::

    from harness.runtime._restart_window import RestartWindow

    window = RestartWindow(max_restarts=2, max_seconds=5.0)
    assert window.add(0.0) and window.add(1.0)  # two restarts within 5 s: allowed
    assert not window.add(2.0)                  # a third one: the intensity is exceeded
    assert window.add(7.5)                      # 0.0 and 1.0 have left the window
"""

from __future__ import annotations

from collections import deque

__all__ = ["RestartWindow"]


class RestartWindow:
    """OTP's restart intensity: at most ``max_restarts`` restarts in any ``max_seconds``."""

    __slots__ = ("_times", "max_restarts", "max_seconds")

    def __init__(self, max_restarts: int, max_seconds: float) -> None:
        self.max_restarts = max_restarts
        self.max_seconds = max_seconds
        self._times: deque[float] = deque(maxlen=max_restarts + 1)

    def __len__(self) -> int:
        return len(self._times)

    def clear(self) -> None:
        self._times.clear()

    def add(self, now: float) -> bool:
        """Record a restart at ``now``; False if that exceeds the intensity."""
        times = self._times
        while times and now - times[0] >= self.max_seconds:
            times.popleft()
        times.append(now)
        return len(times) <= self.max_restarts

    def times(self) -> tuple[float, ...]:
        return tuple(self._times)
