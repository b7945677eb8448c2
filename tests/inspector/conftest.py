"""Two builds of the bundled example recorded in a real SQLite manifest store: the second
changes one rule's text, carries hostile markup in a unit, and drops task-state units to a
small budget."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from harness._harness import Harness
from harness.prompt_assembler import Unit
from tests.cli import ACME, ACME_DB
from tests.inspector.reasons import Excluding, workspace
from tests.inspector.reasons import record as record_excluding

INJECTION = (
    "<script>document.title='PWNED-script'</script>\n"
    "<img src=x onerror=\"document.title='PWNED-img'\">\n"
    '<a href="https://example.invalid/track">link</a>'
)
STATE = [
    Unit(id="goal", text="review PR 42"),
    Unit(id="done", text="read the diff"),
    Unit(id="next", text="approve"),
]


@dataclass(frozen=True)
class Recorded:
    store: Path
    a: str
    b: str


def rules(second: bool) -> list[Unit]:
    refunds = (
        "Refunds need approval.\nCap: 500 EUR.\nAsk finance."
        if not second
        else ("Refunds need approval.\nCap: 750 EUR.\nAsk finance.")
    )
    found = [Unit(id="refunds", text=refunds)]
    if second:
        found.append(Unit(id="hostile", text=INJECTION, source="<b>evil</b>.txt"))
    return found


async def record(store: Path) -> Recorded:
    ids = []
    with anyio.fail_after(30):
        async with Harness(database=ACME_DB, manifests=store) as harness:
            for second in (False, True):
                build = await harness.build(
                    ACME,
                    agent="reviewer",
                    project_id="acme",
                    business_rules=rules(second),
                    task_state=STATE,
                    budgets={"task_state": 3} if second else None,
                )
                assert build.prompt.manifest_id is not None
                ids.append(build.prompt.manifest_id)
    return Recorded(store, ids[0], ids[1])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    return anyio.run(record, tmp_path_factory.mktemp("inspector") / "manifests.db")


@pytest.fixture(scope="module")
def excluding(tmp_path_factory: pytest.TempPathFactory) -> Excluding:
    """Two builds whose manifests hold every reason a unit is not rendered for."""
    root = tmp_path_factory.mktemp("excluding")
    return anyio.run(record_excluding, root / "manifests.db", workspace(root / "ws"))
