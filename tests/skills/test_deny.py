"""``deny_read`` in skills discovery: a matching path is never opened, nor listed as a
resource; a warning names it and the setting. An audit hook sees every ``open``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import HarnessConfig, SkillCatalog
from harness.skills._deny_hint import _literals
from harness.workspace.deny import DEFAULT_DENY_READ, DenyRules
from tests.skills.support import skill_md, write_skill

_OPENED: list[str] = []
_WATCHING: list[bool] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _WATCHING and event == "open" and isinstance(args[0], str | bytes):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    for name in ("pdf", "private", "secret"):
        write_skill(workspace, f".claude/skills/{name}", skill_md(name))
    os.mkfifo(workspace / ".claude/skills/pdf/.env")  # would block if it were opened
    (workspace / ".claude/skills/pdf/id_rsa").write_text("key\n")
    (workspace / ".claude/skills/pdf/forms.md").write_text("a resource\n")
    return workspace


async def test_denied_paths_are_never_opened_nor_listed(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    config = HarnessConfig(
        deny_read=[*DEFAULT_DENY_READ, "private/", "/.claude/skills/secret/SKILL.md"]
    )
    _OPENED.clear()
    _WATCHING.append(True)
    try:
        with anyio.fail_after(30):
            catalog = await SkillCatalog.discover(workspace, config=config)
    finally:
        _WATCHING.clear()
    assert catalog.names == ("pdf",)
    assert catalog.get("pdf").resources == (".claude/skills/pdf/forms.md",)
    assert "private" not in _OPENED  # the denied directory is not even entered
    assert _OPENED.count("SKILL.md") == 1  # pdf's; secret's is denied before any open
    assert not [path for path in _OPENED if path.endswith((".env", "id_rsa"))]
    setting = "(setting deny_read)"
    assert (
        f".claude/skills/private: not read: it matches the deny_read pattern 'private/' {setting}"
        in catalog.warnings
    )
    assert any(w.startswith(".claude/skills/secret/SKILL.md: not read") for w in catalog.warnings)
    assert any(
        w.startswith(".claude/skills/pdf/.env: not read") and "'.env'" in w
        for w in catalog.warnings
    )


async def test_the_default_list_applies_without_a_config(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    with anyio.fail_after(30):
        catalog = await SkillCatalog.discover(workspace)
    assert catalog.names == ("pdf", "private", "secret")
    assert catalog.get("pdf").resources == (".claude/skills/pdf/forms.md",)


_PATTERN = st.text(alphabet="ab.*?-_ /!#", min_size=1, max_size=6)
_NAME = st.text(alphabet="ab.-_ ", min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(patterns=st.lists(_PATTERN, min_size=1, max_size=4), name=_NAME, is_dir=st.booleans())
def test_the_literal_prefilter_never_misses_a_match(
    patterns: list[str], name: str, is_dir: bool
) -> None:
    """A name the prefilter passes over is one no pattern denies (checked by the matcher)."""
    literals = _literals(tuple(patterns))
    if literals is None or any(literal in name for literal in literals):
        return
    rules = DenyRules(patterns)
    assert rules.entry(name, is_dir) is None
    assert rules.entry(f"dir/{name}", is_dir) is None
