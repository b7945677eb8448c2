"""Every unit a build does not render has a reason from the closed set, and an instruction file
on a target's chain dropped for budget is ``required_policy_missing``, named in the warnings."""

from __future__ import annotations

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Harness, Unit, assemble
from harness.context_requests.policy import applies
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
    assert "request" not in prompt.manifest()


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
