"""Reading inside a workspace safely: the one home of harness's file safety.

Everything harness reads from a workspace (instruction files, ``.AGENTS/``) goes through this
package, so one set of rules holds everywhere::

    import os
    from harness.workspace import SymlinkPolicy, display_path, read_file, resolve_workspace

    root = resolve_workspace(".")                 # the real path: the boundary of all checks
    root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    read = read_file("AGENTS.md", cap=65536, dir_fd=root_fd)  # never blocks, never follows
    if read.problem is None:
        print(display_path("AGENTS.md"), len(read.data), "bytes")
    os.close(root_fd)

The parts, one concept each:

- ``display``: the one escaper. Every path and warning harness shows passes through
  ``display_path`` / ``printable`` (or ``visible`` for multi-line text), so a hostile name
  cannot act on a terminal or forge a line.
- ``paths``: ``resolve_workspace`` (the real path that names a workspace; a missing one is
  ``WorkspaceNotFoundError``), ``open_beneath``.
- ``vendored``: ``DEFAULT_VENDORED``, the directory names no walk enters by default.
- ``reading``: ``read_file``, the one capped reader (``O_NONBLOCK | O_NOFOLLOW``, ``fstat``
  before reading, at most one byte past the cap), ``decode`` (UTF-8, BOM and invalid bytes
  noted) and ``kind_of``.
- ``symlinks``: ``SymlinkPolicy``, the rule for following a file symlink, resolved through
  descriptors so no race can lead it outside; ``refusal_message`` words a refusal for every layer.
- ``gitignore``: loading ``.gitignore`` files as git reads them (the matcher is separate).
- ``identity``: when two reads are "the same file" (``Pins``).
- ``walk``: ``DirectoryWalk``, the directory walk through descriptors (a ``Visitor`` says
  what to do with the names it looks for; ``harness.instruction_files.discovery`` has one);
  ``walk_entries``: what it does with denied entries, ``.gitignore`` files and ignored
  directories holding tracked files; ``walk_pool``: the threads sharing its directories.

To add a new reader of workspace files, build it from these parts; do not open workspace
paths by string.
"""

from __future__ import annotations

from harness.workspace._display import display_path, escape_control, printable, visible
from harness.workspace._gitignore import (
    GITIGNORE,
    GITIGNORE_MAX_BYTES,
    load_gitignore,
    read_gitignore,
)
from harness.workspace._identity import PINS, Identity, PinBudget, Pins
from harness.workspace._paths import (
    PATH_MAX,
    WorkspaceNotFoundError,
    name_length,
    open_beneath,
    resolve_workspace,
    too_long,
)
from harness.workspace._reading import (
    DIR_FLAGS,
    OPEN_FLAGS,
    FileRead,
    decode,
    kind_of,
    read_capped,
    read_file,
    reason,
)
from harness.workspace._symlinks import (
    SymlinkPolicy,
    SymlinkRefusal,
    SymlinkTarget,
    describe,
    refusal_message,
)
from harness.workspace._vendored import DEFAULT_VENDORED
from harness.workspace._walk import (
    DirectoryWalk,
    Guide,
    Here,
    Visitor,
    WalkCancelled,
)
from harness.workspace._walk_pool import default_threads

__all__ = [
    "DEFAULT_VENDORED",
    "DIR_FLAGS",
    "GITIGNORE",
    "GITIGNORE_MAX_BYTES",
    "OPEN_FLAGS",
    "PATH_MAX",
    "PINS",
    "DirectoryWalk",
    "FileRead",
    "Guide",
    "Here",
    "Identity",
    "PinBudget",
    "Pins",
    "SymlinkPolicy",
    "SymlinkRefusal",
    "SymlinkTarget",
    "Visitor",
    "WalkCancelled",
    "WorkspaceNotFoundError",
    "decode",
    "default_threads",
    "describe",
    "display_path",
    "escape_control",
    "kind_of",
    "load_gitignore",
    "name_length",
    "open_beneath",
    "printable",
    "read_capped",
    "read_file",
    "read_gitignore",
    "reason",
    "refusal_message",
    "resolve_workspace",
    "too_long",
    "visible",
]
