"""``harness.workspace._ignore`` on real git repositories: tracked files, info/exclude, bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.workspace._git_index import load_tracked
from harness.workspace._ignore import IgnoreChain, IgnoreFile, parse_lines, workspace_rules
from tests.workspace.ignore_cases import GIT, git, git_view, our_view

needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


@needs_git
def test_a_file_added_with_add_f_is_not_ignored(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("AGENTS.override.md\n")
    (tmp_path / "AGENTS.override.md").write_text("override\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "AGENTS.override.md").write_text("untracked\n")
    git(tmp_path, "add", "-f", "AGENTS.override.md")
    ours = our_view(tmp_path)
    assert ours["AGENTS.override.md"] is False
    assert ours["other/AGENTS.override.md"] is True
    assert git_view(tmp_path, sorted(ours)) == ours


@needs_git
def test_an_ignored_directory_is_entered_for_its_tracked_files_only(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("build/\n")
    deep = tmp_path / "build" / "sub"
    deep.mkdir(parents=True)
    (deep / "AGENTS.md").write_text("tracked\n")
    (deep / "AGENTS.override.md").write_text("untracked\n")
    (tmp_path / "build" / "AGENTS.md").write_text("untracked\n")
    (tmp_path / "build" / "other").mkdir()
    (tmp_path / "build" / "other" / "AGENTS.md").write_text("untracked\n")
    (tmp_path / "build" / ".gitignore").write_text("!*\n")  # not read: build/ is ignored
    git(tmp_path, "add", "-f", "build/sub/AGENTS.md")
    rules = workspace_rules(str(tmp_path))
    assert rules.chain is not None and rules.index_problem is None
    root, _ = IgnoreFile.parse("", b"build/\n")
    chain = rules.chain.extended(root)
    assert chain.ignored("build", "build", True)
    assert chain.kept_dirs("", ["build"]) == []
    assert chain.tracked_dirs("", ["build"]) == ["build"]
    inside = chain.inside_ignored()
    assert inside.kept_dirs("build/", ["sub", "other"]) == ["sub"]
    assert not inside.ignored("build/sub/AGENTS.md", "AGENTS.md", False)
    assert inside.ignored("build/sub/AGENTS.override.md", "AGENTS.override.md", False)
    assert inside.ignored("build/AGENTS.md", "AGENTS.md", False)
    assert inside.extended(IgnoreFile.parse("build", b"!*\n")[0]) is inside
    ours = our_view(tmp_path)
    assert git_view(tmp_path, sorted(ours)) == ours


@needs_git
def test_info_exclude_is_the_lowest_ignore_file(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / ".git" / "info").mkdir(exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("*.secret\nlocal/\n")
    (tmp_path / ".gitignore").write_text("!keep.secret\n")
    for name in ("a.secret", "keep.secret", "local/AGENTS.md", "AGENTS.md"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x\n")
    ours = our_view(tmp_path)
    assert ours["a.secret"] and ours["local"] and ours["local/AGENTS.md"]
    assert not ours["keep.secret"] and not ours["AGENTS.md"]
    assert git_view(tmp_path, sorted(ours)) == ours


@needs_git
def test_a_linked_worktree_reads_the_common_exclude_and_its_own_index(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    (main / "f").write_text("x\n")
    git(main, "add", "f")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "f")
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("*.local\n")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = tmp_path / "linked"
    (linked / "x.local").write_text("x\n")
    (linked / "f.local").write_text("x\n")
    git(linked, "add", "-f", "f.local")
    ours = our_view(linked)
    assert ours["x.local"] is True and ours["f.local"] is False
    assert git_view(linked, sorted(ours)) == ours


def test_the_index_is_read_once_while_unchanged(tmp_path: Path) -> None:
    if GIT is None:
        pytest.skip("git is not installed")
    git(tmp_path, "init", "-q")
    (tmp_path / "a").write_text("x\n")
    git(tmp_path, "add", "a")
    first, problem = load_tracked(str(tmp_path))
    assert problem is None and first.tracked("a")
    again, _ = load_tracked(str(tmp_path))
    assert again is first  # the cached object: not parsed a second time
    (tmp_path / "b").write_text("x\n")
    git(tmp_path, "add", "b")
    changed, _ = load_tracked(str(tmp_path))
    assert changed is not first and changed.tracked("b")


def test_a_corrupt_index_tracks_nothing_and_says_why(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_bytes(b"DIRC\x00\x00\x00\x09garbage")
    tracked, problem = load_tracked(str(tmp_path))
    assert not tracked and problem is not None and "index" in problem


def test_no_git_directory_means_no_exclude_and_no_index(tmp_path: Path) -> None:
    rules = workspace_rules(str(tmp_path))
    assert rules.chain is None and rules.exclude_problem is None and rules.index_problem is None


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"\xef\xbb\xbfa\r\nb\n", [b"a", b"b"]),
        (b"a\0b\nc", [b"a", b"c"]),  # a line stops at NUL; a last line without \n counts
        (b"x \\ \ny\\  \nz\t\n", [b"x \\ ", b"y\\ ", b"z\t"]),
        (b"#c\n\\#d\n\n\r\n", [b"\\#d", b""]),
        (b"secret\xff/\n", [b"secret\xff/"]),
    ],
)
def test_lines_are_read_as_git_reads_them(data: bytes, expected: list[bytes]) -> None:
    assert [line for _, line in parse_lines(data)] == expected


def test_a_pattern_with_undecodable_bytes_matches_the_name_it_spells() -> None:
    rules, _ = IgnoreFile.parse("", b"secret\xff/\n")
    name = os.fsdecode(b"secret\xff")
    assert rules.check(name, name, True) == (1, True)
    assert rules.check(name, name, False) is None


@pytest.mark.parametrize(
    ("line", "path", "is_dir", "modern", "legacy"),
    [
        (b"foo**/bar", "foobar", False, False, True),  # t0008, fixed in git 2.52
        (b"foo**/bar", "foo/bar", False, True, True),
        (b"foo**/bar", "foox/y/bar", False, False, True),
        (b"a]b**//", "a]b", True, False, True),  # found by the large differential run
    ],
)
def test_the_literal_prefix_rule_of_git_before_and_after_2_52(
    line: bytes, path: str, is_dir: bool, modern: bool, legacy: bool
) -> None:
    name = path.rsplit("/", 1)[-1]
    for prefix_context, expected in ((True, modern), (False, legacy)):
        rules, _ = IgnoreFile.parse("", line + b"\n", prefix_context=prefix_context)
        found = rules.check(path, name, is_dir)
        assert (found is not None and found[1]) is expected, (prefix_context, path)


class _Names:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def files(self, walk: object, here: object, named: dict[str, object]) -> None:
        self.seen.extend(named)


def _walk_with_index(root: Path, ignore: str) -> tuple[bool, list[tuple[str, str]], list[str]]:
    """(index read?, warnings, names seen) of a walk over a repository whose index is
    corrupt, with ``ignore`` as its root ``.gitignore``."""
    from harness.workspace import DirectoryWalk, resolve_workspace
    from harness.workspace._git_index import LazyTracked

    (root / ".git").mkdir()
    (root / ".git" / "index").write_bytes(b"DIRC\x00\x00\x00\x09garbage")
    (root / ".gitignore").write_text(ignore)
    (root / "src").mkdir()
    (root / "src" / "AGENTS.md").write_text("rules\n")
    resolved = resolve_workspace(root)
    rules = workspace_rules(resolved)
    assert rules.chain is not None and isinstance(rules.chain.tracked, LazyTracked)
    names = _Names()
    walk = DirectoryWalk(resolved, names, prune=(), special=("AGENTS.md",), rules=rules)
    walk.run(threads=1)
    return rules.chain.tracked.loaded, walk.warnings, names.seen


def test_the_index_is_not_read_when_no_rule_ignores_anything(tmp_path: Path) -> None:
    read, warnings, seen = _walk_with_index(tmp_path, "*.log\n")
    assert not read and warnings == [] and seen == ["AGENTS.md"]


def test_the_index_is_read_when_a_rule_ignores_something_and_its_problem_warned(
    tmp_path: Path,
) -> None:
    read, warnings, seen = _walk_with_index(tmp_path, "src/\n")
    assert read and seen == []
    assert [path for path, _ in warnings] == [".git/index"]
    assert "no file counts as tracked" in warnings[0][1]


def test_kept_dirs_hands_back_the_list_itself_when_nothing_is_ignored() -> None:
    """The walk asks this for every directory it lists: no copy when every name is kept,
    and the memoised answers stay right for names seen kept first and ignored later."""
    root, _ = IgnoreFile.parse("", b"dist/\n/tmp/\n")
    nested, _ = IgnoreFile.parse("pkg", b"generated/\n")
    chain = IgnoreChain((root,)).extended(nested)
    names = ["src", "lib"]
    assert chain.kept_dirs("pkg/a/", names) is names
    assert chain.kept_dirs("pkg/a/", ["src", "dist", "generated", "lib"]) == ["src", "lib"]
    assert chain.kept_dirs("pkg/a/", names) is names
    assert chain.kept_dirs("", ["tmp", "src", "dist"]) == ["src"]  # anchored: by path
    assert chain.kept_dirs("pkg/", ["tmp", "src"]) == ["tmp", "src"]


def test_a_nested_chain_answers_from_its_own_file_before_its_parents_memo() -> None:
    """A nested ``.gitignore``'s chain asks its parent chain (and that one's memo) only about
    names its own file does not decide: a re-include beats the parent's answer, a deeper
    ignore beats the parent's kept one, and each chain keeps its own answers."""
    root, _ = IgnoreFile.parse("", b"build/\n*.tmp\n")
    nested, _ = IgnoreFile.parse("pkg", b"!build/\ncache/\n")
    deeper, _ = IgnoreFile.parse("pkg/a", b"build/\n")
    top = IgnoreChain((root,))
    chain = top.extended(nested)
    deepest = chain.extended(deeper)
    names = ["build", "cache", "src", "x.tmp"]
    assert top.kept_dirs("", names) == ["cache", "src"]  # the parent's memo filled first
    assert chain.kept_dirs("pkg/", names) == ["build", "src"]
    assert deepest.kept_dirs("pkg/a/", names) == ["src"]
    assert deepest.kept_dirs("pkg/a/b/", ["lib", "x.tmp", "cache"]) == ["lib"]
    for owner, prefix in ((top, ""), (chain, "pkg/"), (deepest, "pkg/a/")):
        kept = owner.kept_dirs(prefix, names)
        assert kept == [n for n in names if not owner.ignored(prefix + n, n, True)]
