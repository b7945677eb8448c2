"""What the rule-file formats share: reading a rules directory, and a rule file as a source.

    >>> from harness.instruction_files.discovery._rules import rules_home
    >>> rules_home("web/.cursor/rules/react/hooks.mdc", (".cursor", "rules"))
    'web'
    >>> rules_home("web/src/x.mdc", (".cursor", "rules")) is None
    True

A rules directory (``.cursor/rules/``, ``.github/instructions/``, ...) belongs to the
directory holding its first component: that directory's visit reads it through
``Directory.subdirectory`` (every safety rule of the walk: ignore rules, its own
``.gitignore``, vendored names, symlinks, the byte cap), so a scoped walk reads the rules
directories of the directories on its chains and no others. A rule file's frontmatter is
split off (``frontmatter``); the format's ``decide`` says from its fields whether the file
applies always, on path globs, or is not a source at all (a ``PassedRule``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence

from harness.instruction_files._models import InstructionSource, PassedRule, Trigger
from harness.instruction_files.discovery._format import (
    INSTRUCTIONS,
    Directory,
    Found,
    body_source,
    file_sources,
)
from harness.instruction_files.discovery._frontmatter import Frontmatter, split_frontmatter
from harness.instruction_files.discovery._globs import glob_list, glob_problems, scoped
from harness.workspace import decode, display_path
from harness.workspace._import_door import ImportDoor

__all__ = [
    "Decision",
    "RuleFormat",
    "described_or",
    "paths_or",
    "read_rules_dir",
    "rule_sources",
    "rules_home",
    "take_inside",
    "text_of",
]

Decision = tuple[str, object]
"""A format's ``decide``: ``("always", None)``, ``("paths", <the globs as read>)``, or
``("passed", "<reason>")`` for a file that is not a source."""


def rules_home(rel: str, parts: Sequence[str]) -> str | None:
    """The directory scoping ``rel`` when it lies in (or is) the rules directory ``parts``
    (``(".cursor", "rules")``; or a single file such as ``(".claude", "CLAUDE.md")``)."""
    components = rel.split("/")
    size = len(parts)
    for index in range(len(components) - size + 1):
        if tuple(components[index : index + size]) == tuple(parts):
            return "/".join(components[:index])
    return None


def read_rules_dir(
    directory: Directory,
    parts: Sequence[str],
    accept: Callable[[str], bool],
    *,
    rank: int,
    recursive: bool = True,
) -> None:
    """Read the files of rules directory ``parts`` (below ``directory``) whose names
    ``accept``, in subdirectories too when ``recursive``."""
    current: Directory | None = directory
    opened: list[Directory] = []
    try:
        for part in parts:
            assert current is not None
            current = current.subdirectory(part)
            if current is None:
                return
            opened.append(current)
        assert current is not None
        stack = [current]
        while stack:
            here = stack.pop()
            for name in sorted(here.named):
                entry = here.named[name]
                if entry.is_dir(follow_symlinks=False):
                    if recursive:
                        inner = here.subdirectory(name)
                        if inner is not None:
                            opened.append(inner)
                            stack.append(inner)
                elif accept(name):
                    here.take(name, rank=rank)
    finally:
        for each in opened:
            each.close()


def take_inside(directory: Directory, folder: str, name: str, *, rank: int) -> bool:
    """Read file ``name`` of subdirectory ``folder`` (``.github/copilot-instructions.md``),
    scoped to ``directory``, if the walk may enter ``folder``: whether it may."""
    inner = directory.subdirectory(folder) if folder in directory.named else None
    if inner is None:
        return False
    try:
        inner.take(name, rank=rank)
    finally:
        inner.close()
    return True


def text_of(value: object) -> str:
    """A frontmatter value as one line of text (``""`` for none)."""
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value).strip()


def paths_or(fields: Mapping[str, object], key: str) -> Decision:
    """``paths`` on ``fields[key]`` when it names at least one glob, else ``always``."""
    globs, _ = glob_list(fields.get(key))
    return ("paths", fields[key]) if globs else ("always", None)


def described_or(fields: Mapping[str, object], manual: str) -> Decision:
    """A rule that is not a source: listed for the catalog when it has a description (the
    agent judges by it), else manual (``manual`` says why)."""
    if text_of(fields.get("description")):
        return ("passed", "description only: catalog")
    return ("passed", manual)


def rule_sources(
    found: Found,
    door: ImportDoor,
    format: str,
    decide: Callable[[Mapping[str, object]], Decision],
    known: frozenset[str],
) -> tuple[list[InstructionSource | PassedRule], list[str]]:
    """A rule file as its source (or as a ``PassedRule``), and the notes about it: the
    frontmatter split off and interpreted by ``decide``, ``known`` keys left out of the
    metadata, the body decoded with its imports expanded."""
    text, notes = decode(found.data)
    header = split_frontmatter(text)
    if not isinstance(header, Frontmatter):
        return [], [*notes, f"skipped: {header}"]
    kind, value = decide(header.fields)
    description = text_of(header.fields.get("description"))
    if kind == "passed":
        digest = hashlib.sha256(found.data).hexdigest()
        body = header.body.replace("\r\n", "\n").strip()
        path = display_path(found.rel)
        return [PassedRule(path, format, str(value), description, body, digest)], notes
    globs: tuple[str, ...] = ()
    if kind == "paths":
        written, problems = glob_list(value)
        globs = scoped(written, found.directory)
        notes.extend([*problems, *glob_problems(globs)])
    metadata = {
        key: item
        for key, item in header.fields.items()
        if key not in known and key != "description"
    }
    trigger: Trigger = "paths" if kind == "paths" else "always"
    made, more = body_source(
        found, door, format, header.body, trigger=trigger, globs=globs, metadata=metadata
    )
    return list(made), [*notes, *more]


class RuleFormat:
    """What the formats share, as a base class: per directory the whole ``files`` (applied
    always, in that order; ``"folder/name"`` is a file inside a folder such as
    ``.github/copilot-instructions.md``, scoped like the rules directory; a name in ``local``
    is read even when an ignore rule lists it), then a rules directory ``rules`` (path parts,
    ``()`` for none) whose files ending in ``suffix`` (in subdirectories too when
    ``recursive``) are rules: frontmatter read by ``decide``, ``known`` keys interpreted. When
    a file of ``files`` lies in the rules directory's folder, the rules are read only if the
    walk may enter that folder. Its sources feed ``layer``. A change to a path lists its
    directory again."""

    name = ""
    layer = INSTRUCTIONS
    files: tuple[str, ...] = ()
    local: frozenset[str] = frozenset()
    rules: tuple[str, ...] = ()
    suffix = ".md"
    recursive = True
    known: frozenset[str] = frozenset()

    def candidates(self) -> frozenset[str]:
        return frozenset((*(path.partition("/")[0] for path in self.files), *self.rules[:1]))

    def visit(self, directory: Directory) -> None:
        enter = self.rules[:1]
        for rank, path in enumerate(self.files):
            folder, _, name = path.rpartition("/")
            if not folder:
                directory.take(name, rank=rank, local=name in self.local)
            elif not take_inside(directory, folder, name, rank=rank) and (folder,) == enter:
                enter = ()  # a folder it may not enter (warned): its rules are not read either
        if enter and enter[0] in directory.named:
            suffix = self.suffix
            read_rules_dir(
                directory,
                self.rules,
                lambda name: name.endswith(suffix),
                rank=len(self.files),
                recursive=self.recursive,
            )

    def decide(self, fields: Mapping[str, object]) -> Decision:
        return ("always", None)

    def sources(
        self, found: Found, door: ImportDoor
    ) -> tuple[Sequence[InstructionSource | PassedRule], list[str]]:
        if self.rules and found.home is not None and rules_home(found.rel, self.rules) is not None:
            return rule_sources(found, door, self.name, self.decide, self.known)
        return file_sources(found, door, self.name)

    def affects(self, rel: str) -> frozenset[str]:
        return frozenset({rel.rpartition("/")[0]})

    def home(self, rel: str) -> str | None:
        inside = [tuple(path.split("/")) for path in self.files if "/" in path]
        for parts in (self.rules, *inside) if self.rules else inside:
            found = rules_home(rel, parts)
            if found is not None:
                return found
        return None

    def rank(self, rel: str) -> int:
        parts = rel.split("/")
        ranks = [
            (-path.count("/"), index)  # the longest match: .claude/CLAUDE.md over CLAUDE.md
            for index, path in enumerate(self.files)
            if "/".join(parts[-path.count("/") - 1 :]) == path
        ]
        return min(ranks)[1] if ranks else len(self.files)
