"""``@path`` imports through real files: every guard of the door, in instruction files and in
``.AGENTS/`` files, and the cache seeing an edit to an imported file."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from harness._project_context import load_project_context
from harness.instruction_files import InstructionFiles, InstructionFilesSettings, discover
from harness.runtime import Supervisor
from tests.instruction_files.conftest import Writer


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def one(
    ws: Path, settings: InstructionFilesSettings | None = None
) -> tuple[str, object, list[str]]:
    found = discover(ws, settings)
    (source,) = found.sources
    return source.content, source.imports, list(found.warnings)


def test_an_import_is_expanded_inside_the_importing_files_one_source(
    ws: Path, write: Writer
) -> None:
    write("AGENTS.md", "Top.\n@docs/style.md\nEnd.\n")
    write("docs/style.md", "Use ruff.\n@../shared/names.md\n")
    write("shared/names.md", "snake_case\n")
    found = discover(ws)
    (source,) = found.sources
    assert source.content == "Top.\nUse ruff.\nsnake_case\nEnd.\n"
    assert source.imports == (
        ("docs/style.md", sha("Use ruff.\n@../shared/names.md\n")),
        ("shared/names.md", sha("snake_case\n")),
    )
    assert source.digest == sha("Top.\n@docs/style.md\nEnd.\n")  # the file's own bytes
    assert found.warnings == ()


def test_imports_resolve_against_the_importing_files_directory(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "root\n")
    write("pkg/AGENTS.md", "@notes.md\n")
    write("pkg/notes.md", "pkg notes\n")
    found = discover(ws)
    assert [s.content for s in found] == ["root\n", "pkg notes\n"]
    assert found.sources[1].imports[0][0] == "pkg/notes.md"


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("@../outside/x.md", "not expanded: the path leaves the workspace"),
        ("@.git/config", "not expanded: it is under .git/, which is never read"),
        ("@node_modules/lib/README.md", "not expanded: it is under node_modules/"),
        ("@secrets/key.md", "not expanded: secrets/ is ignored by .gitignore"),
        ("@.env", "not expanded: .env is ignored by .gitignore"),
        ("@missing.md", "not expanded: no such file"),
        ("@docs", "not expanded: a directory, not a regular file"),
        ("@pipe.md", "not expanded: a FIFO, not a regular file"),
        ("@big.md", "not expanded: 2000 bytes, over the 1000-byte cap"),
        ("@inside.md", "not expanded: a symlink whose real path lies outside the workspace"),
        ("@private.md", "not expanded: a symlink to .env, and .env is ignored by .gitignore"),
        ("@gitlink.md", "not expanded: a symlink into .git/, which is never read"),
    ],
)
def test_every_guard_refuses_with_a_warning_and_leaves_the_line(
    ws: Path, tmp_path: Path, write: Writer, line: str, why: str
) -> None:
    write(".gitignore", "secrets/\n.env\n")
    write(".git/config", "[core]\n")
    write("node_modules/lib/README.md", "vendored\n")
    write("secrets/key.md", "KEY\n")
    write(".env", "TOKEN=1\n")
    write("docs/a.md", "docs\n")
    write("big.md", "x" * 2000)
    os.mkfifo(ws / "pipe.md")
    (tmp_path / "outside" / "x.md").write_text("outside\n")
    (ws / "inside.md").symlink_to(tmp_path / "outside" / "x.md")
    (ws / "private.md").symlink_to(".env")
    (ws / "gitlink.md").symlink_to(".git/config")
    write("AGENTS.md", f"Rules.\n{line}\n")
    content, imports, warnings = one(ws, InstructionFilesSettings(max_bytes=1000))
    assert content == f"Rules.\n{line}\n" and imports == ()
    assert any(w.startswith(f"AGENTS.md: import {line}: {why}") for w in warnings), warnings


def test_a_symlinked_import_inside_the_workspace_is_followed(ws: Path, write: Writer) -> None:
    write("docs/rules.md", "shared rules\n")
    (ws / "rules.md").symlink_to("docs/rules.md")
    write("AGENTS.md", "@rules.md\n")
    content, imports, warnings = one(ws)
    assert content == "shared rules\n" and warnings == []
    assert imports == (("rules.md", sha("shared rules\n")),)


def test_absolute_paths_and_fenced_lines_are_not_imports(ws: Path, write: Writer) -> None:
    text = "@/etc/passwd\n```\n@docs/a.md\n```\n"
    write("docs/a.md", "docs\n")
    write("AGENTS.md", text)
    assert one(ws) == (text, (), [])


def test_a_cycle_through_real_files_is_refused(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "@a.md\n")
    write("a.md", "A\n@b.md\n")
    write("b.md", "B\n@a.md\n")
    content, imports, warnings = one(ws)
    assert content == "A\nB\n@a.md\n"
    assert [path for path, _ in imports] == ["a.md", "b.md"]  # type: ignore[attr-defined]
    assert warnings == [
        "AGENTS.md: in imported b.md: import @a.md: not expanded: an import cycle "
        "(AGENTS.md -> a.md -> b.md -> a.md)"
    ]


def test_an_imported_files_alterations_are_warnings(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "@bom.md\n")
    write("bom.md", b"\xef\xbb\xbfbom\n")
    content, _, warnings = one(ws)
    assert content == "bom\n"
    assert warnings == ["AGENTS.md: import @bom.md: altered: leading UTF-8 byte order mark removed"]


def test_agents_directory_files_import_under_the_same_rules(ws: Path, write: Writer) -> None:
    write(".gitignore", ".env\n")
    write(".env", "TOKEN\n")
    write("docs/glossary.md", "A glossary.\n")
    write(".AGENTS/overview.md", "Overview.\n@../docs/glossary.md\n@../.env\n@../.git/HEAD\n")
    context = load_project_context(ws)
    (unit,) = context.units
    assert unit.text == "Overview.\nA glossary.\n@../.env\n@../.git/HEAD"
    assert context.imports == {".AGENTS/overview.md": (("docs/glossary.md", sha("A glossary.\n")),)}
    assert context.warnings == (
        ".AGENTS/overview.md: import @../.env: not expanded: .env is ignored by .gitignore "
        "(gitignored files are never read)",
        ".AGENTS/overview.md: import @../.git/HEAD: not expanded: it is under .git/, which is "
        "never read",
    )


async def test_an_edit_to_an_imported_file_reaches_the_cache_through_invalidate(
    ws: Path, write: Writer
) -> None:
    write("AGENTS.md", "@docs/style.md\n")
    style = write("docs/style.md", "v1\n")
    files = InstructionFiles()
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            assert [s.content for s in await files.load(ws, agent="a")] == ["v1\n"]
            scoped = await files.load(ws, agent="a", targets=["src/x.py"])
            assert scoped.sources[0].imports == (("docs/style.md", sha("v1\n")),)
            style.write_text("v2\n")
            assert [s.content for s in await files.load(ws, agent="a")] == ["v1\n"]  # a hit
            files.invalidate(style)  # the path a file watcher reports
            assert [s.content for s in await files.load(ws, agent="a")] == ["v2\n"]
            again = await files.load(ws, agent="a", targets=["src/x.py"])
            assert again.sources[0].imports == (("docs/style.md", sha("v2\n")),)
            # The importing file is unchanged, but its revision (provenance) is not.
            assert again.sources[0].digest == scoped.sources[0].digest
            assert again.sources[0].revision != scoped.sources[0].revision


def test_a_cycle_through_a_symlink_is_detected_on_real_paths(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "@docs/a.md\n")
    write("docs/a.md", "A\n@../alias/a.md\n")
    (ws / "alias").symlink_to("docs")  # alias/a.md is docs/a.md by another name
    content, imports, warnings = one(ws)
    assert content == "A\n@../alias/a.md\n"
    assert [path for path, _ in imports] == ["docs/a.md"]  # type: ignore[attr-defined]
    assert warnings == [
        "AGENTS.md: in imported docs/a.md: import @../alias/a.md: not expanded: an import "
        "cycle (AGENTS.md -> docs/a.md -> alias/a.md, which is docs/a.md)"
    ]


def test_a_symlinked_instruction_file_importing_its_own_target_is_a_cycle(
    ws: Path, write: Writer
) -> None:
    write("docs/rules.md", "Rules.\n@docs/rules.md\n")  # resolved against AGENTS.md's directory
    (ws / "AGENTS.md").symlink_to("docs/rules.md")
    content, _, warnings = one(ws)
    assert content == "Rules.\n@docs/rules.md\n"
    assert "an import cycle (AGENTS.md -> docs/rules.md, which is AGENTS.md)" in warnings[0]


def test_indented_code_in_a_real_file_is_not_imported(ws: Path, write: Writer) -> None:
    text = "Example:\n\n    @docs/a.md\n\n\t@docs/a.md\n"
    write("docs/a.md", "docs\n")
    write("AGENTS.md", text)
    assert one(ws) == (text, (), [])


FAN_OUT = """
import sys, time
from harness.instruction_files import discover
start = time.monotonic()
found = discover(sys.argv[1])
print(len(found.sources[0].content.encode()), time.monotonic() - start)
"""


def test_a_fan_out_of_real_files_loads_in_linear_work(ws: Path, write: Writer) -> None:
    # Five 360-byte files, each with 60 lines importing the next: before the cap was
    # checked before each expansion, one load opened the last file ~13 million times.
    # A child process under a hard timeout, so a regression fails instead of hanging.
    for i in range(5):
        write(f"f{i}.md", f"@f{i + 1}.md\n" * 60)
    write("AGENTS.md", "@f0.md\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, "-c", FAN_OUT, str(ws)],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        check=True,
    )
    size, _ = done.stdout.split()
    assert int(size) <= InstructionFilesSettings().max_bytes
