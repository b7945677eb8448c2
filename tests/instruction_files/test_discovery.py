"""Discovery rules on real trees: precedence, selection, prunes, symlinks, text, caps."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionSet,
    WorkspaceNotFoundError,
    discover,
)

Writer = Callable[[str, str | bytes], Path]


def paths(found: InstructionSet) -> list[str]:
    return [source.path for source in found]


def warning_for(found: InstructionSet, path: str) -> str:
    matching = [warning for warning in found.warnings if warning.startswith(f"{path}: ")]
    assert len(matching) == 1, found.warnings
    return matching[0]


# -- precedence and selection ---------------------------------------------------------------


def test_precedence_root_then_shallow_to_deep_ties_by_path(ws: Path, write: Writer) -> None:
    for rel in ("z/AGENTS.md", "a/b/c/AGENTS.md", "b/AGENTS.md", "a/b/AGENTS.md", "AGENTS.md"):
        write(rel, f"rules of {rel}\n")
    write("a/AGENTS.md", "rules of a\n")
    write("a/z/AGENTS.md", "rules of a/z\n")

    found = discover(ws)

    assert paths(found) == [
        "AGENTS.md",
        "a/AGENTS.md",
        "b/AGENTS.md",
        "z/AGENTS.md",
        "a/b/AGENTS.md",
        "a/z/AGENTS.md",
        "a/b/c/AGENTS.md",
    ]
    assert [source.depth for source in found] == [0, 1, 1, 1, 2, 2, 3]
    assert [source.kind for source in found] == ["root"] + ["directory"] * 6
    assert list(found) == list(found.sources) and len(found) == 7
    assert found.sources[4].content == "rules of a/b/AGENTS.md\n"
    assert found.warnings == ()


def test_source_is_frozen_and_digest_is_sha256_of_bytes(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "héllo\n")
    (source,) = discover(ws)
    assert source.digest == hashlib.sha256("héllo\n".encode()).hexdigest()
    with pytest.raises(AttributeError):
        source.content = "changed"  # type: ignore[misc]


def test_override_wins_over_agents_md_in_the_same_directory(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "root plain\n")
    write("AGENTS.override.md", "root override\n")
    write("pkg/AGENTS.md", "pkg plain\n")

    found = discover(ws)

    assert paths(found) == ["AGENTS.override.md", "pkg/AGENTS.md"]
    assert found.sources[0].content == "root override\n"
    assert found.sources[0].kind == "root"
    assert found.warnings == ()  # the unused AGENTS.md is not a skip: it was never a candidate


def test_a_rejected_override_says_which_file_it_kept_from_being_read(
    ws: Path, write: Writer
) -> None:
    write("pkg/AGENTS.override.md", "  \n")  # chosen (the first regular file), then rejected
    write("pkg/AGENTS.md", "real rules\n")
    found = discover(ws)
    assert paths(found) == []
    warning = warning_for(found, "pkg/AGENTS.override.md")
    assert "whitespace-only" in warning
    assert "it still shadows pkg/AGENTS.md, which is not read" in warning


def test_configured_names_and_their_order(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "agents\n")
    write("CLAUDE.md", "claude\n")
    write("sub/AGENTS.md", "sub agents\n")
    settings = InstructionFilesSettings(names=("CLAUDE.md", "AGENTS.md"))
    assert paths(discover(ws, settings)) == ["CLAUDE.md", "sub/AGENTS.md"]
    only = InstructionFilesSettings(names=("CLAUDE.md",))
    assert paths(discover(ws, only)) == ["CLAUDE.md"]


def test_directory_named_like_an_instruction_file_is_walked_not_opened(
    ws: Path, write: Writer
) -> None:
    write("AGENTS.override.md/AGENTS.md", "inside the odd directory\n")
    write("AGENTS.md", "root\n")

    found = discover(ws)

    # The directory is skipped as a candidate (AGENTS.md is used instead) and walked as a tree.
    assert paths(found) == ["AGENTS.md", "AGENTS.override.md/AGENTS.md"]
    assert "a directory, not a regular file" in warning_for(found, "AGENTS.override.md")


async def test_fifo_and_socket_named_agents_md_are_never_opened(ws: Path, write: Writer) -> None:
    os.mkfifo(ws / "AGENTS.override.md")  # no writer: a blocking open would hang forever
    write("AGENTS.md", "root\n")
    (ws / "fifo").mkdir()
    os.mkfifo(ws / "fifo" / "AGENTS.md")
    (ws / "sock").mkdir()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(ws / "sock" / "AGENTS.md"))  # pytest keeps tmp_path under AF_UNIX's limit
    try:
        with anyio.fail_after(10):
            found = await InstructionFiles().load(ws, agent="reviewer")
    finally:
        server.close()

    assert paths(found) == ["AGENTS.md"]
    assert "a FIFO, not a regular file" in warning_for(found, "AGENTS.override.md")
    assert "a FIFO, not a regular file" in warning_for(found, "fifo/AGENTS.md")
    assert "a socket, not a regular file" in warning_for(found, "sock/AGENTS.md")


# -- never entered ------------------------------------------------------------------------


def test_git_and_vendored_directories_are_never_entered(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "root\n")
    for vendored in (
        ".git",
        ".git/modules/x",
        "node_modules/dep",
        "pkg/node_modules/dep",
        ".venv/lib",
        "venv",
        "pkg/__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".tox/py311",
    ):
        write(f"{vendored}/AGENTS.md", "must not be found\n")
    write("pkg/AGENTS.md", "pkg\n")

    found = discover(ws)
    assert paths(found) == ["AGENTS.md", "pkg/AGENTS.md"]
    assert found.warnings == ()  # prunes are policy, not problems


def test_vendored_list_is_configurable_but_git_is_always_pruned(ws: Path, write: Writer) -> None:
    write("third_party/AGENTS.md", "vendored here\n")
    write("node_modules/AGENTS.md", "not vendored any more\n")
    write(".git/AGENTS.md", "never\n")
    settings = InstructionFilesSettings(vendored=("third_party",))
    assert paths(discover(ws, settings)) == ["node_modules/AGENTS.md"]


def test_root_gitignore_prunes_directories_and_ignores_files(ws: Path, write: Writer) -> None:
    write(".gitignore", "build/\n*.tmp\n/local\ndocs/gen\n!keep.tmp\n# a comment\n")
    write("build/AGENTS.md", "ignored dir\n")
    write("pkg/build/AGENTS.md", "ignored at any depth (no leading slash)\n")
    write("x.tmp/AGENTS.md", "glob matches directories too\n")
    write("keep.tmp/AGENTS.md", "re-included by the negation\n")
    write("local/AGENTS.md", "anchored: ignored at the root\n")
    write("pkg/local/AGENTS.md", "anchored pattern does not reach here\n")
    write("docs/gen/AGENTS.md", "pattern with a slash: relative to the root\n")
    write("pkg/docs/gen/AGENTS.md", "not matched by docs/gen\n")

    found = discover(ws)

    assert sorted(paths(found)) == [
        "keep.tmp/AGENTS.md",
        "pkg/docs/gen/AGENTS.md",
        "pkg/local/AGENTS.md",
    ]


def test_nested_gitignore_patterns_are_relative_to_their_directory(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "root\n")
    write("pkg/.gitignore", "gen/\n/local/\nsub/out\n")
    write("pkg/gen/AGENTS.md", "ignored by pkg/.gitignore\n")
    write("pkg/deep/gen/AGENTS.md", "also ignored (no slash: any depth below pkg)\n")
    write("pkg/local/AGENTS.md", "ignored: anchored at pkg/\n")
    write("pkg/deep/local/AGENTS.md", "kept: /local/ is anchored at pkg/ only\n")
    write("pkg/sub/out/AGENTS.md", "ignored: sub/out relative to pkg/\n")
    write("other/gen/AGENTS.md", "kept: pkg/.gitignore does not apply here\n")
    write("other/local/AGENTS.md", "kept\n")

    found = discover(ws)

    assert sorted(paths(found)) == [
        "AGENTS.md",
        "other/gen/AGENTS.md",
        "other/local/AGENTS.md",
        "pkg/deep/local/AGENTS.md",
    ]


def test_deeper_gitignore_overrides_a_shallower_one(ws: Path, write: Writer) -> None:
    write(".gitignore", "tmp/\n")
    write("pkg/.gitignore", "!tmp/\n")
    write("tmp/AGENTS.md", "ignored by the root\n")
    write("pkg/tmp/AGENTS.md", "re-included by pkg/.gitignore\n")
    assert paths(discover(ws)) == ["pkg/tmp/AGENTS.md"]


def test_gitignored_instruction_file_is_skipped_with_a_warning(ws: Path, write: Writer) -> None:
    write(".gitignore", "# generated\n/AGENTS.md\n")
    write("AGENTS.md", "generated rules git does not see\n")
    write("pkg/AGENTS.md", "committed rules\n")
    found = discover(ws)
    assert paths(found) == ["pkg/AGENTS.md"]
    assert warning_for(found, "AGENTS.md") == "AGENTS.md: skipped: ignored by .gitignore:2"


def test_a_gitignored_override_is_read_as_a_local_file(ws: Path, write: Writer) -> None:
    """``AGENTS.override.md`` is personal: Codex reads it even when ``.gitignore`` lists it
    (it did not before; an ignored override used to be skipped). Not inside an ignored
    directory, though."""
    write(".gitignore", "**/AGENTS.override.md\nbuild/\n")
    write("AGENTS.override.md", "a personal override git does not see\n")
    write("AGENTS.md", "committed rules\n")
    write("build/AGENTS.override.md", "inside an ignored directory\n")
    found = discover(ws)
    assert paths(found) == ["AGENTS.override.md"]
    assert found.local == ("AGENTS.override.md",)
    assert found.warnings == ()


def test_every_gitignore_line_is_a_pattern_as_in_git(ws: Path, write: Writer) -> None:
    """git rejects no line: ``[z-a]`` is "z" then an empty range (it matches ``z``), and an
    unclosed ``[`` matches nothing; the lines after them apply as usual."""
    write(".gitignore", "[z-a]\n[unclosed\nbuild/\n")
    write("build/AGENTS.md", "ignored\n")
    write("z/AGENTS.md", "ignored too\n")
    write("[unclosed/AGENTS.md", "kept\n")
    write("AGENTS.md", "root\n")
    found = discover(ws)
    assert paths(found) == ["AGENTS.md", "[unclosed/AGENTS.md"]
    assert found.warnings == ()


def test_a_gitignore_too_big_to_apply_fails_closed(ws: Path, write: Writer) -> None:
    """Its rules are unknown, so nothing it governs is read (its ignored secrets included)."""
    filler = "".join(f"generated-{i}/\n" for i in range(80_000))  # well over 1 MiB
    write("sub/.gitignore", filler + "secret/\n")
    write("sub/AGENTS.md", "sub rules\n")
    write("sub/secret/AGENTS.md", "API_KEY=sk-live\n")
    write("sub/deeper/AGENTS.md", "deeper rules\n")
    write("other/AGENTS.md", "other rules\n")
    write("AGENTS.md", "root\n")
    found = discover(ws)
    assert paths(found) == ["AGENTS.md", "other/AGENTS.md"]
    assert "nothing in 'sub' is read" in warning_for(found, "sub/.gitignore")


def test_directory_symlinks_are_not_followed(ws: Path, write: Writer, tmp_path: Path) -> None:
    write("real/AGENTS.md", "real\n")
    (ws / "alias").symlink_to(ws / "real", target_is_directory=True)
    (tmp_path / "outside" / "AGENTS.md").write_text("outside\n")
    (ws / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert paths(discover(ws)) == ["real/AGENTS.md"]


async def test_symlink_loops_terminate(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "root\n")
    (ws / "a").mkdir()
    (ws / "a" / "up").symlink_to("..")  # a directory loop
    (ws / "a" / "self").symlink_to("self")  # a symlink to itself
    (ws / "b").mkdir()
    (ws / "b" / "AGENTS.md").symlink_to("AGENTS.md")  # an instruction file that is a loop
    (ws / "c").mkdir()
    (ws / "c" / "AGENTS.md").symlink_to("../d/AGENTS.md")
    (ws / "d").mkdir()
    (ws / "d" / "AGENTS.md").symlink_to("../c/AGENTS.md")  # a two-link loop

    with anyio.fail_after(10):
        found = await InstructionFiles().load(ws, agent="reviewer")

    assert paths(found) == ["AGENTS.md"]
    assert "cannot be examined" in warning_for(found, "b/AGENTS.md")
    assert "cannot be examined" in warning_for(found, "c/AGENTS.md")
    assert "cannot be examined" in warning_for(found, "d/AGENTS.md")


def test_symlink_escaping_the_workspace_is_not_read(
    ws: Path, write: Writer, tmp_path: Path
) -> None:
    secret = tmp_path / "outside" / "secret.md"
    secret.write_text("TOP SECRET\n")
    write("AGENTS.md", "root\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "AGENTS.md").symlink_to(secret)
    (ws / "rel").mkdir()
    (ws / "rel" / "AGENTS.md").symlink_to("../../outside/secret.md")

    found = discover(ws)

    assert paths(found) == ["AGENTS.md"]
    assert all("TOP SECRET" not in source.content for source in found)
    assert "outside the workspace" in warning_for(found, "pkg/AGENTS.md")
    assert "outside the workspace" in warning_for(found, "rel/AGENTS.md")


def test_symlink_into_git_or_a_vendored_directory_is_not_read(ws: Path, write: Writer) -> None:
    write(".git/config", "[remote] url = https://token@example.com\n")
    write("node_modules/dep/AGENTS.md", "vendored\n")
    (ws / "a").mkdir()
    (ws / "a" / "AGENTS.md").symlink_to("../.git/config")
    (ws / "b").mkdir()
    (ws / "b" / "AGENTS.md").symlink_to("../node_modules/dep/AGENTS.md")
    found = discover(ws)
    assert paths(found) == []
    assert "into .git/" in warning_for(found, "a/AGENTS.md")
    assert "into node_modules/" in warning_for(found, "b/AGENTS.md")


def _link(ws: Path, rel: str, target: str) -> None:
    (ws / rel).parent.mkdir(parents=True, exist_ok=True)
    (ws / rel).symlink_to(target)


@pytest.mark.parametrize("threads", [1, 4])
def test_symlink_to_a_gitignored_file_or_into_a_gitignored_directory_is_not_read(
    ws: Path, write: Writer, threads: int
) -> None:
    """Security: a committed `docs/AGENTS.md -> ../.env` must not put a gitignored secret in
    the prompt; the root .gitignore applies to the link's real path, not only to the link."""
    write(".gitignore", ".env\nsecrets/\n")
    write(".env", "API_KEY=SECRET\n")
    write("secrets/deep/key.md", "SECRET\n")
    write("shared/policy.md", "shared policy\n")
    _link(ws, "docs/AGENTS.md", "../.env")
    _link(ws, "a/AGENTS.md", "../secrets/deep/key.md")
    _link(ws, "b/AGENTS.md", "../shared/policy.md")  # not ignored: read as before

    # deny_read off: .gitignore alone must keep the secret out (deny_read is tested apart)
    found = discover(ws, InstructionFilesSettings(walk_threads=threads, deny_read=()))

    assert [(s.path, s.content) for s in found] == [("b/AGENTS.md", "shared policy\n")]
    assert all("SECRET" not in s.content for s in found)
    assert "a symlink to .env, and .env is ignored by .gitignore" in warning_for(
        found, "docs/AGENTS.md"
    )
    assert "and secrets/ is ignored by .gitignore" in warning_for(found, "a/AGENTS.md")
    assert len(found.warnings) == 2


def test_symlink_targets_follow_nested_gitignores_like_the_walk(ws: Path, write: Writer) -> None:
    """The .gitignore files along the TARGET's path apply (root and nested, deeper wins, a
    `!` line re-includes), even where the link's own directory has none of them."""
    write(".gitignore", "conf/*\n")  # the files of conf/, not conf/ itself
    write("conf/.gitignore", "!public.md\n")
    write("conf/public.md", "public conf\n")
    write("conf/private.md", "private conf\n")
    write("keys/.gitignore", "*.pem\n")
    write("keys/server.pem", "-----BEGIN PRIVATE KEY-----\n")
    write("keys/README.md", "how keys are rotated\n")
    _link(ws, "p/AGENTS.md", "../conf/public.md")
    _link(ws, "q/AGENTS.md", "../conf/private.md")
    _link(ws, "r/AGENTS.md", "../keys/server.pem")
    _link(ws, "s/AGENTS.md", "../keys/README.md")

    found = discover(ws)

    assert [(s.path, s.content) for s in found] == [
        ("p/AGENTS.md", "public conf\n"),
        ("s/AGENTS.md", "how keys are rotated\n"),
    ]
    assert "conf/private.md is ignored by .gitignore" in warning_for(found, "q/AGENTS.md")
    assert "keys/server.pem is ignored by .gitignore" in warning_for(found, "r/AGENTS.md")
    assert len(found.warnings) == 2


def test_symlinked_gitignore_is_not_applied_to_symlink_targets(ws: Path, write: Writer) -> None:
    """As in the walk (and git), a symlinked .gitignore is not read: its rules do not apply."""
    write("rules/ignore-all", "*\n")
    write("lib/notes.md", "notes\n")
    (ws / "lib" / ".gitignore").symlink_to("../rules/ignore-all")
    _link(ws, "x/AGENTS.md", "../lib/notes.md")

    found = discover(ws)

    assert [s.path for s in found] == ["x/AGENTS.md"]
    assert "not applied: a symlink" in warning_for(found, "lib/.gitignore")


def test_symlink_inside_the_workspace_is_followed(ws: Path, write: Writer) -> None:
    write("shared/rules.md", "shared rules\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "AGENTS.md").symlink_to("../shared/rules.md")
    found = discover(ws)
    assert paths(found) == ["pkg/AGENTS.md"]
    assert found.sources[0].content == "shared rules\n"


def test_workspace_reached_through_a_symlink(ws: Path, write: Writer, tmp_path: Path) -> None:
    write("AGENTS.md", "root\n")
    write("pkg/AGENTS.md", "pkg\n")
    link = tmp_path / "link-to-ws"
    link.symlink_to(ws, target_is_directory=True)
    (ws / "pkg" / "via").symlink_to(link / "AGENTS.md")  # points back in through the link
    # (named "via", not an instruction name: only checks that the walk is unaffected)
    found = discover(link)
    assert paths(found) == ["AGENTS.md", "pkg/AGENTS.md"]


def test_hard_linked_duplicate_is_loaded_once(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "shared by hard link\n")
    (ws / "pkg").mkdir()
    os.link(ws / "AGENTS.md", ws / "pkg" / "AGENTS.md")

    found = discover(ws)

    assert paths(found) == ["AGENTS.md"]
    assert "same file as AGENTS.md" in warning_for(found, "pkg/AGENTS.md")


def test_symlinked_duplicate_is_loaded_once_at_its_first_place(ws: Path, write: Writer) -> None:
    write("a/AGENTS.md", "a rules\n")
    (ws / "b" / "c").mkdir(parents=True)
    (ws / "b" / "c" / "AGENTS.md").symlink_to("../../a/AGENTS.md")
    (ws / "z").mkdir()
    os.link(ws / "a" / "AGENTS.md", ws / "z" / "AGENTS.md")

    found = discover(ws)

    assert paths(found) == ["a/AGENTS.md"]
    assert "same file as a/AGENTS.md" in warning_for(found, "b/c/AGENTS.md")
    assert "same file as a/AGENTS.md" in warning_for(found, "z/AGENTS.md")


# -- text -----------------------------------------------------------------------------------


def test_bom_is_removed_with_a_warning_and_digest_covers_the_bytes_read(
    ws: Path, write: Writer
) -> None:
    raw = b"\xef\xbb\xbfUse tabs.\n"
    write("AGENTS.md", raw)
    found = discover(ws)
    (source,) = found
    assert source.content == "Use tabs.\n"
    assert source.digest == hashlib.sha256(raw).hexdigest()
    assert "byte order mark removed" in warning_for(found, "AGENTS.md")


def test_invalid_utf8_becomes_replacement_characters_with_a_warning(
    ws: Path, write: Writer
) -> None:
    write("pkg/AGENTS.md", b"ok \xff\xfe then \xc3 end\n")
    found = discover(ws)
    (source,) = found
    assert source.content == "ok \ufffd\ufffd then \ufffd end\n"
    warning = warning_for(found, "pkg/AGENTS.md")
    assert "U+FFFD" in warning and "byte 3" in warning


def test_bom_and_invalid_bytes_together(ws: Path, write: Writer) -> None:
    write("AGENTS.md", b"\xef\xbb\xbfa\x80b\n")
    found = discover(ws)
    assert found.sources[0].content == "a\ufffdb\n"
    assert len(found.warnings) == 2
    assert "byte order mark" in found.warnings[0] and "byte 4" in found.warnings[1]


def test_whitespace_only_and_empty_files_are_skipped(ws: Path, write: Writer) -> None:
    write("AGENTS.md", " \n\t\r\n  ")
    write("empty/AGENTS.md", b"")
    write("bom/AGENTS.md", b"\xef\xbb\xbf\n")
    write("real/AGENTS.md", "real\n")
    found = discover(ws)
    assert paths(found) == ["real/AGENTS.md"]
    for path in ("AGENTS.md", "empty/AGENTS.md", "bom/AGENTS.md"):
        assert "whitespace-only" in warning_for(found, path)


def test_skipped_selected_file_does_not_fall_back_to_the_next_name(ws: Path, write: Writer) -> None:
    write("AGENTS.override.md", "\n")
    write("AGENTS.md", "plain\n")
    found = discover(ws)
    assert paths(found) == []
    assert "whitespace-only" in warning_for(found, "AGENTS.override.md")


# -- caps and unreadable ----------------------------------------------------------------------


def test_byte_cap(ws: Path, write: Writer) -> None:
    write("AGENTS.md", "x" * 100)
    write("big/AGENTS.md", "y" * 101)
    found = discover(ws, InstructionFilesSettings(max_bytes=100))
    assert paths(found) == ["AGENTS.md"]  # exactly at the cap is loaded
    warning = warning_for(found, "big/AGENTS.md")
    assert "101 bytes" in warning and "max_bytes" in warning


def _discover_unprivileged(root: Path) -> dict[str, list[str]]:
    """Discover as a user the permission bits apply to (root bypasses them).

    As root, a forked child drops to ``nobody`` and sends its result back through a pipe (the
    interpreter may live where ``nobody`` cannot exec it, so no new process is started).
    """
    settings = InstructionFilesSettings(walk_threads=1)
    if os.geteuid() != 0:
        found = discover(root, settings)
        return {"paths": paths(found), "warnings": list(found.warnings)}
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 1
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            found = discover(root, settings)
            payload = {"paths": paths(found), "warnings": list(found.warnings)}
            with os.fdopen(write_end, "w") as pipe:
                json.dump(payload, pipe)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    result: dict[str, list[str]] = json.loads(data)
    return result


def test_unreadable_files_and_directories_are_skipped() -> None:
    # A world-traversable location, so an unprivileged user can reach it.
    base = Path(os.path.realpath("/tmp")) / f"harness-perm-{os.getpid()}"
    base.mkdir(mode=0o755)
    try:
        ws = base / "ws"
        for rel, text in (
            ("AGENTS.md", "root\n"),
            ("locked/AGENTS.md", "behind a closed door\n"),
            ("secret/AGENTS.md", "unreadable file\n"),
            ("open/AGENTS.md", "readable\n"),
        ):
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
        for directory in (base, ws, ws / "locked", ws / "secret", ws / "open"):
            directory.chmod(0o755)
        for file in ws.rglob("AGENTS.md"):
            file.chmod(0o644)
        (ws / "locked").chmod(0o000)
        (ws / "secret" / "AGENTS.md").chmod(0o000)

        result = _discover_unprivileged(ws)

        assert result["paths"] == ["AGENTS.md", "open/AGENTS.md"]
        warnings = result["warnings"]
        assert any(w.startswith("locked: directory skipped") for w in warnings), warnings
        assert any(w.startswith("secret/AGENTS.md: skipped: it cannot be opened") for w in warnings)
    finally:
        (base / "ws" / "locked").chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


# -- robustness ---------------------------------------------------------------------------------


def test_missing_workspace_and_file_workspace_raise_a_typed_error(ws: Path, tmp_path: Path) -> None:
    with pytest.raises(WorkspaceNotFoundError, match="does not exist"):
        discover(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(WorkspaceNotFoundError, match="not a directory"):
        discover(tmp_path / "file")
    assert issubclass(WorkspaceNotFoundError, FileNotFoundError)


async def test_load_of_a_missing_workspace_raises_the_typed_error(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        with pytest.raises(WorkspaceNotFoundError):
            await InstructionFiles().load(tmp_path / "nope", agent="reviewer")


def test_very_deep_tree_does_not_crash(ws: Path) -> None:
    depth = 400  # deeper than Python's recursion limit would allow a recursive walk
    current = ws
    for _ in range(depth):
        current = current / "d"
    os.makedirs(current)
    (current / "AGENTS.md").write_text("deep\n")
    (ws / "AGENTS.md").write_text("root\n")
    found = discover(ws)
    assert [source.depth for source in found] == [0, depth]
    assert found.sources[1].path == "d/" * depth + "AGENTS.md"


def test_undecodable_directory_name_is_shown_escaped(ws: Path) -> None:
    odd = os.fsencode(ws) + b"/caf\xe9"
    os.mkdir(odd)
    with open(odd + b"/AGENTS.md", "wb") as handle:
        handle.write(b"rules\n")
    found = discover(ws)
    assert paths(found) == ["caf\\xe9/AGENTS.md"]
    found.sources[0].path.encode("utf-8")  # printable


def _escape_twins(ws: Path) -> None:
    """Directories named with the byte 0xE9 and literally ``caf\\xe9``, each with a file."""
    root = os.fsencode(ws)
    for name in (b"caf\xe9", b"caf\\xe9"):
        os.mkdir(root + b"/" + name)
        with open(root + b"/" + name + b"/AGENTS.md", "wb") as handle:
            handle.write(name + b"\n")


def test_a_name_spelled_like_an_escape_is_not_confused_with_one(ws: Path) -> None:
    """The two get distinct paths (a backslash is shown doubled)."""
    _escape_twins(ws)
    assert sorted(paths(discover(ws))) == ["caf\\\\xe9/AGENTS.md", "caf\\xe9/AGENTS.md"]


def test_a_c1_control_and_the_undecodable_byte_of_its_number_get_distinct_paths(
    ws: Path,
) -> None:
    """U+0085 (bytes c2 85) and the lone byte 0x85 must not both read ``\\x85``."""
    root = os.fsencode(ws)
    for name in (b"\xc2\x85", b"\x85"):
        os.mkdir(root + b"/" + name)
        with open(root + b"/" + name + b"/AGENTS.md", "wb") as handle:
            handle.write(b"rules\n")
    assert sorted(paths(discover(ws))) == ["\\u0085/AGENTS.md", "\\x85/AGENTS.md"]


async def test_escape_twins_build_into_one_prompt(ws: Path) -> None:
    from harness import Harness

    _escape_twins(ws)
    with anyio.fail_after(10):
        async with Harness() as harness:
            prompt = await harness.build_prompt(ws, agent="reviewer")
    assert len(prompt.layer("instruction_files").kept) == 2
    prompt.text.encode("utf-8")  # printable


def test_thread_count_does_not_change_the_result(ws: Path, write: Writer) -> None:
    write(".gitignore", "ignored/\n")
    for a in range(6):
        for b in range(6):
            write(f"p{a}/q{b}/f.txt", "x")
            if (a + b) % 3 == 0:
                write(f"p{a}/q{b}/AGENTS.md", f"{a}{b}\n")
            write(f"p{a}/ignored/AGENTS.md", "no\n")
        write(f"p{a}/AGENTS.override.md", " ")  # whitespace-only: a warning per package
    one = discover(ws, InstructionFilesSettings(walk_threads=1))
    many = discover(ws, InstructionFilesSettings(walk_threads=6))
    assert one == many
    assert len(one) == 12 and len(one.warnings) == 6
