"""Strict mode against the reference validator's own cases (``fixtures/skills_ref``).

Each case is the skill directory one of ``skills-ref``'s tests writes; ``cases.json`` says
what ``skills-ref validate`` answers (checked by running it) and what ``strict=True``
answers. They differ only where ``skills-ref`` departs from the specification: non-ASCII
names (the specification allows ``a-z``, ``0-9`` and ``-``) and frontmatter split at any
``---`` rather than at the closing line.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anyio
import pytest

from harness import SkillCatalog, SkillError
from tests.skills.support import FIXTURES

CASES = FIXTURES / "skills_ref"
ALL = json.loads((CASES / "cases.json").read_text(encoding="utf-8"))


def _workspace(tmp_path: Path, case: dict[str, str]) -> Path:
    workspace = tmp_path / "ws"
    target = workspace / ".agents" / "skills" / case["directory"]
    shutil.copytree(CASES / case["case"] / case["directory"], target)
    return workspace


@pytest.mark.parametrize("case", ALL, ids=[case["case"] for case in ALL])
async def test_strict_mode_answers_as_the_specification(
    tmp_path: Path, case: dict[str, str]
) -> None:
    workspace = _workspace(tmp_path, case)
    expected = case["harness_strict"]
    with anyio.fail_after(30):
        if expected == "valid":
            catalog = await SkillCatalog.discover(workspace, strict=True)
            assert len(catalog.skills) == 1
            return
        with pytest.raises(SkillError) as caught:
            await SkillCatalog.discover(workspace, strict=True)
    assert any(expected.lower() in problem.lower() for problem in caught.value.problems)
    assert all(problem.startswith(".agents/skills/") for problem in caught.value.problems)


@pytest.mark.parametrize("case", ALL, ids=[case["case"] for case in ALL])
async def test_lenient_mode_never_raises(tmp_path: Path, case: dict[str, str]) -> None:
    workspace = _workspace(tmp_path, case)
    with anyio.fail_after(30):
        catalog = await SkillCatalog.discover(workspace)
    if case["harness_strict"] == "valid":
        assert len(catalog.skills) == 1 and catalog.warnings == ()
    elif case["case"] == "unexpected_fields":  # kept in extra, silently
        assert catalog.skills[0].extra == {"unknown_field": "should not be here"}
    else:
        assert catalog.warnings  # loaded with a warning, or skipped with one


def test_the_cases_agree_with_skills_ref_except_where_it_departs_from_the_spec() -> None:
    differing = {
        c["case"] for c in ALL if (c["skills_ref"] == "valid") != (c["harness_strict"] == "valid")
    }
    assert differing == {
        "i18n_chinese_name",
        "i18n_russian_name_with_hyphens",
        "i18n_russian_lowercase_valid",
        "nfkc_normalization",
        "dashes_inside_a_value",
    }


async def test_strict_lists_every_problem_of_every_skill(tmp_path: Path) -> None:
    skills = tmp_path / ".claude" / "skills"
    (skills / "a").mkdir(parents=True)
    (skills / "a" / "SKILL.md").write_text("---\nname: A_\ndescription: d\nx: 1\n---\n")
    (skills / "b").mkdir()
    (skills / "b" / "SKILL.md").write_text("---\nname: b\n---\n")
    with anyio.fail_after(30), pytest.raises(SkillError) as caught:
        await SkillCatalog.discover(tmp_path, strict=True)
    problems = caught.value.problems
    assert ".claude/skills/a/SKILL.md: unexpected field(s) in frontmatter: x" in problems
    assert any(
        p.startswith(".claude/skills/a/SKILL.md: name 'A_' must be lowercase") for p in problems
    )
    assert any(
        p.startswith(".claude/skills/a/SKILL.md: directory name 'a' must match") for p in problems
    )
    assert any(
        p.startswith(".claude/skills/b/SKILL.md: missing required field 'description'")
        for p in problems
    )
    assert isinstance(caught.value, ValueError)
