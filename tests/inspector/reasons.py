"""Two builds recorded in a real SQLite store whose manifests hold every reason a unit is not
rendered for: ``budget``, ``stale``, ``denied``, ``duplicate``, ``outranked``,
``not_matched``, ``shadowed`` (an instruction file and a skill), and a chain instruction file
``required_policy_missing``. The second build excludes other units: no denied or stale one,
one more duplicate."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio

from harness import ContextRequest, Harness, Requirement, SkillCatalog, Unit
from tests.skills.support import extended, skill_md, write_skill

TARGET = "pkg/x.py"
FILES = {
    "AGENTS.md": "Root rules: run the tests. " * 20,
    "pkg/AGENTS.md": "Shadowed <b>rules</b>.",
    "pkg/AGENTS.override.md": "Override rules.",
    ".cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts\n---\nStrict mode.\n",
}
HOSTILE = "<script>document.title='PWNED-excluded'</script>"


@dataclass(frozen=True)
class Excluding:
    store: Path
    a: str
    b: str


def workspace(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    write_skill(root, ".claude/skills/fmt", skill_md("fmt", "Formats code."))
    write_skill(root, ".agents/skills/fmt", skill_md("fmt", "Formats code, the project way."))
    return root


def evidence(now: datetime, second: bool) -> list[Unit]:
    found = [
        Unit("prod", "timeout: 5s", kind="config", claim="timeout", value="5", authority="runtime"),
        Unit("readme", "timeout: 30s", value="30", authority="docs", kind="doc", claim="timeout"),
        Unit("copy", "timeout: 5s", kind="note"),
        Unit(HOSTILE, "secret=1", requires=frozenset({"secrets:read"})),
        Unit("old", "stale summary", observed_at=now - timedelta(days=2), max_age=60),
    ]
    return [*found[:3], Unit("again", "timeout: 5s", kind="note")] if second else found


async def record(store: Path, root: Path) -> Excluding:
    request = ContextRequest(
        "fix it",
        requirements=[Requirement("config", claim="timeout")],
        authority={"timeout": ["runtime", "docs"]},
    )
    ids = []
    with anyio.fail_after(60):
        catalog = await SkillCatalog.discover(root)
        async with Harness(extended(formats=("agents", "cursor")), manifests=store) as h:
            for second in (False, True):
                build = await h.build(
                    root,
                    agent="reviewer",
                    targets=[TARGET],
                    skills=catalog,
                    request=request,
                    evidence=evidence(datetime.now(UTC), second),
                    task_state=[Unit("goal", "review PR 42"), Unit("next", "approve")],
                    budgets={"instruction_files": 40, "task_state": 4},
                )
                assert build.prompt.manifest_id is not None
                ids.append(build.prompt.manifest_id)
    return Excluding(store, ids[0], ids[1])
