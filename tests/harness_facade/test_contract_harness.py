"""CONTRACT §6 The harness as a whole: acceptance tests derived from the contract text only."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from harness import (
    DEFAULT_BUDGETS,
    LAYERS,
    AssembledPrompt,
    Harness,
    HarnessConfig,
    TiktokenTokenizer,
    Unit,
    UnknownAgent,
    load_config,
)
from tests.databases import plain_db

CONFIG = """
[agents]
contract-agent = "You are the contract agent: you check promises."

[budgets]
identity = 321
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "AGENTS.md", "Root rule.")
    write(ws / "pkg" / "AGENTS.md", "Pkg rule.")
    ctx = ws / ".AGENTS"
    write(ctx / "zeta.md", "Zeta notes.")
    write(ctx / "glossary.md", "Glossary.")
    write(ctx / "alpha.md", "Alpha notes.")
    write(ctx / "overview.md", "Overview.")
    write(ctx / "conventions.md", "Conventions.")
    write(ctx / "ignored.txt", "Not markdown.")
    return ws


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return write(tmp_path / "harness.toml", CONFIG)


@pytest.fixture
def database(tmp_path: Path) -> Path:
    return plain_db(tmp_path / "i.db", [("acme", "contract-agent", "DB rule.")])


def layer_text(prompt: AssembledPrompt, name: str) -> str:
    return next(r.text for r in prompt.layers if r.name == name)


async def test_harness_exposes_instruction_files_and_supervisor(workspace: Path) -> None:
    with anyio.fail_after(20):
        async with Harness() as h:
            assert callable(h.instruction_files.load)
            assert callable(h.instruction_files.invalidate)
            assert isinstance(h.supervisor.which_children(), list)
            found = await h.instruction_files.load(workspace, agent="any")
            assert [s.path for s in found] == ["AGENTS.md", "pkg/AGENTS.md"]


async def test_build_prompt_fills_five_layers(
    workspace: Path, config_file: Path, database: Path
) -> None:
    with anyio.fail_after(20):
        config = load_config(config_file)
        assert isinstance(config, HarnessConfig)
        async with Harness(config, database=database) as h:
            prompt = await h.build_prompt(
                workspace,
                agent="contract-agent",
                project_id="acme",
                business_rules=[Unit(id="r1", text="Rule one."), Unit(id="r2", text="Rule two.")],
                task_state=[Unit(id="goal", text="Goal here.")],
            )
        assert isinstance(prompt, AssembledPrompt)
        assert tuple(r.name for r in prompt.layers) == LAYERS
        assert layer_text(prompt, "identity") == "You are the contract agent: you check promises."
        inst = layer_text(prompt, "instruction_files")
        assert '<context path="AGENTS.md">\nRoot rule.\n</context>' in inst
        assert '<context path="pkg/AGENTS.md">\nPkg rule.\n</context>' in inst
        assert '<context path="db:acme/contract-agent">\nDB rule.\n</context>' in inst
        assert inst.index("Root rule.") < inst.index("Pkg rule.") < inst.index("DB rule.")
        ctx = layer_text(prompt, "project_context")
        sources = re.findall(r'<context path="([^"]+)">', ctx)
        assert [Path(s).name for s in sources] == [
            "overview.md",
            "conventions.md",
            "glossary.md",
            "alpha.md",
            "zeta.md",
        ]
        assert all(".AGENTS/" in s for s in sources), "each with its path as source"
        assert "Not markdown." not in ctx
        br = next(r for r in prompt.layers if r.name == "business_rules")
        assert br.kept == ("r1", "r2")
        ts = next(r for r in prompt.layers if r.name == "task_state")
        assert ts.kept == ("goal",)
        assert "Rule one." in prompt.text and "Goal here." in prompt.text


async def test_build_prompt_budgets_and_tokenizer(
    workspace: Path, config_file: Path, cl100k: TiktokenTokenizer
) -> None:
    with anyio.fail_after(20):
        async with Harness(load_config(config_file)) as h:
            p = await h.build_prompt(
                workspace, agent="contract-agent", budgets={"instruction_files": 0}
            )
            r = next(r for r in p.layers if r.name == "instruction_files")
            assert r.budget == 0 and r.text == "" and r.dropped == ("AGENTS.md", "pkg/AGENTS.md")
            assert p.estimated is True
            exact = await h.build_prompt(workspace, agent="contract-agent", tokenizer=cl100k)
            assert exact.estimated is False
            assert exact.tokens == cl100k.count(exact.text)


async def test_unknown_agent_is_keyerror_listing_slugs(workspace: Path, config_file: Path) -> None:
    with anyio.fail_after(20):
        async with Harness(load_config(config_file)) as h:
            with pytest.raises(UnknownAgent) as info:
                await h.build_prompt(workspace, agent="no-such-agent")
        assert isinstance(info.value, KeyError)
        assert "contract-agent" in str(info.value)
    assert issubclass(UnknownAgent, KeyError)


async def test_missing_agents_dir_is_empty_project_context(
    tmp_path: Path, config_file: Path
) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "bare"
        ws.mkdir()
        async with Harness(load_config(config_file)) as h:
            p = await h.build_prompt(ws, agent="contract-agent")
        assert layer_text(p, "project_context") == ""
        assert layer_text(p, "instruction_files") == ""
        assert p.text == layer_text(p, "identity")


async def _identity_budget(config: HarnessConfig, ws: Path, agent: str) -> int:
    async with Harness(config) as h:
        p = await h.build_prompt(ws, agent=agent)
    return next(r.budget for r in p.layers if r.name == "identity")


async def test_load_config_precedence(
    tmp_path: Path, workspace: Path, config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with anyio.fail_after(20):
        env_file = write(
            tmp_path / "env.toml",
            '[agents]\ncontract-agent = "You are env."\n\n[budgets]\nidentity = 111\n',
        )
        monkeypatch.delenv("HARNESS_CONFIG", raising=False)
        default = load_config()
        assert isinstance(default, HarnessConfig)
        monkeypatch.setenv("HARNESS_CONFIG", str(env_file))
        from_env = load_config()
        from_arg = load_config(config_file)
        from_arg_str = load_config(str(config_file))
        assert await _identity_budget(from_env, workspace, "contract-agent") == 111
        assert await _identity_budget(from_arg, workspace, "contract-agent") == 321
        assert await _identity_budget(from_arg_str, workspace, "contract-agent") == 321
        monkeypatch.delenv("HARNESS_CONFIG")
        with pytest.raises(UnknownAgent):
            await _identity_budget(default, workspace, "contract-agent")
        assert DEFAULT_BUDGETS["identity"] != 111
