"""``deny_read``: discovery, imports and ``.AGENTS/`` never open a denied path (an audit hook
sees every ``open``), and each refusal is a warning naming the path and the setting."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from harness import Harness, HarnessConfig, load_config
from harness._project_context import load_project_context
from harness.workspace.deny import DEFAULT_DENY_READ, DenyRules

Tree = Callable[[dict[str, str | bytes]], Path]

_opened: list[str] | None = None
_lock = threading.Lock()


def _hook(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _opened is not None and args and isinstance(args[0], str | bytes):
        with _lock:
            _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_hook)  # process-wide and permanent: it records only inside ``opens``


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """Write ``{relative path: content}`` into a fresh workspace directory and return it."""

    def write(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "ws"
        for relative, content in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content if isinstance(content, bytes) else content.encode()
            path.write_bytes(data)
        return root

    return write


@pytest.fixture
def opens() -> Iterator[list[str]]:
    """Every path opened (by ``open`` or ``os.open``, any thread) while the test runs."""
    global _opened
    _opened = seen = []
    try:
        yield seen
    finally:
        _opened = None


SECRET = "SECRET-7f3a"
FILES: dict[str, str | bytes] = {
    "AGENTS.md": "Root rules.\n\n@.env.production\n\n@docs/private.md\n",
    ".env.production": f"TOKEN={SECRET}\n",
    "docs/private.md": f"{SECRET} in a doc\n",
    "secrets/AGENTS.md": f"{SECRET} rules\n",
    "pkg/AGENTS.md": "Package rules.\n",
    ".AGENTS/overview.md": "Overview.\n",
    ".AGENTS/private.md": f"{SECRET} context\n",
}
DENY = (*DEFAULT_DENY_READ, "secrets/", "private.md")


def _touched(opened: list[str]) -> list[str]:
    names = (".env.production", "private.md", "secrets")
    return [path for path in opened if os.path.basename(path.rstrip("/")) in names]


async def test_a_build_never_opens_a_denied_path(tree: Tree, opens: list[str]) -> None:
    root = tree(FILES)
    opens.clear()  # what the test itself wrote
    config = HarnessConfig(agents={"dev": "You are the developer."}, deny_read=DENY)
    with anyio.fail_after(20):
        async with Harness(config) as h:
            build = await h.build(root, agent="dev")
    assert _touched(opens) == []
    assert any(path.endswith("AGENTS.md") for path in opens)  # the hook does see the reads
    assert SECRET not in build.prompt.text
    assert "Package rules." in build.prompt.text and "Overview." in build.prompt.text
    warnings = "\n".join(build.warnings)
    for path in ("secrets", ".env.production", "docs/private.md", ".AGENTS/private.md"):
        assert path in warnings
    assert "deny_read" in warnings


def test_the_project_context_alone_keeps_to_the_defaults(tree: Tree, opens: list[str]) -> None:
    root = tree({".AGENTS/a.md": "A.\n\n@config/.env\n", "config/.env": f"{SECRET}\n"})
    opens.clear()  # what the test itself wrote
    context = load_project_context(root)
    assert SECRET not in context.units[0].text
    assert [p for p in opens if p.endswith(".env")] == []
    assert any("'.env'" in warning and "deny_read" in warning for warning in context.warnings)


def test_a_configured_list_replaces_the_default(tmp_path: Path) -> None:
    config_file = tmp_path / "harness.toml"
    config_file.write_text('deny_read = ["vault/"]\n', encoding="utf-8")
    assert load_config(config_file).deny_read == ("vault/",)
    assert HarnessConfig().deny_read == DEFAULT_DENY_READ


@pytest.mark.parametrize(
    ("path", "denied"),
    [
        (".env", ".env"),
        ("a/b/.env.local", ".env.*"),
        ("keys/server.pem", "*.pem"),
        ("home/id_rsa.pub", "id_rsa*"),
        ("vault/x/y.txt", "vault/"),
        ("docs/vault.md", None),
        ("environment.md", None),
    ],
)
def test_patterns_read_as_gitignore_lines(path: str, denied: str | None) -> None:
    assert DenyRules((*DEFAULT_DENY_READ, "vault/")).denied(path) == denied


SKILL = "---\nname: {name}\ndescription: {what}\n---\nSteps.\n"


async def test_skills_discovery_never_opens_a_denied_skill(tree: Tree, opens: list[str]) -> None:
    """A denied skills directory is not listed and a denied SKILL.md (here a FIFO, which would
    block the scan if opened) is not opened; each is a warning naming the setting."""
    root = tree(
        {
            ".agents/skills/fix/SKILL.md": SKILL.format(name="fix", what="Fix things."),
            ".agents/skills/vault/SKILL.md": SKILL.format(name="vault", what=SECRET),
        }
    )
    (root / ".agents/skills/keys").mkdir()
    os.mkfifo(root / ".agents/skills/keys/SKILL.md")
    opens.clear()
    config = HarnessConfig(deny_read=(*DEFAULT_DENY_READ, "vault/", "keys/SKILL.md"))
    with anyio.fail_after(20):
        async with Harness(config) as h:
            catalog = await h.skills(root)
    assert catalog.names == ("fix",)
    assert [p for p in opens if "vault" in p] == []  # keys/SKILL.md: the FIFO did not block
    warnings = "\n".join(catalog.warnings)
    assert "vault" in warnings and "keys/SKILL.md" in warnings and "deny_read" in warnings


async def test_a_denied_target_is_never_opened(tree: Tree, opens: list[str]) -> None:
    """A target matching deny_read (here a FIFO, which would block if opened) and a target
    below a denied directory: neither is opened, nor is any file of the denied directory."""
    root = tree(FILES)
    os.mkfifo(root / ".env.local")
    opens.clear()
    config = HarnessConfig(agents={"dev": "You are the developer."}, deny_read=DENY)
    with anyio.fail_after(20):
        async with Harness(config) as h:
            build = await h.build(
                root, agent="dev", targets=[".env.local", "secrets/db/x.py", "pkg/a.py"]
            )
    assert [p for p in opens if p.endswith((".env.local", "secrets/AGENTS.md"))] == []
    assert [p for p in opens if os.path.basename(p) == "secrets"] == []
    assert SECRET not in build.prompt.text
    assert "Package rules." in build.prompt.text
    assert any("stops above secrets" in w and "deny_read" in w for w in build.warnings)
