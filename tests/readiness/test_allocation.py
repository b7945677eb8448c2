"""``allocation="ceilings"``: unused budget lent forward to information layers, every loan
recorded; never over a ceiling plus loans, never past the sum of the ceilings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.prompt_assembler import EXTENDED_LAYOUT, Manifest, Unit, assemble
from harness.prompt_assembler._layout import layout_budgets

NAMES = [spec.name for spec in EXTENDED_LAYOUT]
INFORMATION = {spec.name for spec in EXTENDED_LAYOUT if spec.authority == "information"}


def test_the_readme_gap_is_lent_to_the_layer_that_needs_it() -> None:
    layers = {"identity": "You are the reviewer.", "task_state": [Unit("s", "x" * 20_000)]}
    fixed = assemble(layers)
    lent = assemble(layers, allocation="ceilings")
    assert fixed.layer("task_state").kept == ()
    state = lent.layer("task_state")
    assert state.kept == ("s",) and state.borrowed == 1000 and state.budget == 5000
    assert lent.layer("identity").lent + lent.layer("instruction_files").lent >= 1000
    assert sum(tokens for *_, tokens in lent.loans) == 1000
    assert {loan["to"] for loan in lent.manifest()["loans"]} == {"task_state"}
    assert any("borrowed 1000" in note for note in state.notes)
    record = lent.manifest_record()
    assert Manifest.from_json(record.to_json()) == record


def test_instruction_layers_never_borrow() -> None:
    layers = {
        "instruction_files": [Unit("a", "x" * 40_000, source="AGENTS.md")],
        "task_state": "short",
    }
    prompt = assemble(layers, allocation="ceilings")
    assert prompt.layer("instruction_files").borrowed == 0
    assert prompt.layer("instruction_files").kept == ()


def test_fixed_is_unchanged_and_unknown_is_refused() -> None:
    layers = {"task_state": [Unit("s", "x" * 12_000)]}
    assert assemble(layers).manifest() == assemble(layers, allocation="fixed").manifest()
    assert "loans" not in assemble(layers).manifest()
    with pytest.raises(ValueError, match="ceilings"):
        assemble(layers, allocation="quotas")  # type: ignore[arg-type]


sizes = st.lists(st.integers(0, 3000), min_size=0, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    st.fixed_dictionaries({name: sizes for name in NAMES}),
    st.fixed_dictionaries({name: st.integers(0, 2000) for name in NAMES}),
)
def test_loans_never_create_tokens(lengths: dict[str, list[int]], budgets: dict[str, int]) -> None:
    layers = {
        name: [Unit(f"{name}{i}", "y" * n) for i, n in enumerate(ns)]
        for name, ns in lengths.items()
        if name != "identity" or len(ns) <= 1
    }
    prompt = assemble(layers, layout=EXTENDED_LAYOUT, budgets=budgets, allocation="ceilings")
    ceilings = {**layout_budgets(EXTENDED_LAYOUT), **budgets}
    lent_by: dict[str, int] = {}
    borrowed_by: dict[str, int] = {}
    for lender, borrower, tokens in prompt.loans:
        assert tokens > 0 and borrower in INFORMATION
        assert NAMES.index(lender) < NAMES.index(borrower)  # forward, in layout order
        lent_by[lender] = lent_by.get(lender, 0) + tokens
        borrowed_by[borrower] = borrowed_by.get(borrower, 0) + tokens
    for report in prompt.layers:
        ceiling = ceilings[report.name]
        assert report.budget == ceiling + report.borrowed  # never over a ceiling plus loans
        assert report.tokens <= report.budget
        assert report.lent == lent_by.get(report.name, 0)
        assert report.borrowed == borrowed_by.get(report.name, 0)
        assert report.lent <= ceiling - report.tokens or report.borrowed  # lends only unused
    assert sum(r.tokens for r in prompt.layers) <= sum(ceilings.values())  # within envelope
    assert sum(r.lent for r in prompt.layers) == sum(r.borrowed for r in prompt.layers)


async def test_a_ceilings_build_prints_its_loans() -> None:
    import anyio

    from harness import Harness
    from harness.debug import format_build
    from tests.cli import ACME, ACME_DB

    state = [Unit("plan", "x" * 20_000)]
    with anyio.fail_after(20):
        async with Harness(database=ACME_DB) as h:
            build = await h.build(
                ACME,
                agent="reviewer",
                project_id="acme",
                task_state=state,
                allocation="ceilings",
            )
    assert build.prompt.layer("task_state").kept == ("plan",)
    assert "loan       " in format_build(build) and "-> task_state" in format_build(build)
    assert build.prompt.manifest()["loans"]
