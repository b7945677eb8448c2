"""Every unit a build does not render has a reason from the closed set, and an instruction file
on a target's chain dropped for budget is ``required_policy_missing``, named in the warnings."""

from __future__ import annotations

from pathlib import Path

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Harness, HarnessConfig, Unit, assemble
from harness.context_requests._policy import applies
from harness.debug import format_build
from harness.prompt_assembler import EXTENDED_LAYOUT, Strategy
from harness.prompt_assembler.strategies.layer import DROP_REASONS
from tests.cli import ACME, ACME_DB


async def test_a_dropped_chain_file_is_required_policy_missing() -> None:
    target = "services/billing/api/handler.py"
    with anyio.fail_after(20):
        async with Harness(database=ACME_DB) as h:
            build = await h.build(
                ACME,
                agent="reviewer",
                project_id="acme",
                targets=[target],
                budgets={"instruction_files": 80},
            )
    missing = build.prompt.manifest()["request"]["required_policy_missing"]
    assert "AGENTS.md" in missing[target] and "db:acme/reviewer" not in missing[target]
    warning = next(w for w in build.warnings if w.startswith("AGENTS.md: required_policy"))
    assert "budget of 80" in warning and "--budget instruction_files=" in warning


async def test_nothing_missing_nothing_recorded() -> None:
    with anyio.fail_after(20):
        async with Harness(database=ACME_DB) as h:
            prompt = await h.build_prompt(ACME, agent="reviewer", project_id="acme")
    request = prompt.manifest()["request"]  # only the shadowed file: nothing else to say
    assert "required_policy_missing" not in request and "readiness" not in request
    assert request["excluded"] == [
        {
            "layer": "instruction_files",
            "id": "services/billing/api/AGENTS.md",
            "reason": "shadowed",
            "by": "services/billing/api/AGENTS.override.md",
        }
    ]


async def test_unmatched_path_rules_and_shadowed_files_have_their_reasons(tmp_path: Path) -> None:
    files = {
        "AGENTS.md": "Root rules.",
        "pkg/AGENTS.md": "Shadowed rules.",
        "pkg/AGENTS.override.md": "Override rules.",
        ".cursor/rules/ts.mdc": "---\nglobs: src/**/*.ts\n---\nStrict mode.\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    config = HarnessConfig(agents={"dev": "You are the developer."}, formats=("agents", "cursor"))
    with anyio.fail_after(20):
        async with Harness(config) as h:
            build = await h.build(tmp_path, agent="dev", targets=["pkg/x.py"])
            matched = await h.build(tmp_path, agent="dev", targets=["src/a.ts"])
    reasons = {e["id"]: e["reason"] for e in build.prompt.manifest()["request"]["excluded"]}
    assert reasons == {".cursor/rules/ts.mdc": "not_matched", "pkg/AGENTS.md": "shadowed"}
    assert "Strict mode." not in build.prompt.text and "Shadowed rules." not in build.prompt.text
    assert "removed    .cursor/rules/ts.mdc (instruction_files): not_matched" in format_build(build)
    assert "Strict mode." in matched.prompt.text
    assert "excluded" not in matched.prompt.manifest().get("request", {})


def test_a_chain_is_the_target_directories_from_the_root() -> None:
    assert applies("services/billing/AGENTS.md", "services/billing/api/x.py")
    assert not applies("services/billing/AGENTS.md", "services/billingx/y.py")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 400), max_size=6),
    st.integers(0, 200),
    st.sampled_from(list(Strategy)),
)
def test_every_drop_reason_is_in_the_closed_set(
    sizes: list[int], budget: int, strategy: Strategy
) -> None:
    units = [Unit(f"u{i}", "z" * n, source=f"{i}.md") for i, n in enumerate(sizes)]
    prompt = assemble(
        {"evidence": units},
        layout=EXTENDED_LAYOUT,
        budgets={"evidence": budget},
        strategies={"evidence": strategy},
    )
    for layer in prompt.manifest()["layers"]:
        assert {unit["reason"] for unit in layer["dropped_units"]} <= DROP_REASONS
