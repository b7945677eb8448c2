"""Whether a file symlink in a workspace may be followed, decided without a race.

    >>> import os, tempfile
    >>> from harness.workspace import SymlinkPolicy, resolve_workspace
    >>> root = resolve_workspace(tempfile.mkdtemp())
    >>> os.mkdir(os.path.join(root, "docs"))
    >>> with open(os.path.join(root, "docs", "rules.md"), "w") as out:
    ...     _ = out.write("be kind\\n")
    >>> os.symlink("docs/rules.md", os.path.join(root, "AGENTS.md"))
    >>> os.symlink("/etc/passwd", os.path.join(root, "CLAUDE.md"))
    >>> with SymlinkPolicy(root, prune=("node_modules",)) as policy:
    ...     target = policy.open_target("AGENTS.md")
    ...     print(target.real_rel, policy.open_target("CLAUDE.md").kind)
    ...     target.close()
    docs/rules.md outside

One rule for every reader of workspace files (instruction files, ``.AGENTS/``): a symlink is
followed only when its real path lies inside the workspace (not the workspace itself), no part
of it (the file's own name included) is ``.git`` or a ``prune`` name, and the ``.gitignore``
files on its way down from the root, evaluated exactly as the walk evaluates them (each
directory's rules apply below it, deeper files win, an ignored directory hides all it holds),
do not ignore it (nor ``.git/info/exclude``, below them all; a target tracked in the index is
never ignored: ``harness.workspace._ignore``). A ``.gitignore`` that is a symlink or a special
file is not applied (as in git and the walk); one that exists but cannot be read or is over
the cap refuses the target (fail closed: it might have ignored it), and so does an exclude
file that cannot be applied. ``refusal_message`` words a refusal, the same for every
layer.

Race-free: ``open_target`` resolves the link one component at a time from the workspace
root's descriptor (``readlink``/``fstatat``/``openat`` relative to the directory reached so
far, every directory opened with ``O_NOFOLLOW``), so the real path it checks is the path it
opens, and swapping a directory for a symlink meanwhile cannot lead the read outside. A
component named ``.git`` or a prune name is never entered, not even to pass through it.
Each ``.gitignore`` is read at most once per policy and only along symlink targets, so a tree
without symlinks costs nothing. Safe to share between threads (a racing miss reads one file
twice, with the same result).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from harness.workspace._display import display_path
from harness.workspace._gitignore import GITIGNORE, load_gitignore
from harness.workspace._ignore import IgnoreChain, IgnoreFile, workspace_rules
from harness.workspace._paths import open_beneath
from harness.workspace._reading import DIR_FLAGS, OPEN_FLAGS, reason
from harness.workspace.deny import DenyRules

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["SymlinkPolicy", "SymlinkRefusal", "SymlinkTarget", "describe", "refusal_message"]

_MAX_HOPS = 40  # as the kernel's MAXSYMLINKS


@dataclass(frozen=True, slots=True)
class SymlinkRefusal:
    """Why a symlink's resolved target must not be read (``refusal_message`` words it).

    ``kind``: ``"outside"`` (not inside the workspace), ``"workspace"`` (the workspace
    directory itself), ``"pruned"`` (``part`` is the ``.git`` or vendored name on its path),
    ``"denied"`` (``deny_read`` matches ``target``; ``reason`` is the pattern),
    ``"ignored"`` (``part`` is the first workspace-relative path on the way that
    ``.gitignore`` ignores, with a trailing ``/`` for a directory) or ``"unchecked"``
    (``part`` is a ``.gitignore`` on the way that exists but cannot be applied, ``reason``
    says why: the check fails closed). ``target`` is the workspace-relative real path
    (``"/"``-separated), empty for the first two kinds.
    """

    kind: Literal["outside", "workspace", "pruned", "ignored", "unchecked", "denied"]
    target: str = ""
    part: str = ""
    reason: str = ""


def refusal_message(refusal: SymlinkRefusal) -> str:
    """Why a symlink is not followed, in the words every layer's warning uses."""
    if refusal.kind == "outside":
        return "a symlink whose real path lies outside the workspace"
    if refusal.kind == "workspace":
        return "a symlink to the workspace itself, not a regular file"
    if refusal.kind == "pruned":  # e.g. AGENTS.md -> .git/config
        return f"a symlink into {display_path(refusal.part)}/, which is never read"
    target, part = display_path(refusal.target), display_path(refusal.part)
    if refusal.kind == "denied":  # e.g. @.env.production: never opened at all
        return (
            f"{target} matches the deny_read pattern {refusal.reason!r} (setting deny_read), "
            "so it is never opened"
        )
    if refusal.kind == "ignored":  # e.g. AGENTS.md -> .env: a gitignored file is private
        return (
            f"a symlink to {target}, and {part} is ignored by .gitignore "
            "(gitignored files are never read)"
        )
    return (
        f"a symlink to {target}, and {part} {refusal.reason}, so whether it ignores the "
        "target cannot be checked"
    )


def describe(refusal: SymlinkRefusal) -> str:
    """Deprecated alias of :func:`refusal_message` (one name per idea); removed next release."""
    warnings.warn(
        "harness.workspace.describe is deprecated: call harness.workspace.refusal_message",
        DeprecationWarning,
        stacklevel=2,
    )
    return refusal_message(refusal)


@dataclass(slots=True)
class SymlinkTarget:
    """A followed symlink's target: its real workspace-relative path and type; ``fd`` is the
    target opened with ``OPEN_FLAGS`` when it is a regular file (the caller owns it)."""

    real_rel: str
    mode: int
    fd: int | None = None

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)


class SymlinkPolicy:
    """The symlink rule for one workspace (see the module docstring). Use it as a context
    manager (or call ``close``): it holds the root's descriptor."""

    def __init__(
        self,
        root: str,
        prune: Iterable[str],
        *,
        gitignores: bool = True,
        root_fd: int | None = None,
        base: IgnoreChain | Literal[False] | None = False,
        deny: DenyRules | None = None,
    ) -> None:
        self.root = root
        self.deny = deny if deny else None  # deny_read: refused before anything is opened
        self.prefix = root if root.endswith(os.sep) else root + os.sep
        self.prune = frozenset((*prune, ".git"))
        self.gitignores = gitignores  # False: .gitignore is an instruction-file name
        self._ignores: dict[str, IgnoreFile | SymlinkRefusal | None] = {}  # dir -> rules
        # The exclude file and tracked paths (``workspace_rules``), given by a walk that has
        # them, else read on the first check (False: not yet); a refusal if unusable.
        self._base: IgnoreChain | SymlinkRefusal | Literal[False] | None = base
        self._owns_fd = root_fd is None
        self._root_fd = root_fd
        self._lock = threading.Lock()

    def root_fd(self) -> int:
        """The workspace root's descriptor (opened on first use)."""
        with self._lock:
            if self._root_fd is None:
                self._root_fd = os.open(self.root, DIR_FLAGS)
            return self._root_fd

    def close(self) -> None:
        with self._lock:
            fd, self._root_fd = self._root_fd, None
        if fd is not None and self._owns_fd:
            os.close(fd)

    def __enter__(self) -> SymlinkPolicy:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- the race-free resolution ----------------------------------------------------------

    def open_target(self, link_rel: str) -> SymlinkTarget | SymlinkRefusal:
        """Resolve the symlink at workspace-relative ``link_rel`` beneath the root's
        descriptor: a refusal, or its target (opened when it is a regular file and may be
        read). Raises ``OSError`` when the target cannot be examined (dangling, a loop).

        One loop over the components (a stack: a link's target is pushed back onto it by
        ``_push_target``); the descriptors it holds are closed in one ``finally``."""
        root_fd = self.root_fd()
        todo = [part for part in reversed(link_rel.split("/")) if part not in ("", ".")]
        done: list[str] = []  # the real directories reached, from the root
        fds: list[int] = []  # their descriptors (the root's is not in the list)
        hops = 0
        try:
            while True:
                if not todo:  # the last step was ".." or a link to a directory: a directory
                    if not done:
                        return SymlinkRefusal("workspace")
                    refused = self._check(done, fds, root_fd)
                    return refused or SymlinkTarget("/".join(done), stat.S_IFDIR)
                part = todo.pop()
                if part == "..":
                    if not done:
                        return SymlinkRefusal("outside")
                    done.pop()
                    os.close(fds.pop())
                    continue
                here = fds[-1] if fds else root_fd
                try:
                    info = os.stat(part, dir_fd=here, follow_symlinks=False)
                except OSError:
                    refused = self._check_missing(done, part, todo)
                    if refused is not None:
                        return refused
                    raise
                if stat.S_ISLNK(info.st_mode):
                    hops += 1
                    if hops > _MAX_HOPS:
                        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP))
                    if not self._push_target(os.readlink(part, dir_fd=here), todo, done, fds):
                        return SymlinkRefusal("outside")
                    continue
                if part in self.prune:
                    return SymlinkRefusal("pruned", _joined(done, part, todo), part)
                denied = self._denied([*done, part], True) if todo else None
                if denied is not None:  # a denied directory is not even opened
                    return denied
                if todo:  # a directory on the way
                    fds.append(os.open(part, DIR_FLAGS, dir_fd=here))
                    done.append(part)
                    continue
                refused = self._check([*done, part], fds, root_fd)
                if refused is not None:
                    return refused
                real_rel = "/".join((*done, part))
                if not stat.S_ISREG(info.st_mode):
                    return SymlinkTarget(real_rel, info.st_mode)
                return SymlinkTarget(real_rel, info.st_mode, os.open(part, OPEN_FLAGS, dir_fd=here))
        finally:
            for fd in fds:
                os.close(fd)

    def _denied(self, parts: list[str], is_dir: bool) -> SymlinkRefusal | None:
        """The refusal of a path ``deny_read`` denies (``reason``: the pattern), or None."""
        if self.deny is None:
            return None
        rel = "/".join(parts)
        pattern = self.deny.denied(rel, is_dir=is_dir)
        return None if pattern is None else SymlinkRefusal("denied", rel, rel, pattern)

    def _push_target(self, target: str, todo: list[str], done: list[str], fds: list[int]) -> bool:
        """Push a link's ``target`` onto ``todo`` (the components still to walk); False when
        an absolute target lies outside the root. An absolute target restarts the walk at the
        root: the directories ``done`` so far are dropped and their descriptors closed."""
        if target.startswith("/"):
            rebased = self._rebase(target)
            if rebased is None:
                return False
            while fds:
                os.close(fds.pop())
            done.clear()
            target = rebased
        todo.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
        return True

    def _rebase(self, target: str) -> str | None:
        """An absolute link target as a path below the root ("" for the root), or None when
        it lies outside. Only its mapping to the root is taken from the path string; what is
        below the root is then resolved through descriptors again."""
        real = os.path.realpath(target)
        if real == self.root:
            return ""
        if not real.startswith(self.prefix):
            return None
        return real[len(self.prefix) :].replace(os.sep, "/")

    def _check_missing(self, done: list[str], part: str, todo: list[str]) -> SymlinkRefusal | None:
        """The refusal of a target that does not fully exist, judged by its path (as
        ``realpath`` would spell it), so a dangling link into ``.git/`` is still "pruned"."""
        rest = posixpath.normpath("/".join((*done, part, *reversed(todo))))
        if rest.startswith("../") or rest == "..":
            return SymlinkRefusal("outside")
        return self.refusal(self.prefix + rest.replace("/", os.sep))

    # -- the rule on a real path -----------------------------------------------------------

    def refusal(self, real: str) -> SymlinkRefusal | None:
        """Why the real (resolved, absolute) path ``real`` must not be read, or None. Its
        ``.gitignore`` files are reached from the root's descriptor, one step at a time."""
        if real == self.root:
            return SymlinkRefusal("workspace")
        if not real.startswith(self.prefix):
            return SymlinkRefusal("outside")
        parts = real[len(self.prefix) :].replace(os.sep, "/").split("/")
        return self._check(parts, None, self.root_fd())

    def _check(
        self, parts: list[str], fds: list[int] | None, root_fd: int
    ) -> SymlinkRefusal | None:
        """The rule for real path ``parts`` below the root; ``fds`` are the descriptors of
        its directories when the caller holds them (else they are opened from the root)."""
        real_rel = "/".join(parts)
        pruned = next((part for part in parts if part in self.prune), None)
        if pruned is not None:  # e.g. AGENTS.md -> .git/config: never read what is pruned
            return SymlinkRefusal("pruned", real_rel, pruned)
        # .gitignore speaks first (its refusal is the one users know); deny_read then refuses
        # what git would read. Either way the file is refused before it is opened.
        return self._ignored(parts, fds, root_fd) or self._denied(parts, False)

    def _ignored(
        self, parts: list[str], fds: list[int] | None, root_fd: int
    ) -> SymlinkRefusal | None:
        """The ``.gitignore`` rule for real path ``parts`` (see ``_check``)."""
        real_rel = "/".join(parts)
        if not self.gitignores:
            return None
        chain = self._workspace_rules()
        if isinstance(chain, SymlinkRefusal):
            return SymlinkRefusal("unchecked", real_rel, chain.part, chain.reason)
        if chain is not None and chain.tracked is not None and chain.tracked.tracked(real_rel):
            return None  # git never ignores a tracked file
        parent = ""
        for index, name in enumerate(parts):
            here = root_fd if index == 0 else (fds[index - 1] if fds is not None else None)
            ignore = self._gitignore(parent, here, root_fd)
            if isinstance(ignore, SymlinkRefusal):
                return SymlinkRefusal("unchecked", real_rel, ignore.part, ignore.reason)
            if ignore is not None:
                chain = _extended(chain, ignore)
            rel = f"{parent}/{name}" if parent else name
            is_dir = index < len(parts) - 1  # the last part is judged as a file, as git would
            if chain is not None and chain.ignored(rel, name, is_dir):
                return SymlinkRefusal("ignored", real_rel, rel + "/" if is_dir else rel)
            parent = rel
        return None

    def _workspace_rules(self) -> IgnoreChain | SymlinkRefusal | None:
        base = self._base
        if base is False:
            rules = workspace_rules(self.root)
            problem = rules.exclude_problem
            base = rules.chain
            if problem is not None:
                base = SymlinkRefusal("unchecked", "", ".git/info/exclude", problem)
            self._base = base  # (a racing thread computes the same value)
        return base

    def _gitignore(
        self, rel: str, dir_fd: int | None, root_fd: int
    ) -> IgnoreFile | SymlinkRefusal | None:
        """The rules of directory ``rel``'s ``.gitignore``, None if there are none, or (as an
        ``"unchecked"`` refusal) why it exists but cannot be applied."""
        try:
            return self._ignores[rel]
        except KeyError:
            pass
        shown = f"{rel}/{GITIGNORE}" if rel else GITIGNORE
        found: IgnoreFile | SymlinkRefusal | None = None
        opened = None
        try:
            if dir_fd is None:
                dir_fd = opened = open_beneath(root_fd, rel)
            info = os.stat(GITIGNORE, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode):
                rules, _ = load_gitignore(rel, dir_fd=dir_fd)
                if isinstance(rules, str):
                    found = SymlinkRefusal("unchecked", "", shown, rules)
                else:
                    found = rules
        except FileNotFoundError:
            pass
        except OSError as exc:
            found = SymlinkRefusal("unchecked", "", shown, f"cannot be examined ({reason(exc)})")
        finally:
            if opened is not None:
                os.close(opened)
        self._ignores[rel] = found
        return found


def _extended(chain: IgnoreChain | None, ignore: IgnoreFile) -> IgnoreChain:
    return IgnoreChain((ignore,)) if chain is None else chain.extended(ignore)


def _joined(done: list[str], part: str, todo: list[str]) -> str:
    return "/".join((*done, part, *reversed(todo)))
