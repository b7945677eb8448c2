"""Shared helpers of the skills tests: real workspaces written to disk, and configurations."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness import EXTENDED_LAYOUT, HarnessConfig
from harness.config import Envelope

FIXTURES = Path(__file__).parent / "fixtures"
REAL = FIXTURES / "real"


def extended(**settings: object) -> HarnessConfig:
    """The extended layout in an envelope the size of current models' (its budgets fit)."""
    return HarnessConfig.model_validate(
        {
            "layout": EXTENDED_LAYOUT,
            "envelope": Envelope(model_context_limit=131072, reserved_response=8192,
                                 reserved_tool_observations=16384),
            **settings,
        }
    )  # fmt: skip


def skill_md(name: str, description: str = "Does a thing. Use when asked.", body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body or f'Steps of {name}.'}\n"


def write_skill(root: Path, rel: str, text: str) -> Path:
    """``root/rel/SKILL.md`` holding ``text`` (directories created)."""
    directory = root / rel
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    return path


def real_workspace(tmp_path: Path) -> Path:
    """A copy of the published skills fixtures as a workspace."""
    workspace = tmp_path / "ws"
    shutil.copytree(REAL, workspace)
    return workspace
