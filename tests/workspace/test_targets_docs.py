"""The runnable examples that open the targets and imports modules stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "name",
    [
        "harness.workspace._targets",
        "harness.workspace._import_door",
        "harness.instruction_files.discovery._scoping",
        "harness.instruction_files.discovery",
        "harness.instruction_files.discovery._incremental",
        "harness.instruction_files.discovery.formats",
        "harness.instruction_files.discovery.formats._agents",
        "harness.workspace._walk",
        "harness.workspace._vendored",
        "harness.instruction_files._git_places",
    ],
)
def test_module_examples_run(name: str) -> None:
    results = doctest.testmod(importlib.import_module(name))
    assert results.attempted > 0 and results.failed == 0
