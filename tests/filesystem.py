"""Filesystem probes shared by test directories (import as ``tests.filesystem``)."""

from __future__ import annotations

from pathlib import Path


def reuses_inodes_at_once(directory: Path) -> bool:
    """Whether this filesystem hands a just-freed inode number to the next new file."""
    for _ in range(20):
        first = directory / "probe-a"
        first.write_text("a")
        number = first.stat().st_ino
        first.unlink()
        second = directory / "probe-b"
        second.write_text("b")
        reused = second.stat().st_ino == number
        second.unlink()
        if reused:
            return True
    return False
