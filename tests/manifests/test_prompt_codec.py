"""A recorded build encoded straight from its prompt (``encode_prompt``: the shared layers'
parts kept by the very layer manifests, only the build's own head encoded) writes byte for
byte what the general path writes for its ``ManifestRecord``: the row, every part and every
text, in the same order, whatever came before it in the same store."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import EXTENDED_LAYOUT, Harness, HarnessConfig, Unit, assemble
from harness.build import unit_imports
from harness.config import Envelope
from harness.manifests import ManifestStore, ManifestStoreError
from harness.manifests import _codec as codec
from harness.manifests._prompt_codec import encode_prompt
from harness.manifests._record import ManifestRecord, PromptRecord
from harness.prompt_assembler import AssembledPrompt, AssemblyCache
from harness.prompt_assembler._shared import shared_layers
from harness.tools import PinStore, ToolCatalog, ToolPolicy, tools_record
from tests.cli import ACME, ACME_DB
from tests.manifests.helpers import timed_layers
from tests.tools.server import INITIAL_TOOLS

START = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
ZONES = (UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30)))


@dataclasses.dataclass(frozen=True)
class Step:
    """One build: when its files were read, what changed, how tight its budgets are."""

    seconds: int  # project_context read this long after START (its fresh times)
    zone: int  # the offset those times carry
    files_changed: bool  # instruction files read again (new times)
    glossary: int  # project_context text variant
    rules: int  # business rules: how many (a tight budget drops some)
    rules_budget: int
    context_budget: int  # project_context: truncated under a small budget
    now: bool
    request: bool  # a context request's record in the manifest
    sections: bool
    targets: int
    cached: bool  # built with the assembly cache
    workspace: str


def _layers(step: Step, files_at: datetime | None) -> dict[str, Any]:
    read_at = (START + timedelta(seconds=step.seconds, microseconds=step.seconds)).astimezone(
        ZONES[step.zone]
    )
    layers = timed_layers(files_at, read_at)
    layers["project_context"] += [
        Unit(
            ".AGENTS/b.md",
            f"Glossary {step.glossary}.",
            ".AGENTS/b.md",
            observed_at=read_at + timedelta(microseconds=7),
        ),
        Unit(".AGENTS/c.md", "No time.", ".AGENTS/c.md"),
    ]
    rules = [Unit(f"rules:{i}", f"Rule {i}. " * (i + 1)) for i in range(step.rules)]
    layers["business_rules"] = rules
    layers["task_state"] = "Step 2 of 5."
    return layers


def _prompt(step: Step, files_at: datetime | None, cache: AssemblyCache) -> AssembledPrompt:
    prompt = assemble(
        _layers(step, files_at),
        budgets={"project_context": step.context_budget, "business_rules": step.rules_budget},
        now=START + timedelta(seconds=step.seconds) if step.now else None,
        cache=cache if step.cached else None,
    )
    if step.request:  # what a build with a context request records (Harness.build)
        record = {"excluded": [{"id": "x", "layer": "instruction_files", "reason": "shadowed"}]}
        prompt = dataclasses.replace(prompt, _request=json.dumps(record, sort_keys=True))
    return prompt


def _context(step: Step, n: int) -> dict[str, Any]:
    return {
        "workspace": step.workspace,
        "agent": "reviewer",
        "project_id": "acme" if n % 2 else None,
        "requested_at": START + timedelta(seconds=n),
        "tokenizer_spec": "approximate",
        "targets": [f"pkg/{i}.py" for i in range(step.targets)],
        "imports": {".AGENTS/a.md": [(".AGENTS/a.md", "docs/x.md")]} if step.targets else None,
        "manifest_id": f"{n:026d}",
        "sections": {"tools": {"digest": "abc", "blocked": ["rm"]}} if step.sections else None,
    }


def _dumped(encoded: codec.Encoded) -> tuple[Any, ...]:
    return encoded.row, list(encoded.parts.items()), list(encoded.texts.items())


STEPS = st.builds(
    Step,
    seconds=st.integers(0, 3),
    zone=st.integers(0, len(ZONES) - 1),
    files_changed=st.booleans(),
    glossary=st.integers(0, 1),
    rules=st.integers(0, 4),
    rules_budget=st.sampled_from([4, 12, 400]),
    context_budget=st.sampled_from([10, 40, 400]),
    now=st.booleans(),
    request=st.booleans(),
    sections=st.booleans(),
    targets=st.integers(0, 2),
    cached=st.booleans() | st.just(True),
    workspace=st.sampled_from(["/srv/acme", "/srv/acme", "/srv/other"]),
)


@settings(max_examples=120, deadline=None)
@given(steps=st.lists(STEPS, min_size=1, max_size=10), batch_size=st.integers(1, 4))
def test_encoding_from_the_prompt_writes_what_the_record_writes(
    steps: list[Step], batch_size: int
) -> None:
    cache = AssemblyCache()
    fast, general = codec.Written(), codec.Written()
    fast_batch: list[codec.Encoded] = []
    general_batch: list[codec.Encoded] = []
    files_at: datetime | None = None
    for n, step in enumerate(steps):
        if step.files_changed:
            files_at = START + timedelta(seconds=n)
        prompt = _prompt(step, files_at, cache)
        context = _context(step, n)
        encoded = encode_prompt(PromptRecord(prompt, **context), fast)
        # The general path, from a store that has seen nothing, and from one that saw the same
        # builds: the same bytes in the same order.
        record = ManifestRecord.of(prompt, **context)
        assert _dumped(encoded) == _dumped(codec.encode_one(record, codec.Written()))
        reference = codec.encode_one(record, general)
        assert _dumped(encoded) == _dumped(reference)
        fast_batch.append(encoded)
        general_batch.append(reference)
        if len(fast_batch) == batch_size or n == len(steps) - 1:
            made, expected = codec.batch(fast_batch, fast), codec.batch(general_batch, general)
            assert (made.rows, list(made.parts.items()), list(made.texts.items())) == (
                expected.rows,
                list(expected.parts.items()),
                list(expected.texts.items()),
            )
            for written in (fast, general):
                written.add(made.parts)
                written.add(made.texts)
            fast_batch, general_batch = [], []
            manifest = codec.expand(
                "test", codec.inflate("test", encoded.row[-1], "row"), {**encoded.parts}
            )
            assert manifest == json.loads(json.dumps(dict(record.manifest)))


def test_builds_sharing_their_layers_share_their_encoded_parts() -> None:
    # The point of the path: the second build's layers are the first's very manifests, and
    # its parts and texts are the first's very dicts (only its row is its own).
    cache = AssemblyCache()
    step = Step(0, 0, False, 0, 2, 400, 400, True, False, False, 0, True, "/srv/acme")
    written = codec.Written()
    first, second = (
        encode_prompt(PromptRecord(_prompt(step, START, cache), **_context(step, n)), written)
        for n in (2, 4)
    )
    layers = shared_layers(_prompt(step, START, cache))
    assert layers is not None and written.shared.layers == layers
    assert second.parts is first.parts and second.texts is first.texts
    assert second.row[0] != first.row[0]


def test_a_bad_workspace_path_fails_only_its_own_build() -> None:
    cache = AssemblyCache()
    step = Step(0, 0, False, 0, 2, 400, 400, True, False, False, 0, True, "/srv/caf\udce9")
    written = codec.Written()
    with pytest.raises(ManifestStoreError, match=r"workspace path .* is not valid UTF-8"):
        encode_prompt(PromptRecord(_prompt(step, START, cache), **_context(step, 1)), written)
    good = dataclasses.replace(step, workspace="/srv/acme")
    prompt = _prompt(good, START, cache)
    encoded = encode_prompt(PromptRecord(prompt, **_context(good, 2)), written)
    reference = codec.encode_one(ManifestRecord.of(prompt, **_context(good, 2)), codec.Written())
    assert _dumped(encoded) == _dumped(reference)


@pytest.mark.parametrize("name", ["digest", "layers", "workspace", "tokenizer"])
def test_a_section_named_like_a_manifest_key_is_refused_as_by_the_record(name: str) -> None:
    prompt = assemble({"identity": "You are the reviewer."}, cache=AssemblyCache())
    context = {**_context(Step(0, 0, False, 0, 0, 4, 4, False, False, False, 0, True, "/w"), 1)}
    context["sections"] = {name: 1}
    with pytest.raises(ValueError, match="would replace the manifest's own key") as general:
        ManifestRecord.of(prompt, **context)
    with pytest.raises(type(general.value), match="would replace the manifest's own key"):
        PromptRecord(prompt, **context)


def test_an_empty_prompt_first_is_hashed_not_taken_for_a_known_text() -> None:
    cache = AssemblyCache()
    written = codec.Written()
    context = _context(Step(0, 0, False, 0, 0, 4, 4, False, False, False, 0, True, "/w"), 2)
    for layers in ({}, {"identity": "You are the reviewer."}, {}):
        prompt = assemble(layers, cache=cache)
        encoded = encode_prompt(PromptRecord(prompt, **context), written)
        reference = codec.encode_one(ManifestRecord.of(prompt, **context), codec.Written())
        assert _dumped(encoded) == _dumped(reference)
        assert prompt.digest == hashlib.sha256(prompt.text.encode()).hexdigest()


async def test_a_harness_stores_the_rows_the_general_path_writes(tmp_path: Path) -> None:
    # End to end on the example workspace (its .AGENTS/ files read anew, with fresh times, by
    # every build; tools and targets give sections and imports), each build twice in a row
    # (the second shares the first's layers): each stored row, and the parts and texts it
    # points to, are what encode_one writes for the ManifestRecord of the build, with the
    # recorded id and time.
    path = tmp_path / "m.db"
    config = HarnessConfig(layout=EXTENDED_LAYOUT, envelope=Envelope(model_context_limit=131_072))
    with anyio.fail_after(60):
        async with await PinStore.open(tmp_path / "pins.db") as pins:
            check = await pins.check(
                ToolCatalog.from_tools("repo", INITIAL_TOOLS), ToolPolicy({"repo": ["search"]})
            )
        options: list[dict[str, Any]] = [
            {"business_rules": ["Never log card numbers."]},
            {"business_rules": ["Never log card numbers."], "budgets": {"business_rules": 2}},
            {"targets": ["services/billing/api/handler.py"], "tools": check},
        ]
        async with Harness(config, database=ACME_DB, manifests=path) as h:
            built = []
            for given in [step for step in options for _ in range(3)]:
                built.append(
                    (await h.build(ACME, agent="reviewer", project_id="acme", **given), given)
                )
            store = h.manifests
            assert store is not None
            manifests = [await store.get(str(build.prompt.manifest_id)) for build, _ in built]
    with closing(sqlite3.connect(path)) as connection:
        rows = {row[0]: row for row in connection.execute("SELECT * FROM manifests")}
        parts = dict(connection.execute("SELECT sha256, body FROM manifest_parts").fetchall())
        texts = dict(connection.execute("SELECT sha256, body FROM manifest_texts").fetchall())
    assert len(rows) == len(built)
    for (build, given), manifest in zip(built, manifests, strict=True):
        record = ManifestRecord.of(
            build.prompt,
            workspace=str(build.workspace),
            agent="reviewer",
            project_id="acme",
            requested_at=datetime.fromisoformat(manifest["requested_at"]),
            tokenizer_spec="approximate",
            targets=build.targets,
            imports=unit_imports(build.instruction_set, build.project_context),
            manifest_id=manifest["manifest_id"],
            sections={"tools": tools_record(check)} if "tools" in given else None,
        )
        expected = codec.encode_one(record, codec.Written())
        assert rows[expected.manifest_id] == expected.row
        for address, body in expected.parts.items():
            assert parts[address] == body
        for address, text in expected.texts.items():
            assert texts[address] == text.encode("utf-8", "surrogatepass")


async def test_a_closed_store_keeps_no_text_of_the_last_build(tmp_path: Path) -> None:
    step = Step(0, 0, False, 0, 2, 400, 400, True, False, False, 0, True, "/srv/acme")
    prompt = _prompt(step, START, AssemblyCache())
    with anyio.fail_after(10):
        async with ManifestStore.open(tmp_path / "m.db", create=True) as store:
            await store.record(PromptRecord(prompt, **_context(step, 2)))
            assert store._written.shared is not None  # the shared parts of the last build
    assert store._written.shared is None
