"""Without opentelemetry importable, or never instrumented: builds work, nothing is imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.cli import ROOT

BLOCK = """
import importlib.abc, sys

class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Blocked())
"""

BUILD = """
import logging, sys
import anyio
import harness.telemetry
from harness._harness import Harness
from harness.hooks import Hooks

logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
INSTRUMENT

async def main():
    async with Harness(database="examples/acme.db") as h:
        for _ in range(2):
            build = await h.build("examples/acme", agent="reviewer", project_id="acme")
    hooks = Hooks().register("pre_tool_use", lambda payload: None, name="audit")
    assert not (await hooks.run("pre_tool_use", {"tool_name": "Bash"})).halted
    print(build.prompt.digest[:12], build.prompt.tokens)

anyio.run(main)
print("otel imported:", any(m.split(".")[0] == "opentelemetry" for m in sys.modules))
"""


def run(source: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(source)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_blocked_opentelemetry_builds_fine_and_instrument_says_false() -> None:
    source = BLOCK + BUILD.replace(
        "INSTRUMENT", "print('instrumented:', harness.telemetry.instrument())"
    )
    done = run(source)
    assert done.returncode == 0, done.stderr
    assert "instrumented: False" in done.stdout
    assert "otel imported: False" in done.stdout
    assert "pip install 'harness[otel]'" in done.stderr  # the warning says what to do


def test_never_instrumented_imports_no_opentelemetry() -> None:
    done = run(BUILD.replace("INSTRUMENT", ""))
    assert done.returncode == 0, done.stderr
    assert "otel imported: False" in done.stdout
    blocked = run(BLOCK + BUILD.replace("INSTRUMENT", ""))
    assert blocked.returncode == 0, blocked.stderr
    assert blocked.stdout.splitlines()[0] == done.stdout.splitlines()[0]  # the same prompt
