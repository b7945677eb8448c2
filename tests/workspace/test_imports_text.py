"""The text rules of ``@path`` imports (``harness.workspace._imports``), with an in-memory
door; the file rules are tested through real files in the instruction-file tests."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.workspace._imports import MAX_DEPTH, Imported, ImportRefused, expand, import_target


def door(files: dict[str, str]):  # type: ignore[no-untyped-def]
    def read(rel: str) -> str:
        try:
            return files[rel]
        except KeyError:
            raise ImportRefused("no such file") from None

    return read


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("@docs/a.md", "docs/a.md"),
        ("   @./a.md  ", "./a.md"),
        ("\t@../b.md", "../b.md"),
        ("@/etc/passwd", None),  # absolute: plain text
        ("@alice please review", None),  # prose
        ("@", None),
        ("email me @ home", None),
        ("x @a.md", None),
    ],
)
def test_which_lines_are_imports(line: str, target: str | None) -> None:
    assert import_target(line) == target


def test_an_import_is_replaced_by_the_file_and_recorded() -> None:
    files = {"AGENTS.md": "top\n@docs/s.md\nend\n", "docs/s.md": "style\n"}
    result = expand("AGENTS.md", files["AGENTS.md"], door(files), max_bytes=1000)
    assert result.text == "top\nstyle\nend\n"
    assert result.imports == (("docs/s.md", sha("style\n")),)
    assert result.warnings == ()


def test_paths_resolve_against_the_importing_files_directory() -> None:
    files = {"a/AGENTS.md": "@../b/x.md\n", "b/x.md": "@y.md\n", "b/y.md": "Y"}
    result = expand("a/AGENTS.md", files["a/AGENTS.md"], door(files), max_bytes=1000)
    assert result.text == "Y\n"
    assert [path for path, _ in result.imports] == ["b/x.md", "b/y.md"]


@pytest.mark.parametrize("fence", ["```", "~~~", "````", "  ```python"])
def test_lines_inside_fenced_code_are_never_imports(fence: str) -> None:
    close = fence.strip()[:4] if fence.strip().startswith("````") else fence.strip()[:3]
    text = f"{fence}\n@x.md\n{close}\n@x.md\n"
    result = expand("AGENTS.md", text, door({"x.md": "X"}), max_bytes=1000)
    assert result.text == f"{fence}\n@x.md\n{close}\nX\n"


def test_a_shorter_or_other_fence_does_not_close_a_block() -> None:
    text = "````\n```\n~~~~\n@x.md\n````\n"
    result = expand("AGENTS.md", text, door({"x.md": "X"}), max_bytes=1000)
    assert result.text == text


def test_a_cycle_is_left_as_it_is_with_a_warning() -> None:
    files = {"AGENTS.md": "@a.md\n", "a.md": "A\n@AGENTS.md\n"}
    result = expand("AGENTS.md", files["AGENTS.md"], door(files), max_bytes=1000)
    assert result.text == "A\n@AGENTS.md\n"
    assert result.warnings == (
        "a.md: import @AGENTS.md: not expanded: an import cycle (AGENTS.md -> a.md -> AGENTS.md)",
    )


def test_imports_nest_at_most_four_levels() -> None:
    files = {f"f{i}.md": f"L{i}\n@f{i + 1}.md\n" for i in range(1, 8)}
    text = "@f1.md\n"
    result = expand("AGENTS.md", text, door(files), max_bytes=10_000)
    assert [path for path, _ in result.imports] == [f"f{i}.md" for i in range(1, MAX_DEPTH + 1)]
    assert "L4\n@f5.md" in result.text and "L5" not in result.text
    assert result.warnings == ("f4.md: import @f5.md: not expanded: imports nest at most 4 levels",)


def test_a_path_leaving_the_workspace_is_refused() -> None:
    result = expand("a/AGENTS.md", "@../../x.md\n", door({}), max_bytes=1000)
    assert result.text == "@../../x.md\n"
    assert "leaves the workspace" in result.warnings[0]


def test_a_refused_read_leaves_the_line_with_its_reason() -> None:
    result = expand("AGENTS.md", "@missing.md\n", door({}), max_bytes=1000)
    assert result.text == "@missing.md\n"
    assert result.warnings == ("AGENTS.md: import @missing.md: not expanded: no such file",)


def test_an_import_over_the_cap_is_not_expanded_nor_recorded() -> None:
    files = {"big.md": "x" * 100 + "\n@small.md\n", "small.md": "s"}
    result = expand("AGENTS.md", "@small.md\n@big.md\n", door(files), max_bytes=50)
    assert result.text == "s\n@big.md\n"
    assert [path for path, _ in result.imports] == ["small.md"]
    assert len(result.warnings) == 1 and "50-byte cap" in result.warnings[0]


@given(st.text(alphabet="@ab/.`~\n x", max_size=80))
def test_text_without_importable_files_is_unchanged(text: str) -> None:
    result = expand("AGENTS.md", text, door({}), max_bytes=10_000)
    assert result.text == text
    assert result.imports == ()


class Bounded:
    """An in-memory door that counts its reads and refuses to go on past ``limit`` of them,
    so a regression to unbounded fan-out fails fast instead of hanging the suite."""

    def __init__(self, files: dict[str, str], limit: int = 10_000) -> None:
        self.files, self.limit, self.reads = files, limit, 0

    def __call__(self, rel: str) -> str:
        self.reads += 1
        if self.reads > self.limit:
            raise RuntimeError(f"more than {self.limit} reads: the fan-out is unbounded")
        try:
            return self.files[rel]
        except KeyError:
            raise ImportRefused("no such file") from None


def test_fan_out_costs_work_linear_in_the_cap() -> None:
    # Five 360-byte files, each with 60 lines importing the next: unbounded, one load would
    # read the last file about 13 million times.
    files = {f"f{i}.md": f"@f{i + 1}.md\n" * 60 for i in range(5)}
    read = Bounded(files)
    result = expand("AGENTS.md", files["f0.md"], read, max_bytes=256 * 1024)
    assert len(result.text.encode()) <= 256 * 1024
    assert read.reads <= len(files)  # each file read once, its text reused
    assert any("262144-byte cap" in warning for warning in result.warnings)


def test_the_cap_is_checked_before_each_expansion_not_after_it() -> None:
    files = {"a.md": "A" * 10 + "\n@b.md\n", "b.md": "B" * 100}
    result = expand("AGENTS.md", "@a.md\n", Bounded(files), max_bytes=60)
    assert result.text == "A" * 10 + "\n@b.md\n"  # a.md fits; b.md is refused before reading on
    assert [path for path, _ in result.imports] == ["a.md"]
    assert result.warnings == (
        "a.md: import @b.md: not expanded: it would take the text over the 60-byte cap",
    )


@pytest.mark.parametrize(
    "text",
    [
        "    @x.md\n",  # at the start
        "intro\n\n    @x.md\n",  # after a blank line
        "\t@x.md\n",  # a tab is four columns
        "  \t@x.md\n",
        "\n    code\n\n    @x.md\n",  # a blank line inside the block does not end it
    ],
)
def test_lines_inside_indented_code_blocks_are_never_imports(text: str) -> None:
    result = expand("AGENTS.md", text, Bounded({"x.md": "X"}), max_bytes=1000)
    assert result.text == text and result.imports == ()


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("intro\n    @x.md\n", "intro\nX\n"),  # a paragraph's continuation line, not code
        ("   @x.md\n", "X\n"),  # three spaces are not code
        ("    code\nend\n@x.md\n", "    code\nend\nX\n"),  # the block has ended
    ],
)
def test_indented_lines_outside_code_blocks_still_import(text: str, expanded: str) -> None:
    result = expand("AGENTS.md", text, Bounded({"x.md": "X"}), max_bytes=1000)
    assert result.text == expanded


def test_a_cycle_through_another_name_of_the_same_file_is_detected() -> None:
    files = {"a.md": "A\n@link.md\n", "link.md": "A\n@link.md\n"}

    def read(rel: str) -> Imported:  # link.md is a symlink to a.md
        return Imported(Bounded(files)(rel), "a.md" if rel == "link.md" else rel)

    result = expand("AGENTS.md", "@a.md\n", read, max_bytes=1000)
    assert result.text == "A\n@link.md\n"
    assert result.warnings == (
        "a.md: import @link.md: not expanded: an import cycle (AGENTS.md -> a.md -> link.md, "
        "which is a.md)",
    )
