"""The directory names a walk never enters by default: other people's code and tool state.

    >>> from harness.workspace._vendored import DEFAULT_VENDORED
    >>> "node_modules" in DEFAULT_VENDORED
    True

Their files (instruction files among them) are not the workspace's, and walking them is most
of the cost of a walk. Every reader of a workspace (instruction files, ``.AGENTS/``) starts
from this list; ``[instruction_files] vendored`` replaces it.
"""

from __future__ import annotations

__all__ = ["DEFAULT_VENDORED"]

DEFAULT_VENDORED: tuple[str, ...] = (
    "node_modules",
    "bower_components",
    "jspm_packages",
    ".venv",
    "venv",
    ".virtualenv",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".gradle",
    ".terraform",
    ".hg",
    ".svn",
)
