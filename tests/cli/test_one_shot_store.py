"""One-shot commands (``harness sources``, ``harness debug``, ``harness.debug.print``) start no
store companion (a PostgreSQL LISTEN connection): nothing they cache lives long enough to need
change notices. A long-lived Harness still starts them."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from harness import Harness
from tests.cli import ACME_ARGS, ACME_DB, ROOT

# A real store (the SQLite one) under its own URL scheme, saying when its companions are asked.
WATCHED = textwrap.dedent(
    f"""
    import sys
    from harness.cli import main
    from harness.instruction_files.stores._sqlite import SqliteInstructionStore
    from harness.stores import register_store

    class Watched(SqliteInstructionStore):
        def child_specs(self, events):
            print("COMPANIONS STARTED", file=sys.stderr)
            return super().child_specs(events)

    register_store(
        "watched",
        lambda url, *, timeout, heartbeat: Watched({str(ACME_DB)!r}, timeout=timeout),
        kind="instructions",
    )
    sys.exit(main(sys.argv[1:]))
    """
)


@pytest.mark.parametrize("command", ["sources", "debug"])
def test_a_one_shot_command_starts_no_store_companion(command: str) -> None:
    args = [command, *ACME_ARGS, "--db", "watched://acme"]
    result = subprocess.run(
        [sys.executable, "-c", WATCHED, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "COMPANIONS STARTED" not in result.stderr


def test_a_long_lived_harness_keeps_the_listener() -> None:
    url = "postgresql://user:secret@127.0.0.1:1/engine"  # never connected: specs only
    assert [s.id for s in Harness(database=url).child_specs()] == [
        "instruction_files_cache",
        "postgres_listener",
    ]
    assert [s.id for s in Harness(database=url, watch_store=False).child_specs()] == [
        "instruction_files_cache"
    ]
