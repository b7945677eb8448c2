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
        "harness.instruction_files.discovery.scoping",
        "harness.instruction_files.discovery",
        "harness.instruction_files.discovery.incremental",
        "harness.instruction_files.discovery.formats",
        "harness.instruction_files.discovery.formats.agents",
        "harness.workspace.walk",
        "harness.workspace.vendored",
        "harness.instruction_files.git_places",
    ],
)
def test_module_examples_run(name: str) -> None:
    results = doctest.testmod(importlib.import_module(name))
    assert results.attempted > 0 and results.failed == 0
