"""Loading a directory's ``.gitignore`` as git reads it: regular files only, within a cap.

    >>> import os, tempfile
    >>> from harness.workspace import DIR_FLAGS, load_gitignore
    >>> top = tempfile.mkdtemp()
    >>> with open(os.path.join(top, ".gitignore"), "w") as out:
    ...     _ = out.write("*.env\\n")
    >>> fd = os.open(top, DIR_FLAGS)
    >>> rules, problems = load_gitignore("", dir_fd=fd)
    >>> type(rules).__name__, problems
    ('IgnoreFile', [])
    >>> os.close(fd)

The walk and the symlink policy both load through here, so they agree on which files apply:
a ``.gitignore`` that is a symlink or a special file is not applied (as in git); one that
exists but cannot be read or is over ``GITIGNORE_MAX_BYTES`` cannot be applied, and the caller
fails closed (what it ignores is unknown). The matcher itself (``IgnoreFile``) is separate.
"""

from __future__ import annotations

from harness.workspace._ignore import IgnoreFile
from harness.workspace._reading import read_file, reason

__all__ = ["GITIGNORE", "GITIGNORE_MAX_BYTES", "load_gitignore", "read_gitignore"]

GITIGNORE = ".gitignore"
GITIGNORE_MAX_BYTES = 1024 * 1024


def read_gitignore(path: str = GITIGNORE, *, dir_fd: int | None = None) -> bytes | str | None:
    """A ``.gitignore``'s bytes; None if it is absent or not a regular file (never followed
    through a symlink); or, as a string, why it exists but cannot be applied."""
    cap = GITIGNORE_MAX_BYTES
    read = read_file(path, cap=cap, dir_fd=dir_fd)
    if read.problem is None:
        return read.data
    if read.problem == "special" or (
        read.problem == "open" and isinstance(read.error, FileNotFoundError)
    ):
        return None
    if read.error is not None:
        return f"cannot be read ({reason(read.error)})"
    return f"is over the {cap}-byte cap"


def load_gitignore(
    rel: str, *, dir_fd: int | None = None, path: str = GITIGNORE
) -> tuple[IgnoreFile | str | None, list[str]]:
    """The rules of directory ``rel``'s ``.gitignore`` (None if none apply, or why it cannot
    be applied), and the problems of its lines (each line with a problem is ignored)."""
    data = read_gitignore(path, dir_fd=dir_fd)
    if data is None or isinstance(data, str):
        return data, []
    ignore, problems = IgnoreFile.parse(rel, data)
    return (None if ignore.empty else ignore), problems
