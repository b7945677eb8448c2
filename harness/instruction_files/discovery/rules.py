"""What the rule-file formats share: reading a rules directory, and a rule file as a source.

    >>> from harness.instruction_files.discovery.rules import rules_home
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

from harness.instruction_files.discovery.format import Directory, Found
from harness.instruction_files.discovery.frontmatter import Frontmatter, split_frontmatter
from harness.instruction_files.discovery.globs import glob_list, glob_problems, scoped
from harness.instruction_files.models import InstructionSource, PassedRule
from harness.workspace import decode, display_path
from harness.workspace.import_door import ImportDoor, expand_file, revision

__all__ = ["Decision", "paths_or", "read_rules_dir", "rule_sources", "rules_home", "text_of"]

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
    path = display_path(found.rel)
    if kind == "passed":
        digest = hashlib.sha256(found.data).hexdigest()
        body = header.body.replace("\r\n", "\n").strip()
        return [PassedRule(path, format, str(value), description, body, digest)], notes
    globs: tuple[str, ...] = ()
    if kind == "paths":
        written, problems = glob_list(value)
        globs = scoped(written, found.directory)
        notes.extend([*problems, *glob_problems(globs)])
    if not header.body.strip():
        return [], [*notes, "skipped: empty or whitespace-only"]
    content, imports, import_notes = expand_file(door, found.rel, header.body)
    digest = hashlib.sha256(found.data).hexdigest()
    source = InstructionSource(
        kind="root" if found.depth == 0 else "directory",
        path=path,
        content=content,
        digest=digest,
        depth=found.depth,
        version=revision(digest, imports),
        imports=imports,
        format=format,
        trigger="paths" if kind == "paths" else "always",
        globs=globs,
        metadata={
            key: item
            for key, item in header.fields.items()
            if key not in known and key != "description"
        },
    )
    return [source], [*notes, *import_notes]
