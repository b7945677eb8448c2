"""Noticing a manifest store whose file was truncated or replaced under a running Harness.

SQLite trusts its own page cache and write-ahead-log index: after another program truncates
the store file or its ``-wal`` log, commits still succeed, and the records vanish at the next
checkpoint. So before and after each write the store's two files are looked at (two ``stat``
calls); when either shrank or was replaced, a fresh connection (which trusts no cache) runs
``PRAGMA quick_check``, and a failure makes this and every later write a
``ManifestStoreError``::

    watch = FileWatch(path)
    watch.before_write()        # raises ManifestStoreError if the files are broken
    ...                         # BEGIN ... COMMIT
    watch.after_write()         # the same check for what happened during the write

A store file never shrinks on its own here (no auto-vacuum), and the log only does when a
checkpoint truncates it; that one case costs a check that then passes.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from harness.manifests._errors import ManifestStoreError

__all__ = ["FileWatch"]

_Sizes = tuple[int, int, int, int]
"""(store inode, store size, log inode, log size); a missing log is (0, 0)."""


def _sizes(path: Path) -> tuple[_Sizes, os.stat_result | None]:
    """The sizes, and the store file's own ``stat`` (None when it is missing)."""
    try:
        main = os.stat(path)
    except OSError:
        return (0, 0, 0, 0), None
    try:
        wal = os.stat(f"{path}-wal")
    except OSError:
        return (main.st_ino, main.st_size, 0, 0), main
    return (main.st_ino, main.st_size, wal.st_ino, wal.st_size), main


def _shrank(before: _Sizes, now: _Sizes) -> bool:
    main_ino, main_size, wal_ino, wal_size = before
    if now[0] != main_ino or now[1] < main_size:
        return True
    if wal_ino == 0:
        return False  # no log yet: nothing of ours is in one
    return now[2] != wal_ino or now[3] < wal_size


class FileWatch:
    """The last sizes seen of one store's files, and whether they were found broken."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen = _sizes(path)[0]
        self._broken: str | None = None

    def before_write(self, check: Callable[[os.stat_result | None], None] | None = None) -> None:
        """Raise ``ManifestStoreError`` if the files are (or were found) broken. ``check``
        first gets the store file's ``stat`` (None when it is missing), for the caller's own
        checks: every ``stat`` lets other threads take the interpreter lock, and a writer
        thread then waits for it back from a busy event loop, so one serves both."""
        self._check(check)

    def after_write(self) -> None:
        """After a commit: raise if the files broke meanwhile (the commit is then not durable)."""
        self._check(None)

    def _check(self, check: Callable[[os.stat_result | None], None] | None) -> None:
        if self._broken is not None:
            raise ManifestStoreError(self._broken)
        now, info = _sizes(self.path)
        if check is not None:
            check(info)
        if _shrank(self._seen, now):
            problem = _quick_check(self.path)
            if problem is not None:
                self._broken = (
                    f"manifest store {str(self.path)!r} was truncated or damaged while in use "
                    f"({problem}): records written since may be lost; restore it from a "
                    "backup or record to a new path, then restart the Harness"
                )
                raise ManifestStoreError(self._broken)
        self._seen = now


def _quick_check(path: Path) -> str | None:
    """What a fresh read-only connection finds wrong with the store (None: nothing)."""
    try:
        uri = path.absolute().as_uri() + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=5.0)) as connection:
            rows = connection.execute("PRAGMA quick_check").fetchall()
    except sqlite3.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    found = [str(row[0]) for row in rows]
    return None if found == ["ok"] else "; ".join(found[:3])
