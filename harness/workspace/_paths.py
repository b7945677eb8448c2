"""Where a workspace is, and how a path inside it is reached without leaving it.

    >>> import os, tempfile
    >>> from harness.workspace import open_beneath, resolve_workspace
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> os.makedirs(os.path.join(root, "pkg", "api"))
    >>> root_fd = os.open(root, os.O_RDONLY)
    >>> fd = open_beneath(root_fd, "pkg/api")   # each step O_NOFOLLOW: no symlink on the way
    >>> os.close(fd); os.close(root_fd)

``resolve_workspace`` gives the real path that names the workspace everywhere (the cache key,
the boundary of every symlink check). Inside it, nothing is reached by a path string: each
directory is opened relative to its parent's descriptor with ``O_DIRECTORY | O_NOFOLLOW``, so
a directory swapped for a symlink while harness reads is refused by the kernel rather than
followed. ``PATH_MAX`` is still honoured (``too_long``): a path the rest of the system could
not open is reported, as before descriptors were used, rather than handed on.
"""

from __future__ import annotations

import errno
import os

from harness.errors import HarnessError
from harness.workspace._reading import DIR_FLAGS, reason

__all__ = ["PATH_MAX", "WorkspaceNotFoundError", "open_beneath", "resolve_workspace", "too_long"]


class WorkspaceNotFoundError(HarnessError, FileNotFoundError):
    """The workspace given to ``load`` does not exist or is not a directory."""


PATH_MAX = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096


def resolve_workspace(workspace: str | os.PathLike[str]) -> str:
    """The workspace's real path; ``WorkspaceNotFoundError`` if it is missing or not a dir."""
    given = os.fspath(workspace)
    if not given:
        # realpath("") is the current directory: an unset variable must not mean "walk here".
        raise WorkspaceNotFoundError(
            "workspace is an empty path: pass a directory ('.' for the current one)"
        )
    try:
        real = os.path.realpath(given, strict=True)
    except ValueError as exc:  # a NUL, or a character the file system cannot encode
        raise WorkspaceNotFoundError(
            f"workspace {given!r} cannot be a path ({exc}): pass the path of an existing directory"
        ) from None
    except OSError as exc:
        raise WorkspaceNotFoundError(
            f"workspace {given!r} does not exist ({reason(exc)}): pass the path of an "
            "existing directory"
        ) from exc
    if not os.path.isdir(real):
        raise WorkspaceNotFoundError(
            f"workspace {given!r} is not a directory: pass the directory that holds the "
            "project (its root AGENTS.md, if any, lives there)"
        )
    return real


def name_length(name: str) -> int:
    """Bytes of ``name`` on disk (its file-system encoding)."""
    return len(os.fsencode(name)) if not name.isascii() else len(name)


def too_long(length: int) -> OSError | None:
    """``ENAMETOOLONG`` if an absolute path of ``length`` bytes is past ``PATH_MAX``."""
    if length < PATH_MAX:
        return None
    return OSError(errno.ENAMETOOLONG, os.strerror(errno.ENAMETOOLONG))


def open_beneath(root_fd: int, rel: str) -> int:
    """A descriptor of directory ``rel`` ("/"-separated, relative to ``root_fd``), opened one
    component at a time with ``DIR_FLAGS`` (raises ``OSError``, ``ELOOP`` for a symlink)."""
    fd = os.open(".", DIR_FLAGS, dir_fd=root_fd)
    for part in rel.split("/") if rel else ():
        try:
            child = os.open(part, DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd
