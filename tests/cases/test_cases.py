"""Replayable context cases: saved from a real store, checked with no store, through the API
and the command line (exit 0 passed, 1 a unit missing with its reason, 2 bad input)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from harness import EXTENDED_LAYOUT, Harness, HarnessConfig, Unit
from harness.cases import CASE_FORMAT, CaseError, check_case, load_case, save_case, write_case
from harness.manifests import ManifestStore
from tests.cli import ACME, ACME_DB, harness_cli
from tests.readiness.scenarios import parser_evidence, parser_request

LOG = Unit("ci-log", "FAILED test_parser " * 3000)  # far over the task_state budget
GOAL = Unit("goal", "repair the span parser")


async def _record(store: Path) -> str:
    """One real build recorded in ``store``: the CI log dropped for budget, the secret denied."""
    config = HarnessConfig(layout=EXTENDED_LAYOUT)
    with anyio.fail_after(30):
        async with Harness(config, database=ACME_DB, manifests=store) as h:
            prompt = await h.build_prompt(
                ACME,
                agent="reviewer",
                project_id="acme",
                task_state=[LOG, GOAL],
                request=parser_request(),
                evidence=parser_evidence(),
            )
    assert prompt.manifest_id is not None
    return prompt.manifest_id


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "manifests.db"
    return store, anyio.run(_record, store)


async def _save(store: Path, manifest_id: str, expect: list[str], out: Path) -> None:
    with anyio.fail_after(20):
        async with ManifestStore.open(store) as opened:
            await save_case(opened, manifest_id, expect=expect, classify="lost_log", path=out)


def test_a_case_names_each_missing_unit_and_its_reason(
    recorded: tuple[Path, str], tmp_path: Path
) -> None:
    store, manifest_id = recorded
    out = tmp_path / "case.json"
    anyio.run(_save, store, manifest_id, ["goal", "ci-log", ".env.production"], out)
    store.unlink()  # self-contained: checking needs no store
    outcome = check_case(out)
    assert not outcome.passed and outcome.classification == "lost_log"
    reasons = {item.unit: (item.layer, item.reason) for item in outcome.missing}
    assert reasons == {
        "ci-log": ("task_state", "budget"),
        ".env.production": ("evidence", "denied"),
    }
    assert "postgres://secret" not in out.read_text()  # denied text is in no case either
    assert "ci-log in task_state: budget" in outcome.render()


def test_a_case_whose_units_are_included_passes(recorded: tuple[Path, str], tmp_path: Path) -> None:
    store, manifest_id = recorded
    out = tmp_path / "case.json"
    anyio.run(_save, store, manifest_id, ["goal"], out)
    case = load_case(out)
    assert case["format"] == CASE_FORMAT and case["expect"] == ["goal"]
    assert check_case(case).passed


def test_a_better_assembler_makes_a_failing_case_pass(
    recorded: tuple[Path, str], tmp_path: Path
) -> None:
    """The recorded inputs are what is replayed: a budget that now fits brings the unit back."""
    store, manifest_id = recorded
    out = tmp_path / "case.json"
    anyio.run(_save, store, manifest_id, ["ci-log"], out)
    case = load_case(out)
    assert not check_case(case).passed
    for layer in case["manifest"]["layers"]:
        if layer["name"] == "task_state":
            layer["budget"] = 100_000
    assert check_case(case).passed


def test_save_refuses_units_the_build_never_had_and_bad_words(
    recorded: tuple[Path, str], tmp_path: Path
) -> None:
    store, manifest_id = recorded

    async def save(expect: list[str], word: str) -> None:
        async with ManifestStore.open(store) as opened:
            await save_case(opened, manifest_id, expect=expect, classify=word)

    with pytest.raises(CaseError, match="not in manifest"):
        anyio.run(save, ["nowhere"], "word")
    with pytest.raises(CaseError, match="one word"):
        anyio.run(save, ["goal"], "two words")
    with pytest.raises(CaseError, match="at least one"):
        anyio.run(save, [], "word")


def test_a_damaged_case_is_bad_input(recorded: tuple[Path, str], tmp_path: Path) -> None:
    store, manifest_id = recorded
    out = tmp_path / "case.json"
    anyio.run(_save, store, manifest_id, ["goal"], out)
    case = load_case(out)
    address = next(iter(case["texts"]))
    case["texts"][address] = "something else"
    with pytest.raises(CaseError, match="damaged"):
        check_case(case)
    write_case({"format": "other"}, tmp_path / "foreign.json")
    with pytest.raises(CaseError, match="not a context case"):
        check_case(tmp_path / "foreign.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(CaseError, match="not JSON"):
        check_case(tmp_path / "broken.json")
    with pytest.raises(CaseError, match="cannot read"):
        check_case(tmp_path / "absent.json")


def test_the_command_line_exit_statuses(recorded: tuple[Path, str], tmp_path: Path) -> None:
    store, manifest_id = recorded
    failing, passing = tmp_path / "failing.json", tmp_path / "passing.json"
    save = ["case", "save", str(store), manifest_id, "--classify", "lost_log", "-o"]
    made = harness_cli(*save, str(failing), "--expect", "goal", "ci-log")
    assert made.returncode == 0, made.stderr
    assert harness_cli(*save, str(passing), "--expect", "goal").returncode == 0
    checked = harness_cli("case", "check", str(failing))
    assert checked.returncode == 1
    assert "ci-log in task_state: budget" in checked.stdout
    as_json = json.loads(harness_cli("case", "check", str(failing), "--json").stdout)
    assert as_json["missing"][0]["reason"] == "budget" and not as_json["passed"]
    assert harness_cli("case", "check", str(passing)).returncode == 0
    bad = harness_cli("case", "check", str(tmp_path / "absent.json"))
    assert bad.returncode == 2 and "cannot read the case" in bad.stderr
    unknown = harness_cli(*save, str(tmp_path / "x.json"), "--expect", "nowhere")
    assert unknown.returncode == 2 and "not in manifest" in unknown.stderr
