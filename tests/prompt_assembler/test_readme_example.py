"""The assemble() example of docs/assembly.md runs and shows what it claims."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "docs" / "assembly.md"


def test_readme_assemble_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    section = README.read_text(encoding="utf-8")
    example = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    namespace: dict[str, object] = {}
    exec(compile(example, "docs/assembly.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert '<context path="AGENTS.md">\nUse ruff.\n</context>' in out
    assert "rule-0" in out  # reported as dropped from business_rules
    prompt = namespace["prompt"]
    assert prompt.layer("business_rules").dropped == ("rule-0",)  # type: ignore[attr-defined]
