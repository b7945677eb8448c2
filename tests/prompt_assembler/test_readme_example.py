"""The README's assemble() example runs and shows what it claims."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_assemble_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Prompt assembly") :]
    section = section[: section.index("\n## ", 1)]
    example = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert '<context path="AGENTS.md">\nUse ruff.\n</context>' in out
    assert "rule-0" in out  # reported as dropped from business_rules
    prompt = namespace["prompt"]
    assert prompt.layer("business_rules").dropped == ("rule-0",)  # type: ignore[attr-defined]
