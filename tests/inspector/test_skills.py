"""``harness view`` of a build with skills: each catalog entry and activation with its status
in the layer (kept, or dropped and why), the digests, trigger, reason and resources."""

from __future__ import annotations

from pathlib import Path

import anyio

from harness import Harness, SkillCatalog
from harness.inspector._skills import skills_section
from tests.cli import harness_cli
from tests.skills.support import extended, skill_md, write_skill


async def _recorded(tmp_path: Path) -> tuple[Path, str, SkillCatalog]:
    workspace = tmp_path / "ws"
    write_skill(workspace, ".claude/skills/alpha", skill_md("alpha", "Alpha <b>bold</b>."))
    (workspace / ".claude/skills/alpha/ref.md").write_text("never read\n")
    write_skill(workspace, ".claude/skills/beta", skill_md("beta", "B" * 400))
    store = tmp_path / "manifests.db"
    with anyio.fail_after(60):
        catalog = await SkillCatalog.discover(workspace)
        alpha = await catalog.activate("alpha", reason="asked <i>nicely</i>", trigger="user")
        async with Harness(extended()) as h:  # each unit's tokens, all kept
            whole = await h.build_prompt(
                workspace, agent="reviewer", skills=catalog, activations=[alpha]
            )
        [layer] = [m for m in whole.manifest()["layers"] if m["name"] == "skills"]
        tokens = {unit["id"]: unit["tokens"] for unit in layer["units"]}
        budget = tokens["activation:alpha"] + tokens["skill:alpha"] + 10  # not beta (100)
        async with Harness(extended(), manifests=store) as h:
            prompt = await h.build_prompt(
                workspace,
                agent="reviewer",
                skills=catalog,
                activations=[alpha],
                budgets={"skills": budget},
            )
    skills = next(layer for layer in prompt.layers if layer.name == "skills")
    assert skills.dropped == ("skill:beta",) and "activation:alpha" in skills.kept
    return store, prompt.manifest_id or "", catalog


def _section(page: str) -> str:
    return page.split('<section id="skills">')[1].split("</section>")[0]


async def test_view_shows_the_catalog_and_activations_with_their_status(tmp_path: Path) -> None:
    store, manifest_id, catalog = await _recorded(tmp_path)
    out = tmp_path / "page.html"
    done = harness_cli("view", str(store), manifest_id, "-o", str(out))
    assert done.returncode == 0, done.stderr
    section = _section(out.read_text(encoding="utf-8"))
    assert f'title="{catalog.digest}"' in section  # the catalog digest
    catalog_table = section.split('skill-catalog"')[1].split("</table>")[0]
    rows = catalog_table.split("<tr>")[2:]
    assert "alpha" in rows[0] and 'data-status="kept"' in rows[0]
    assert "beta" in rows[1] and "dropped: budget" in rows[1]
    assert catalog.get("beta").digest[:12] in rows[1]
    [activation] = section.split('skill-activations"')[1].split("<tr>")[2:]
    assert ">user<" in activation  # the trigger
    assert "asked &lt;i&gt;nicely&lt;/i&gt;" in activation  # the reason, escaped
    assert "<code>.claude/skills/alpha/ref.md</code>" in activation  # a resource
    assert 'data-status="kept"' in activation
    assert catalog.get("alpha").digest[:12] in activation


def test_no_skills_recorded_says_so() -> None:
    assert skills_section({"layers": []}) is None
    empty = skills_section({"layers": [], "skills": {"catalog_digest": None, "catalog": [],
                                                    "activations": []}})  # fmt: skip
    assert empty is not None
    assert "no catalog" in empty and "no catalog entries" in empty and "no activations" in empty
