""" "The same file" across one read of a workspace: equal identities are loaded once.

    >>> import os, tempfile
    >>> from harness.workspace import Pins, read_file
    >>> top = tempfile.mkdtemp()
    >>> for name in ("a.md", "b.md"):
    ...     with open(os.path.join(top, name), "w") as out:
    ...         _ = out.write("same words\\n")
    >>> os.link(os.path.join(top, "a.md"), os.path.join(top, "c.md"))
    >>> pins = Pins()
    >>> ids = []
    >>> for name in ("a.md", "b.md", "c.md"):
    ...     read = read_file(os.path.join(top, name), cap=100, keep=True)
    ...     ids.append(pins.identity(read, name))
    >>> ids[0] == ids[2], ids[0] == ids[1]
    (True, False)
    >>> pins.release()

``(st_dev, st_ino)`` names a file only while the file exists: once the last name and the last
descriptor are gone the number is free, and a file created during the read (the temporary file
of an editor's atomic save, say) may get it, and would then be dropped as "the same file" as
something it has nothing to do with. Hence:

- ``(dev, ino)``: the descriptor of the file read is held open until the read of the workspace
  ends (``Pins.release``; one per distinct file), so the number cannot be reused meanwhile;
  equal numbers are then truly one file, whatever the route (hard link, symlink, bind mount).
  This is the normal case.
- Past the process-wide descriptor budget (``PINS``), identities must not merge two files by
  mistake: a file with one link (``st_nlink <= 1``) is named by its real workspace-relative
  path (the only path it has; a symlink resolves to it), a hard-linked file by ``(dev, ino,
  sha256 of its bytes)``, so a reused number with other content is never merged. The residual
  cost is benign: a file bind-mounted at two places, or hard-linked and rewritten between its
  two reads, is loaded twice.

Comparing ``st_ctime_ns`` too would not do: timestamps come from a coarse clock, and a file
freed and a file created within one tick carry the same ctime.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import threading

from harness.workspace._reading import FileRead

if sys.platform != "win32":
    import resource

__all__ = ["PINS", "Identity", "PinBudget", "Pins", "pin_capacity"]

Identity = tuple[int, int] | tuple[int, int, bytes] | str
"""What makes two reads "the same file" (see the module docstring)."""


class PinBudget:
    """Descriptors all reads of this process may hold open at once.

    Process-wide, so concurrent loads cannot add up to ``EMFILE``: a quarter of the soft
    ``RLIMIT_NOFILE`` (at most 512), read on first use. Two budgets exist: ``PINS`` for the
    files pinned by ``Pins``, and the walk's for directories it keeps open for their children.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: int | None = None

    def take(self) -> bool:
        with self._lock:
            if self._free is None:
                self._free = pin_capacity()
            if self._free <= 0:
                return False
            self._free -= 1
            return True

    def take_up_to(self, count: int) -> int:
        """Take at most ``count`` descriptors; how many were taken (0: none is free)."""
        with self._lock:
            if self._free is None:
                self._free = pin_capacity()
            taken = max(0, min(count, self._free))
            self._free -= taken
            return taken

    def give_back(self, count: int) -> None:
        if count:
            with self._lock:
                assert self._free is not None
                self._free += count


def pin_capacity() -> int:
    soft = 1024
    if sys.platform != "win32":
        with contextlib.suppress(OSError, ValueError):
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY or soft <= 0:
            soft = 4096
    return min(512, soft // 4)


PINS = PinBudget()


class Pins:
    """The files one read of a workspace holds open to pin their identities (thread-safe)."""

    def __init__(self) -> None:
        self._pinned: dict[tuple[int, int], int] = {}  # (dev, ino) -> descriptor held open
        self._lock = threading.Lock()

    def identity(self, read: FileRead, real_rel: str) -> Identity:
        """The identity of the file ``read`` (a successful ``read_file(..., keep=True)``),
        which takes over its descriptor: pinned, or closed."""
        fd, info = read.fd, read.info
        assert fd is not None and info is not None, "identity() needs a kept, successful read"
        read.fd = None
        key = (info.st_dev, info.st_ino)
        with self._lock:
            if key in self._pinned:  # pinned: this number still names that very file
                os.close(fd)
                return key
            if PINS.take():
                self._pinned[key] = fd
                return key
        os.close(fd)
        if info.st_nlink <= 1:
            return real_rel
        return (info.st_dev, info.st_ino, hashlib.sha256(read.data).digest())

    def release(self) -> None:
        """Close the descriptors held (the read of the workspace is over)."""
        with self._lock:
            held = list(self._pinned.values())
            self._pinned.clear()
        for fd in held:
            with contextlib.suppress(OSError):  # ours and open: cannot fail, but never raise
                os.close(fd)
        PINS.give_back(len(held))
