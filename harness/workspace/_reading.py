"""Reading one workspace file safely: never blocking, never through a symlink, never past a cap.

    >>> import os, tempfile
    >>> from harness.workspace import DIR_FLAGS, decode, read_file
    >>> top = tempfile.mkdtemp()
    >>> with open(os.path.join(top, "AGENTS.md"), "wb") as out:
    ...     _ = out.write(b"\\xef\\xbb\\xbfbe kind\\n")
    >>> fd = os.open(top, DIR_FLAGS)
    >>> read = read_file("AGENTS.md", cap=1024, dir_fd=fd)
    >>> decode(read.data)
    ('be kind\\n', ['altered: leading UTF-8 byte order mark removed'])
    >>> read.close(); os.close(fd)

``read_file`` is the one capped reader of harness: it opens ``name`` relative to a directory
descriptor with ``OPEN_FLAGS`` (``O_NONBLOCK``: a FIFO cannot hang the open; ``O_NOFOLLOW``: a
name swapped for a symlink is refused by the kernel), checks with ``fstat`` that it is a
regular file, refuses a size over the cap before reading, and reads at most one byte past
the cap (a file growing meanwhile is caught). The caller words the problem for its layer
(``FileRead.problem``), and may keep the descriptor open (``FileRead.fd``) to pin the file's
identity (see ``harness.workspace._identity``).
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DIR_FLAGS",
    "OPEN_FLAGS",
    "FileRead",
    "decode",
    "kind_of",
    "read_capped",
    "read_file",
    "reason",
]

OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""How every workspace file is opened: never blocking (a FIFO), never through a symlink."""
DIR_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
"""How every workspace directory is opened: a directory only, never through a symlink."""
_READ_CHUNK = 1024 * 1024


def reason(exc: OSError) -> str:
    """The short human reason of an ``OSError`` (``Permission denied``)."""
    return exc.strerror or type(exc).__name__


def kind_of(mode: int) -> str:
    """How a warning names a file that is not a regular one (``a FIFO``, ...)."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_capped(fd: int, size: int, cap: int) -> bytes:
    """The bytes of the regular file open as ``fd`` (``fstat`` said ``size``), read to its
    end or to one byte over ``cap``: a result longer than ``cap`` means "over the cap".

    One read of ``size + 1`` bytes normally returns the whole file and proves EOF; a file
    that grows meanwhile is read on, in large chunks, up to one byte over the cap.
    """
    want = size + 1
    first = os.read(fd, min(want, cap + 1))
    if len(first) < want or len(first) > cap:  # its end (or the cap) reached at once
        return first
    return _read_on(fd, first, cap)


def _read_on(fd: int, first: bytes, cap: int) -> bytes:
    """``first`` and the rest of a file that was longer than ``fstat`` said, in large
    chunks, up to one byte over ``cap``."""
    chunks = [first]
    total = len(first)
    while total <= cap:
        chunk = os.read(fd, min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < _READ_CHUNK:
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


Problem = Literal["open", "special", "size", "grew", "read"]


@dataclass(slots=True)
class FileRead:
    """What ``read_file`` found. ``problem`` is None when ``data`` holds the whole file:

    ``"open"`` / ``"read"``: ``error`` says why; ``"special"``: not a regular file
    (``info.st_mode`` says what); ``"size"``: ``size`` bytes, over the cap by ``fstat``;
    ``"grew"``: it grew past the cap while being read (``size`` bytes seen).
    ``fd`` is open only on success and ``keep`` was true; the caller then owns it.
    """

    problem: Problem | None
    data: bytes = b""
    info: os.stat_result | None = None
    size: int = 0
    error: OSError | None = None
    fd: int | None = None

    def close(self) -> None:
        """Close the kept descriptor, if any."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)


def read_file(
    name: str | int, *, cap: int, dir_fd: int | None = None, keep: bool = False
) -> FileRead:
    """Read the regular file ``name`` (relative to ``dir_fd``), or the already open
    descriptor ``name`` (then always consumed: closed, or kept), within ``cap`` bytes."""
    if isinstance(name, int):
        fd = name
    else:
        try:
            fd = os.open(name, OPEN_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            return FileRead("open", error=exc)
    owned = True
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return FileRead("special", info=info)
        size = info.st_size
        if size > cap:
            return FileRead("size", info=info, size=size)
        data = os.read(fd, size + 1)  # ``read_capped`` inline: the whole file, and its end
        if len(data) > size:
            data = data if len(data) > cap else _read_on(fd, data, cap)
        if len(data) > cap:
            return FileRead("grew", info=info, size=len(data))
        owned = not keep
        return FileRead(None, data, info, len(data), fd=None if owned else fd)
    except OSError as exc:
        return FileRead("read", error=exc)
    finally:
        if owned:
            os.close(fd)


def decode(data: bytes) -> tuple[str, list[str]]:
    """UTF-8 text with a leading BOM removed and invalid bytes replaced; notes each change."""
    notes: list[str] = []
    offset = 0
    if data.startswith(codecs.BOM_UTF8):
        offset = len(codecs.BOM_UTF8)
        data = data[offset:]
        notes.append("altered: leading UTF-8 byte order mark removed")
    try:
        return data.decode("utf-8"), notes
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "replace")
        notes.append(
            f"altered: invalid UTF-8 replaced with U+FFFD (first at byte {exc.start + offset})"
        )
        return text, notes
