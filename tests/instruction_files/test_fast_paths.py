"""The per-file shortcuts of a cold load give what the general code gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from harness.instruction_files import InstructionFilesSettings, InstructionSource, discover
from harness.instruction_files.discovery._made import made_source as _source

Writer = Callable[[str, str | bytes], Path]


def test_source_made_through_the_slots_equals_the_dataclass() -> None:
    values = {
        "kind": "directory",
        "path": "a/AGENTS.md",
        "content": "rules\n",
        "digest": "d" * 64,
        "depth": 1,
        "version": "v",
        "imports": (("b.md", "e" * 64),),
        "format": "agents",
        "trigger": "paths",
        "globs": ("a/*.py",),
        "metadata": {"k": 1},
    }
    assert [f.name for f in dataclasses.fields(InstructionSource)] == list(values)
    made = _source(*values.values())  # type: ignore[arg-type]
    expected = InstructionSource(**values)  # type: ignore[arg-type]
    assert made == expected and made.metadata == expected.metadata
    assert type(made) is InstructionSource and made.revision == "v"


def test_plain_files_and_denied_named_directories_on_one_walk(ws: Path, write: Writer) -> None:
    """A named entry that is a directory, denied by a directory-only pattern, after the same
    name was allowed as a file: the shortcut must not let it through."""
    write("a/AGENTS.md", "plain\n")
    write("b/AGENTS.md/AGENTS.md", "inside a denied directory\n")
    write("c/AGENTS.md", "@notes.md\n")
    write("c/notes.md", "imported\n")
    write("d/AGENTS.md", "   \n")
    settings = InstructionFilesSettings(walk_threads=1, deny_read=("AGENTS.md/",))
    found = discover(ws, settings)
    assert [s.path for s in found] == ["a/AGENTS.md", "c/AGENTS.md"]
    assert found.sources[0].version is None and found.sources[1].version is not None
    assert found.sources[1].imports and "imported" in found.sources[1].content
    assert any(w.startswith("b/AGENTS.md: not read") for w in found.warnings), found.warnings
    assert any(w.startswith("d/AGENTS.md: skipped: empty") for w in found.warnings)
