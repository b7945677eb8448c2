"""Finding and killing what a command hook left behind outside its process group (Linux).

A hook runs as the leader of its own session; a process it started may move to another
process group of that session, or leave the session (``setsid()``) while it keeps the hook's
stdout open. Both are found through ``/proc``: by session id, and by holding one of the hook's
pipes (the same inode). Elsewhere there is no ``/proc`` and nothing is done::

    import anyio
    from harness.hooks._leftovers import kill_leftovers

    anyio.run(kill_leftovers, 4242, ())   # no such session: nothing to kill

A process that left the session and closed or replaced the pipes has no link back to the hook
and cannot be found; neither can one started through another service (``at``, ``systemd-run``).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable

import anyio.to_thread

__all__ = ["kill_leftovers", "leftovers"]

_PROC = "/proc"


async def kill_leftovers(session: int, pipes: Iterable[int]) -> None:
    """SIGKILL every process of ``session`` and every process holding one of ``pipes``
    (file descriptors of ours), except this process; in a worker thread."""
    inodes = frozenset(os.fstat(fd).st_ino for fd in pipes)
    await anyio.to_thread.run_sync(_kill_all, session, inodes)


def _kill_all(session: int, inodes: frozenset[int]) -> None:
    for pid in leftovers(session, inodes):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def leftovers(session: int, inodes: frozenset[int]) -> list[int]:
    """Live processes (not this one) in ``session`` or holding a pipe of one of ``inodes``."""
    if not os.path.isdir(_PROC):
        return []
    me = os.getpid()
    targets = {f"pipe:[{inode}]" for inode in inodes}
    found = []
    for entry in os.listdir(_PROC):
        if not entry.isdigit() or int(entry) == me:
            continue
        state = _stat(entry)
        if state is None or state[0] in "ZX":
            continue
        if state[1] == session or (targets and _holds(entry, targets)):
            found.append(int(entry))
    return found


def _stat(pid: str) -> tuple[str, int] | None:
    """(state letter, session id) of a process, or None when it is gone."""
    try:
        with open(f"{_PROC}/{pid}/stat", encoding="utf-8", errors="replace") as file:
            text = file.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[3])


def _holds(pid: str, targets: set[str]) -> bool:
    directory = f"{_PROC}/{pid}/fd"
    try:
        names = os.listdir(directory)
    except OSError:  # gone, or not ours to look at
        return False
    for name in names:
        with contextlib.suppress(OSError):
            if os.readlink(f"{directory}/{name}") in targets:
                return True
    return False
