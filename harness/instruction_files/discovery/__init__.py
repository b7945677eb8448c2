"""Discovery: which files of a workspace are its instruction files, in which order.

    >>> import os, tempfile
    >>> from harness.instruction_files.discovery import discover
    >>> ws = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(ws, "pkg"))
    >>> for rel in ("AGENTS.md", "pkg/AGENTS.md"):
    ...     with open(os.path.join(ws, rel), "w") as out:
    ...         _ = out.write(f"rules of {rel}\\n")
    >>> [source.path for source in discover(ws)]
    ['AGENTS.md', 'pkg/AGENTS.md']

The parts:

- ``format``: the ``InstructionFormat`` seam (which entries of a directory are candidates,
  how a file becomes sources, which directories a changed path affects); ``formats``: the
  registry, one module per format (``agents``).
- ``reader``: the walk's visitor and ``discover`` (blocking; ``walk_workspace`` for a root
  already resolved, with or without a scope).
- ``incremental``: snapshots of a walk and the reloads after ``invalidate(path)``.
- ``scoping``: ``targets=`` on a load (the chains from the root to each target).
- ``sources``: one uncached read (the walk in a worker thread, the database row beside it).
- ``root``: ``read_root``, a layer other than the instruction files read at the workspace
  root by its formats (``project_context``: ``.AGENTS/``).
"""

from harness.instruction_files.discovery._format import Directory as Directory
from harness.instruction_files.discovery._format import Found as Found
from harness.instruction_files.discovery._format import InstructionFormat as InstructionFormat
from harness.instruction_files.discovery._reader import DiscoveryCancelled as DiscoveryCancelled
from harness.instruction_files.discovery._reader import discover as discover
from harness.instruction_files.discovery._reader import walk_workspace as walk_workspace
from harness.instruction_files.discovery._root import read_root as read_root
from harness.instruction_files.discovery.formats import FORMATS as FORMATS

__all__ = [
    "FORMATS",
    "Directory",
    "DiscoveryCancelled",
    "Found",
    "InstructionFormat",
    "discover",
    "read_root",
    "walk_workspace",
]
