"""Finding ``SKILL.md`` files under skills directories: bounded, and by the workspace's rules.

    >>> import os, tempfile
    >>> from harness.skills._scan import SkillScan
    >>> root = os.path.realpath(tempfile.mkdtemp())
    >>> os.makedirs(os.path.join(root, ".claude/skills/pdf/scripts"))
    >>> with open(os.path.join(root, ".claude/skills/pdf/SKILL.md"), "w") as out:
    ...     _ = out.write("---\\nname: pdf\\ndescription: PDFs.\\n---\\n")
    >>> open(os.path.join(root, ".claude/skills/pdf/scripts/run.py"), "w").close()
    >>> with SkillScan(root, prune=(), max_bytes=65536) as scan:
    ...     _ = scan.scan(".claude/skills", order=0)
    >>> [(f.rel, f.resources) for f in scan.found], scan.warnings
    ([('.claude/skills/pdf/SKILL.md', ['.claude/skills/pdf/scripts/run.py'])], [])

A skills directory is reached from the root one ``O_NOFOLLOW`` step at a time, applying the
``.gitignore`` files on the way as the instruction-file walk does (an ignored, vendored or
symlinked directory is not entered; the first two silently, as policy, when below a skills
directory). Below it, each directory is listed once with ``os.scandir`` on a descriptor,
in name order (so the bounds cut the same directories every time): directories up to
``max_depth`` levels below it (its direct children are level 1), at most ``max_dirs``
directories in all; past either bound a warning says how many were not scanned.

A ``SKILL.md`` (that exact name) is read through the one capped reader, following a file
symlink only as ``SymlinkPolicy`` allows. Every other entry below a skill's directory is a
resource of that skill: its path is recorded from the listing, and it is never opened.

A path ``deny_read`` matches (its patterns read as ``.gitignore`` lines) is neither opened
nor listed, not even as a resource: a warning names it and the setting. The check reads the
path string only, before anything is opened.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from types import TracebackType

from harness.skills._deny_hint import deny_hint
from harness.workspace import (
    DIR_FLAGS,
    GITIGNORE,
    SymlinkPolicy,
    SymlinkRefusal,
    WalkCancelled,
    kind_of,
    load_gitignore,
    read_file,
    reason,
    refusal_message,
)
from harness.workspace._ignore import IgnoreChain, IgnoreFile, workspace_rules
from harness.workspace.deny import DenyRules

__all__ = ["MAX_DEPTH", "MAX_DIRS", "SKILL_FILE", "ChildScan", "DirScan", "FoundSkill", "SkillScan"]

SKILL_FILE = "SKILL.md"
MAX_DEPTH = 6
MAX_DIRS = 2000
_BLOCKED = object()  # a directory whose .gitignore cannot be applied: nothing below is read


@dataclass(slots=True)
class FoundSkill:
    """One ``SKILL.md`` read: its path (relative to the scan's root), bytes, file identity, the
    skills directory's place in the configuration (``order``), resources (listing order)."""

    rel: str
    data: bytes
    identity: tuple[int, int]
    order: int
    resources: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ChildScan:
    """What one direct child of a skills directory gave: its skills, its warnings, the
    directories it listed and those too deep to list (kept to be reused when unchanged)."""

    found: list[FoundSkill]
    warnings: list[tuple[str, str]]
    dirs: int
    too_deep: int


@dataclass(slots=True)
class DirScan:
    """One skills directory's scan: all it found and warned, and what each direct child gave
    (None: not reusable piecewise: a bound cut it, it holds ``SKILL.md``, or not kept)."""

    found: list[FoundSkill]
    warnings: list[tuple[str, str]]
    children: dict[str, ChildScan] | None


@dataclass(slots=True)
class _Bounds:
    dirs: int = 0
    unlisted: int = 0
    too_deep: int = 0
    whole: bool = False  # the skills directory holds SKILL.md: its children are resources
    record: dict[str, ChildScan] = field(default_factory=dict)
    reuse: dict[str, ChildScan] | None = None
    dirty: frozenset[str] = frozenset()
    reused: int = 0
    keep: bool = True  # record each direct child's scan (for reuse by a cache)


class SkillScan:
    """The scans of one root's skills directories (blocking; ``stop`` cancels between
    directories with ``WalkCancelled``). A context manager: it holds the root's descriptor."""

    def __init__(
        self,
        root: str,
        *,
        prune: tuple[str, ...] | frozenset[str],
        max_bytes: int,
        stop: threading.Event | None = None,
        max_depth: int = MAX_DEPTH,
        max_dirs: int = MAX_DIRS,
        deny: DenyRules | None = None,
    ) -> None:
        rules = workspace_rules(root)
        self.deny = deny if deny else None  # deny_read: never opened, not even listed
        self._deny_hint = deny_hint(deny.patterns) if deny else None
        self._clean: set[str] | None = set() if self.deny is not None else None
        self.prune = frozenset((*prune, ".git"))
        self.max_bytes, self.stop = max_bytes, stop
        self.max_depth, self.max_dirs = max_depth, max_dirs
        self.found: list[FoundSkill] = []
        self.warnings: list[tuple[str, str]] = []
        self.closed = rules.exclude_problem is not None  # what it ignores is unknown
        self._chains: dict[str, IgnoreChain | object | None] = {}
        self._base = rules.chain
        self.root_fd = os.open(root, DIR_FLAGS)
        self.policy = SymlinkPolicy(
            root, prune, root_fd=self.root_fd, base=rules.chain, deny=self.deny
        )

    def __enter__(self) -> SkillScan:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.policy.close()
        os.close(self.root_fd)

    def warn(self, rel: str, text: str) -> None:
        self.warnings.append((rel, text))

    def denied(self, rel: str, is_dir: bool) -> bool:
        """Whether ``deny_read`` denies entry ``rel`` (its directories already allowed);
        warned. Only the path string is read: nothing is opened to decide."""
        if self.deny is None:
            return False
        hint = self._deny_hint
        if hint is not None and hint(rel.rpartition("/")[2]) is None:
            return False
        pattern = self.deny.entry(rel, is_dir)
        if pattern is None:
            return False
        self.warn(
            rel, f"not read: it matches the deny_read pattern {pattern!r} (setting deny_read)"
        )
        return True

    def scan(
        self,
        rel: str,
        *,
        order: int,
        reuse: DirScan | None = None,
        dirty: frozenset[str] = frozenset(),
        keep: bool = True,
    ) -> DirScan:
        """Find the skills below directory ``rel`` ("/"-separated; "" is the root). With
        ``reuse`` (this directory's last scan), direct children not named in ``dirty`` are
        taken from it instead of being listed again; the result is a cold scan's. Without
        ``keep`` (no cache keeps it) nothing is recorded per child."""
        first_found, first_warning = len(self.found), len(self.warnings)
        reached = None if self.closed else self._reach(rel)
        if reached is None:
            return DirScan(self.found[first_found:], self.warnings[first_warning:], None)
        fd, chain = reached
        pieces = reuse.children if reuse is not None else None
        bounds = _Bounds(reuse=pieces, dirty=dirty, keep=keep or reuse is not None)
        try:
            self._list(fd, rel, 0, chain, None, bounds, order)
        finally:
            os.close(fd)
        self._bound_warnings(rel, bounds)
        piecewise = not (bounds.unlisted or bounds.whole or bounds.dirs >= self.max_dirs)
        if not piecewise and bounds.reused:  # a bound depends on every child: scan cold
            del self.found[first_found:], self.warnings[first_warning:]
            return self.scan(rel, order=order)
        children = bounds.record if piecewise and bounds.keep else None
        return DirScan(self.found[first_found:], self.warnings[first_warning:], children)

    def _bound_warnings(self, rel: str, bounds: _Bounds) -> None:
        if bounds.too_deep:
            self.warn(
                rel,
                f"{bounds.too_deep} director(ies) not scanned: more than {self.max_depth} "
                "levels below the skills directory",
            )
        if bounds.unlisted:
            self.warn(
                rel,
                f"{bounds.unlisted} director(ies) not scanned: past the bound of "
                f"{self.max_dirs} directories per skills directory",
            )

    # -- reaching a skills directory ---------------------------------------------------------

    def _chain(self, fd: int, rel: str, chain: IgnoreChain | None) -> IgnoreChain | object | None:
        """The chain below directory ``rel`` (open as ``fd``) with its ``.gitignore`` applied."""
        if rel in self._chains:
            return self._chains[rel]
        found: IgnoreChain | object | None = chain
        if chain is None or not chain.only_tracked:
            rules, _ = load_gitignore(rel, dir_fd=fd)
            if isinstance(rules, str):
                shown = f"{rel}/{GITIGNORE}" if rel else GITIGNORE
                self.warn(shown, f"{rules}: no skill below {rel or '.'!r} is read")
                found = _BLOCKED
            elif isinstance(rules, IgnoreFile):
                found = IgnoreChain((rules,)) if chain is None else chain.extended(rules)
        self._chains[rel] = found
        return found

    def _reach(self, rel: str) -> tuple[int, IgnoreChain | None] | None:
        """Directory ``rel`` opened from the root and the ignore chain inside it, or None
        (absent, pruned, ignored or a symlink: the last two warned)."""
        fd = os.open(".", DIR_FLAGS, dir_fd=self.root_fd)
        chain: IgnoreChain | None = self._base
        done = ""
        for part in [*rel.split("/"), ""] if rel else [""]:
            applied = self._chain(fd, done, chain)
            if applied is _BLOCKED:
                os.close(fd)
                return None
            chain = applied  # type: ignore[assignment]
            if not part:
                return fd, chain
            child = f"{done}/{part}" if done else part
            step = self._step(fd, child, part, chain)
            os.close(fd)
            if step is None:
                return None
            fd, chain = step
            done = child
        raise AssertionError("unreachable")  # pragma: no cover

    def _step(
        self, fd: int, rel: str, name: str, chain: IgnoreChain | None
    ) -> tuple[int, IgnoreChain | None] | None:
        if name in self.prune or self.denied(rel, True):
            return None
        if chain is not None and chain.ignored(rel, name, True):
            prefix = rel.rpartition("/")[0]
            if not chain.tracked_dirs(prefix + "/" if prefix else "", [name]):
                self.warn(rel, "skills not read: the directory is ignored by .gitignore")
                return None
            chain = chain.inside_ignored()
        try:
            return os.open(name, DIR_FLAGS, dir_fd=fd), chain
        except FileNotFoundError:
            return None
        except OSError as exc:
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                mode = 0
            if stat.S_ISLNK(mode):
                self.warn(rel, "skills not read: a directory symlink (never followed)")
            elif not stat.S_ISDIR(mode) and mode:
                kind = "a file" if stat.S_ISREG(mode) else kind_of(mode)
                self.warn(rel, f"skills not read: {kind}, not a directory")
            else:
                self.warn(rel, f"skills not read: it cannot be opened ({reason(exc)})")
            return None

    # -- below a skills directory --------------------------------------------------------------

    def _list(
        self,
        fd: int,
        rel: str,
        level: int,
        chain: IgnoreChain | None,
        owner: FoundSkill | None,
        bounds: _Bounds,
        order: int,
    ) -> None:
        stop = self.stop
        if stop is not None and stop.is_set():
            raise WalkCancelled
        bounds.dirs += 1
        try:
            with os.scandir(fd) as listing:
                entries = list(listing)  # unsorted: sorted where needed
        except OSError as exc:
            self.warn(rel, f"directory skipped: it cannot be read ({reason(exc)})")
            return
        prefix = f"{rel}/" if rel else ""
        skill_file: os.DirEntry[str] | None = None
        subdirs: list[str] = []
        files: list[str] = []
        prune = self.prune
        clean = self._clean  # names no deny_read pattern can match (None: nothing denied)
        for entry in entries:
            name = entry.name
            if clean is not None and name not in clean and self._denied_entry(prefix, entry):
                continue
            if name == SKILL_FILE:
                skill_file = entry
            elif name == GITIGNORE and level:
                applied = self._chain(fd, rel, chain)
                if applied is _BLOCKED:
                    return
                chain = applied  # type: ignore[assignment]
            if entry.is_dir(follow_symlinks=False):
                if name not in prune:
                    subdirs.append(name)
            else:
                files.append(name)
        if skill_file is not None:
            bounds.whole = bounds.whole or not level
            owner = self._read(fd, prefix, skill_file, chain, order) or owner
        if files:
            self._files(prefix, files, chain, owner, skill_file is not None)
        if subdirs:
            self._descend(fd, prefix, level, chain, owner, bounds, order, subdirs)

    def _files(
        self,
        prefix: str,
        names: list[str],
        chain: IgnoreChain | None,
        owner: FoundSkill | None,
        has_skill: bool,
    ) -> None:
        """A listed directory's files: resources of ``owner`` (the nearest skill), or warned."""
        for name in names:
            if chain is not None and chain.ignored(prefix + name, name, False):
                continue
            if not has_skill and len(name) == 8 and name.lower() == "skill.md":
                self.warn(prefix + name, f"not a skill: the file must be named {SKILL_FILE}")
            elif owner is not None and name != SKILL_FILE and name != GITIGNORE:
                owner.resources.append(prefix + name)  # sorted by the catalog

    def _denied_entry(self, prefix: str, entry: os.DirEntry[str]) -> bool:
        """Whether ``deny_read`` denies listed ``entry`` (warned). A name no pattern's plain
        run is in joins ``_clean``: the next entry of that name is decided by a set lookup."""
        name, hint = entry.name, self._deny_hint
        if hint is not None and hint(name) is None:
            assert self._clean is not None
            self._clean.add(name)
            return False
        return self.denied(prefix + name, entry.is_dir(follow_symlinks=False))

    def _descend(
        self,
        fd: int,
        prefix: str,
        level: int,
        chain: IgnoreChain | None,
        owner: FoundSkill | None,
        bounds: _Bounds,
        order: int,
        subdirs: list[str],
    ) -> None:
        inside: set[str] = set()
        if chain is not None:
            kept = chain.kept_dirs(prefix, subdirs)
            inside = set(chain.tracked_dirs(prefix, [n for n in subdirs if n not in kept]))
            subdirs = [*kept, *inside]
        subdirs.sort()
        if level >= self.max_depth:
            bounds.too_deep += len(subdirs)
            return
        found, warnings, top = self.found, self.warnings, level == 0 and bounds.keep
        marks = (0, 0, 0, 0)
        for name in subdirs:
            if bounds.dirs >= self.max_dirs:
                bounds.unlisted += 1
                continue
            if top:
                if bounds.reuse is not None and self._reused(name, bounds):
                    continue
                marks = (len(found), len(warnings), bounds.dirs, bounds.too_deep)
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                self.warn(prefix + name, f"directory skipped: it cannot be read ({reason(exc)})")
                continue
            below = chain.inside_ignored() if chain is not None and name in inside else chain
            try:
                self._list(child, prefix + name, level + 1, below, owner, bounds, order)
            finally:
                os.close(child)
            if top:
                bounds.record[name] = ChildScan(
                    found[marks[0] :],
                    warnings[marks[1] :],
                    bounds.dirs - marks[2],
                    bounds.too_deep - marks[3],
                )

    def _reused(self, name: str, bounds: _Bounds) -> bool:
        """Take child ``name`` from the last scan when it is there and not dirty."""
        cached = bounds.reuse.get(name) if bounds.reuse is not None else None
        if cached is None or name in bounds.dirty:
            return False
        self.found.extend(cached.found)
        self.warnings.extend(cached.warnings)
        bounds.dirs += cached.dirs
        bounds.too_deep += cached.too_deep
        bounds.record[name] = cached
        bounds.reused += 1
        return True

    def _read(
        self,
        fd: int,
        prefix: str,
        entry: os.DirEntry[str],
        chain: IgnoreChain | None,
        order: int,
    ) -> FoundSkill | None:
        """Read one ``SKILL.md`` (a rejection is a warning, and None)."""
        rel = prefix + SKILL_FILE
        if chain is not None and chain.ignored(rel, SKILL_FILE, False):
            self.warn(rel, "skipped: ignored by .gitignore")
            return None
        target: str | int = SKILL_FILE
        try:
            if entry.is_symlink():
                opened = self.policy.open_target(rel)
                if isinstance(opened, SymlinkRefusal):
                    self.warn(rel, f"skipped: {refusal_message(opened)}")
                    return None
                if opened.fd is None:
                    self.warn(rel, f"skipped: a symlink to {kind_of(opened.mode)}")
                    return None
                target = opened.fd
            elif not entry.is_file(follow_symlinks=False):
                mode = entry.stat(follow_symlinks=False).st_mode
                self.warn(rel, f"skipped: {kind_of(mode)}, not a regular file")
                return None
        except OSError as exc:
            self.warn(rel, f"skipped: it cannot be examined ({reason(exc)})")
            return None
        read = read_file(target, cap=self.max_bytes, dir_fd=fd)
        if read.problem is not None:
            self.warn(rel, _problem(read.problem, read.size, read.error, self.max_bytes))
            return None
        assert read.info is not None
        found = FoundSkill(rel, read.data, (read.info.st_dev, read.info.st_ino), order)
        self.found.append(found)
        return found


def _problem(problem: str, size: int, error: OSError | None, cap: int) -> str:
    if problem in ("size", "grew"):
        return (
            f"skipped: {size} bytes, over the max_bytes cap of {cap} "
            "(raise instruction_files.max_bytes to load it)"
        )
    if problem == "special":
        return "skipped: not a regular file (it changed during the scan)"
    verb = "opened" if problem == "open" else "read"
    return f"skipped: it cannot be {verb} ({reason(error) if error else 'unknown'})"
