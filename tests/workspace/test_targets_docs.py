"""The runnable examples that open the targets and imports modules stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    [
        "harness.workspace.targets",
        "harness.workspace.import_door",
        "harness.instruction_files.scoping",
    ],
)
def test_module_examples_run(name: str) -> None:
    results = doctest.testmod(importlib.import_module(name))
    assert results.attempted > 0 and results.failed == 0
