"""docs/telemetry.md's example runs as written (in a subprocess: it instruments globally
named providers of its own, and uninstruments at the end)."""

from __future__ import annotations

import re
import subprocess
import sys

from harness.telemetry._patches import _TARGETS
from tests.cli import ROOT


def test_the_wiring_example_runs() -> None:
    text = (ROOT / "docs" / "telemetry.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```python\n(.*?)```", text, re.S)
    done = subprocess.run(
        [sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "403\n"


def test_every_emitted_name_is_documented() -> None:
    text = (ROOT / "docs" / "telemetry.md").read_text(encoding="utf-8")
    sources = "".join(
        (ROOT / "harness" / "telemetry" / name).read_text(encoding="utf-8")
        for name in ("_signals.py", "_patches.py")
    )
    names = set(re.findall(r'"((?:harness|gen_ai)\.[a-z_.]+)"', sources))
    names.discard("harness.layer.")  # the per-layer prefix, documented as harness.layer.<name>.*
    modules = {module for module, *_ in _TARGETS}  # where the patched methods live
    names -= modules - {"harness.hooks.command"}  # that one is an attribute's name too
    missing = sorted(name for name in names if f"`{name}`" not in text)
    assert not missing, missing
