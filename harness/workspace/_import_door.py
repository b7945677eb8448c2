"""The file door of ``@path`` imports: what an import may read, under the workspace's rules.

    >>> import os, tempfile
    >>> from harness.workspace import SymlinkPolicy, resolve_workspace
    >>> from harness.workspace._import_door import ImportDoor, expand_file
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> os.mkdir(os.path.join(root, "docs"))
    >>> with open(os.path.join(root, "docs", "style.md"), "w") as out:
    ...     _ = out.write("Use ruff.\\n")
    >>> with SymlinkPolicy(root, prune=("node_modules",)) as policy:
    ...     door = ImportDoor(policy, cap=65536)
    ...     text, imports, warnings = expand_file(door, "AGENTS.md", "@docs/style.md\\n@.env\\n")
    >>> text, [path for path, _ in imports], warnings
    ('Use ruff.\\n@.env\\n', ['docs/style.md'], ['import @.env: not expanded: no such file'])

``harness.workspace._imports`` holds the text rules (which lines import, nesting, cycles, the
size cap); this module is its ``read``: an imported path is resolved with
``SymlinkPolicy.open_target`` from the root's descriptor, one component at a time, so one
rule holds for an import and for an instruction-file symlink: it is refused when its real
path lies outside the workspace, passes through ``.git`` or a vendored name, or is ignored by
the ``.gitignore`` files on its way down (evaluated exactly as the walk evaluates them); a
missing file or one that is not a regular file is refused too. The file is then read by the
capped reader (``read_file``: never blocking, never through a symlink) and decoded by
``decode``; an alteration (a BOM removed, invalid UTF-8) is a warning. Each refusal is a
warning saying why, and the ``@`` line stays as it is. A door given the ``stop`` event of a
load's thread ends the expansion (``WalkCancelled``) once the load is cancelled.
"""

from __future__ import annotations

import hashlib
import threading

from harness.workspace._display import display_path
from harness.workspace._imports import Imported, ImportRefused, expand
from harness.workspace._reading import decode, kind_of, read_file, reason
from harness.workspace._symlinks import SymlinkPolicy, SymlinkRefusal, refusal_message
from harness.workspace._walk import WalkCancelled

__all__ = ["ImportDoor", "expand_file", "revision"]


def _refused(rel: str, refusal: SymlinkRefusal) -> str:
    """Why the import of ``rel`` is refused, in the words of the plain path when no symlink
    led there (else as for an instruction-file symlink)."""
    if refusal.target != rel or refusal.kind in ("outside", "workspace", "denied"):
        return refusal_message(refusal)
    part = display_path(refusal.part)
    if refusal.kind == "pruned":
        return f"it is under {part}/, which is never read"
    if refusal.kind == "ignored":
        return f"{part} is ignored by .gitignore (gitignored files are never read)"
    return f"{part} {refusal.reason}, so whether it ignores the file cannot be checked"


class ImportDoor:
    """``read(rel)`` for ``expand``: the text and real path of workspace-relative ``rel``, or
    ``ImportRefused`` with the reason. ``notes`` collects the alterations of files read.
    Once ``stop`` is set (by the thread of a cancelled load) a read raises ``WalkCancelled``,
    so an expansion in an abandoned worker thread ends at its next read."""

    def __init__(
        self, policy: SymlinkPolicy, *, cap: int, stop: threading.Event | None = None
    ) -> None:
        self.policy = policy
        self.cap = cap
        self.stop = stop
        self.notes: list[str] = []

    def real(self, rel: str) -> str:
        """The real path of ``rel`` (itself when the policy does not resolve it)."""
        try:
            target = self.policy.open_target(rel)
        except OSError:
            return rel
        if isinstance(target, SymlinkRefusal):
            return rel
        target.close()
        return target.real_rel

    def checkpoint(self) -> None:
        """Raise ``WalkCancelled`` once ``stop`` is set."""
        if self.stop is not None and self.stop.is_set():
            raise WalkCancelled

    def __call__(self, rel: str) -> Imported:
        self.checkpoint()
        try:
            target = self.policy.open_target(rel)
        except FileNotFoundError:
            raise ImportRefused("no such file") from None
        except OSError as exc:
            raise ImportRefused(f"it cannot be examined ({reason(exc)})") from None
        if isinstance(target, SymlinkRefusal):
            raise ImportRefused(_refused(rel, target))
        if target.fd is None:
            raise ImportRefused(f"{kind_of(target.mode)}, not a regular file")
        read = read_file(target.fd, cap=self.cap)
        if read.problem in ("size", "grew"):
            raise ImportRefused(f"{read.size} bytes, over the {self.cap}-byte cap")
        if read.problem == "special":
            raise ImportRefused("not a regular file")
        if read.problem is not None:
            assert read.error is not None
            raise ImportRefused(f"it cannot be read ({reason(read.error)})")
        text, altered = decode(read.data)
        self.notes.extend(f"import @{rel}: {note}" for note in altered)
        return Imported(text, target.real_rel)


def revision(digest: str, imports: tuple[tuple[str, str], ...]) -> str | None:
    """The revision of a file's expanded text for provenance: None (its ``digest`` is) when it
    imports nothing, else the sha256 of its digest and each import's path and sha256, so an
    edit to an imported file is a new revision too."""
    if not imports:
        return None
    parts = [digest, *(f"{path}\0{sha}" for path, sha in imports)]
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def expand_file(
    door: ImportDoor, rel: str, text: str
) -> tuple[str, tuple[tuple[str, str], ...], list[str]]:
    """The text of the file ``rel`` with its imports expanded through ``door`` (the expansion
    capped at the door's cap), what it imported, and the warnings, each without the leading
    ``rel: `` (the caller names the file its own way; a line of a nested import says which
    imported file it is in)."""
    if "@" not in text:  # the common case: one scan, no door
        return text, (), []
    del door.notes[:]
    expansion = expand(
        rel, text, door, max_bytes=door.cap, real=door.real, checkpoint=door.checkpoint
    )
    prefix = f"{rel}: "
    warnings = [  # a nested file's line: "in imported docs/a.md: import @b.md: ..."
        warning[len(prefix) :] if warning.startswith(prefix) else f"in imported {warning}"
        for warning in expansion.warnings
    ]
    warnings.extend(door.notes)
    return expansion.text, expansion.imports, warnings
