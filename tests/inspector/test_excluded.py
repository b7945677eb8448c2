"""``harness view`` shows every unit a build did not render: the units removed before assembly
beside their layer with the reason (and what they repeat or who won over them), each reason's
count, each target's ``required_policy_missing`` files, and the diff of two builds'
exclusions."""

from __future__ import annotations

import re
from pathlib import Path

from harness.inspector._excluded import exclusion_changes, exclusions_diff
from harness.inspector._page import render_page
from harness.prompt_assembler.strategies.layer import DROP_REASONS
from tests.cli import harness_cli
from tests.inspector.reasons import HOSTILE, TARGET, Excluding


def view(excluding: Excluding, tmp_path: Path, *ids: str) -> str:
    out = tmp_path / "page.html"
    done = harness_cli("view", str(excluding.store), *ids, "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def layer_of(page: str, name: str) -> str:
    return page.split(f'<section class="layer" id="layer-{name}"')[1].split("</section>")[0]


def excluded(block: str) -> dict[str, str]:
    """unit id -> its status text, for each unit removed before assembly in ``block``."""
    found = re.findall(
        r'<div class="unit excluded [^"]*" data-unit-id="([^"]*)" data-status="excluded" '
        r'data-reason="[^"]*"><code class="unit-id">[^<]*</code> <span class="status">'
        r"(.*?)</span>",
        block,
    )
    return {uid: re.sub(r"<[^>]+>", "", status) for uid, status in found}


def test_each_layer_shows_what_was_removed_from_it_and_why(
    excluding: Excluding, tmp_path: Path
) -> None:
    page = view(excluding, tmp_path, excluding.a)
    escaped = "&lt;script&gt;document.title=&#x27;PWNED-excluded&#x27;&lt;/script&gt;"
    assert excluded(layer_of(page, "evidence")) == {
        "readme": "excluded: outranked",
        "copy": "excluded: duplicate of prod",
        escaped: "excluded: denied",
    }
    assert excluded(layer_of(page, "instruction_files")) == {
        ".cursor/rules/ts.mdc": "excluded: not_matched",
        "pkg/AGENTS.md": "excluded: shadowed by pkg/AGENTS.override.md",
    }
    assert excluded(layer_of(page, "skills")) == {
        ".claude/skills/fmt/SKILL.md": "excluded: shadowed by .agents/skills/fmt/SKILL.md"
    }
    assert "<script" not in page.lower() and HOSTILE not in page
    assert 'data-unit-id="old" data-status="dropped"' in layer_of(page, "evidence")
    assert "dropped: stale" in layer_of(page, "evidence")


def test_the_excluded_section_counts_every_reason_and_the_missing_policy(
    excluding: Excluding, tmp_path: Path
) -> None:
    page = view(excluding, tmp_path, excluding.a)
    section = page.split('<section id="excluded">')[1].split("</section>")[0]
    counts = dict(re.findall(r'<li data-reason="(\w+)"><code>\w+</code>: (\d+)</li>', section))
    assert set(counts) == DROP_REASONS  # every reason of the closed set, from real builds
    assert counts["shadowed"] == "2" and counts["budget"] == "2"
    policy = section.split('class="skills policy-missing"')[1]
    assert f'data-target="{TARGET}"' in policy and "<code class=policy>AGENTS.md</code>" in policy
    skills = page.split('<section id="skills">')[1].split("</section>")[0]
    assert "<code>.claude/skills/fmt/SKILL.md</code> shadowed by" in skills
    readiness = page.split('<section id="readiness">')[1].split("</section>")[0]
    assert "READY" in readiness and "fix it" in readiness  # the request record's readiness


def test_the_diff_shows_what_is_excluded_in_one_build_only(
    excluding: Excluding, tmp_path: Path
) -> None:
    page = view(excluding, tmp_path, excluding.a, excluding.b)
    part = page.split('<div class="exclusions-diff">')[1].split("</div>")[0]
    items = [re.sub(r"<[^>]+>", "", item) for item in re.findall(r"<li[^>]*>(.*?)</li>", part)]
    escaped = "&lt;script&gt;document.title=&#x27;PWNED-excluded&#x27;&lt;/script&gt;"
    assert items == [
        f"- {escaped} (evidence) excluded in A (denied), not in B",
        "+ again (evidence) excluded in B (duplicate of prod)",
    ]


def test_a_changed_reason_and_policy_are_in_the_diff() -> None:
    def build(reason: str, missing: list[str]) -> dict[str, object]:
        entry = {"layer": "evidence", "id": "<u>", "reason": reason}
        record = {"excluded": [entry], "required_policy_missing": {"a.py": missing}}
        return {"manifest_id": reason, "layers": [], "request": record}

    part = exclusions_diff(
        exclusion_changes(build("denied", ["AGENTS.md"]), build("outranked", []))
    )
    assert "~ <code>&lt;u&gt;</code> (evidence): denied &rarr; outranked" in part
    assert "- <code>AGENTS.md</code> (required_policy_missing for a.py)" in part
    assert exclusion_changes(build("denied", []), build("denied", [])) == []
    assert "the same units excluded" in exclusions_diff([])


def test_an_entry_of_a_layer_not_shown_is_in_the_excluded_section() -> None:
    entry = {"layer": "<gone>", "id": "x", "reason": "denied"}
    page = render_page({"manifest_id": "M", "layers": [], "request": {"excluded": [entry]}}, {})
    section = page.split('<section id="excluded">')[1].split("</section>")[0]
    assert 'data-unit-id="x"' in section and "layer &lt;gone&gt;" in section
    assert "every unit given was rendered" in render_page({"manifest_id": "M", "layers": []}, {})


def test_builds_differing_only_in_exclusions_are_not_the_same() -> None:
    from harness.manifests._diff import diff_manifests

    entry = {"layer": "evidence", "id": "vault", "reason": "denied"}
    a = {"manifest_id": "A", "layers": [], "request": {"excluded": [entry]}}
    b = {"manifest_id": "B", "layers": []}
    change = diff_manifests(a, b)
    page = render_page(a, {}, b, diff=(change, []))
    assert "no differences" not in page
    assert "- <code>vault</code> (evidence) excluded in A (denied), not in B" in page
    assert "no differences" in render_page(b, {}, b, diff=(diff_manifests(b, b), []))
