"""The command line as users run it, shared by test directories (import as ``tests.cli``; the
CLI's own tests live beside it): ``python -m harness`` in a subprocess, from the repository
root unless told otherwise."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ACME = ROOT / "examples" / "acme"
ACME_DB = ROOT / "examples" / "acme.db"

#: The bundled example with its database (CLI arguments after the subcommand). The example
#: lies inside this checkout's git repository: --no-project-root keeps it the workspace.
ACME_ARGS = [
    "examples/acme",
    "--no-project-root",
    "--agent",
    "reviewer",
    "--project-id",
    "acme",
    "--db",
    "examples/acme.db",
]


def harness_cli(
    *args: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m harness ARGS``; text output."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=None if env is None else dict(env),
    )


def harness_cli_bytes(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m harness ARGS``; output as bytes (for exact prompt bytes, bad UTF-8)."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, timeout=60
    )
