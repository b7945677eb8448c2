"""The ``agents`` format: per directory, the first of ``AGENTS.override.md`` / ``AGENTS.md``.

    >>> from harness.instruction_files.discovery.formats._agents import AgentsFormat
    >>> sorted(AgentsFormat(("AGENTS.override.md", "AGENTS.md")).candidates())
    ['AGENTS.md', 'AGENTS.override.md']

The names are ``[instruction_files] names``, in the order they are tried. Per directory the
instruction file is the first of them that is a regular file inside the workspace and not
ignored by git (a FIFO, socket, device or directory of that name is never opened; a file
symlink is followed only when ``SymlinkPolicy`` allows its real path). ``AGENTS.override.md``
is a local file: as Codex does, it is read even when an ignore rule lists it, but never
inside an ignored or vendored directory. Each candidate passed
over is a warning, and the next name is tried. The chosen file is then read whole; if it is
rejected after all (over the cap, unreadable, blank, the same file as one already loaded)
the directory has no instruction file: the next name is NOT consulted, and the warning says
which files it still shadows.
"""

from __future__ import annotations

from harness.instruction_files.discovery._format import Directory
from harness.instruction_files.discovery._rules import RuleFormat

__all__ = ["AgentsFormat"]

LOCAL_FILES = frozenset({"AGENTS.override.md"})  # personal: read even when an ignore rule lists it


class AgentsFormat(RuleFormat):
    """One file per directory, the first readable one of ``names``."""

    name = "agents"

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._candidates = frozenset(names)

    def candidates(self) -> frozenset[str]:
        return self._candidates

    def visit(self, directory: Directory) -> None:
        names, named = self.names, directory.named
        for index, name in enumerate(names):
            if name not in named:
                continue
            # The chosen file shadows the later names present; should it be rejected after
            # all (too big, blank, ...), its warning says what it kept from being read.
            later = names[index + 1 :]
            shadowed = tuple(other for other in later if directory.is_file(other)) if later else ()
            if directory.take(name, shadows=shadowed, local=name in LOCAL_FILES):
                return
