"""The page's text and the CLI: escaping, sections, the diff and its line differences."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.inspector._page import CSP, render_page
from tests.cli import harness_cli
from tests.inspector.conftest import INJECTION, Recorded


def view(recorded: Recorded, tmp_path: Path, *ids: str) -> str:
    out = tmp_path / "page.html"
    done = harness_cli("view", str(recorded.store), *ids, "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {out}\n"
    return out.read_text(encoding="utf-8")


def test_recorded_markup_is_text_and_the_page_loads_nothing(
    recorded: Recorded, tmp_path: Path
) -> None:
    page = view(recorded, tmp_path, recorded.a, recorded.b)
    assert "<script" not in page.lower()
    assert "<img" not in page.lower()
    assert "<a " not in page.lower()
    assert "&lt;script&gt;document.title=&#x27;PWNED-script&#x27;&lt;/script&gt;" in page
    assert "&lt;b&gt;evil&lt;/b&gt;.txt" in page  # a source is escaped too
    assert f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' in page
    assert not re.search(r"""(src|href)\s*=""", page.replace("&#x27;", "'").split("</style>")[0])


def test_layers_units_and_absent_sections(recorded: Recorded, tmp_path: Path) -> None:
    page = view(recorded, tmp_path, recorded.b)
    for layer in (
        "identity",
        "instruction_files",
        "project_context",
        "business_rules",
        "task_state",
    ):
        assert f'data-layer="{layer}"' in page
    assert page.count('data-status="dropped"') == 2  # goal and done do not fit 3 tokens
    assert "dropped: budget" in page
    for section in ("skills", "tools", "readiness"):
        block = page.split(f'<section id="{section}">')[1].split("</section>")[0]
        assert "none recorded" in block
    targets = page.split('<section id="targets">')[1].split("</section>")[0]
    assert "none recorded" not in targets  # recorded, and empty
    assert "Diff A" not in page


def test_a_recorded_section_is_shown() -> None:
    manifest = {
        "manifest_id": "X",
        "layers": [],
        "readiness": {"status": "NEEDS_MORE_CONTEXT", "missing": ["<owner>"]},
    }
    page = render_page(manifest, {})
    block = page.split('<section id="readiness">')[1].split("</section>")[0]
    assert "NEEDS_MORE_CONTEXT" in block and "&lt;owner&gt;" in block


def test_two_ids_show_the_diff_with_line_differences(recorded: Recorded, tmp_path: Path) -> None:
    page = view(recorded, tmp_path, recorded.a, recorded.b)
    assert f"Diff A {recorded.a} &rarr; B {recorded.b}" in page
    assert '<span class="line del">-Cap: 500 EUR.</span>' in page
    assert '<span class="line add">+Cap: 750 EUR.</span>' in page
    assert "hostile</code> (kept) added in B" in page


def test_diff_text_prints_the_same_line_differences(recorded: Recorded) -> None:
    done = harness_cli("diff", str(recorded.store), recorded.a, recorded.b, "--text")
    assert done.returncode == 0, done.stderr
    assert "business_rules: refunds\n" in done.stdout
    assert "  -Cap: 500 EUR.\n  +Cap: 750 EUR.\n" in done.stdout
    plain = harness_cli("diff", str(recorded.store), recorded.a, recorded.b)
    assert done.stdout.startswith(plain.stdout)  # the manifest diff first, unchanged


@pytest.mark.parametrize(
    ("args", "wording"),
    [
        (["NOPE"], "NOPE"),
        (["ID", "-o", "/nonexistent-dir/page.html"], "cannot write the page"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    recorded: Recorded, tmp_path: Path, args: list[str], wording: str
) -> None:
    args = [recorded.a if arg == "ID" else arg for arg in args]
    if "-o" not in args:
        args += ["-o", str(tmp_path / "page.html")]
    done = harness_cli("view", str(recorded.store), *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and wording in done.stderr, done.stderr
    assert INJECTION not in done.stderr


def test_diff_text_and_json_do_not_combine(recorded: Recorded) -> None:
    done = harness_cli("diff", str(recorded.store), recorded.a, recorded.b, "--text", "--json")
    assert done.returncode == 2
    assert done.stderr.startswith("harness: error: --text and --json cannot be combined")
