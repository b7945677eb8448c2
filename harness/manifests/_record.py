"""What one recorded build is: its manifest (with the build's context) and its input texts.

::

    from datetime import UTC, datetime
    from harness import Unit, assemble
    from harness.manifests._record import ManifestRecord

    prompt = assemble({"task_state": [Unit("goal", "ship it")]})
    record = ManifestRecord.of(
        prompt, workspace="/srv/acme", agent="reviewer", project_id=None,
        requested_at=datetime.now(UTC), tokenizer_spec="approximate",
    )
    assert record.manifest["manifest_id"] == record.manifest_id
    layers = record.manifest["layers"]
    assert set(record.texts) == {u["sha256"] for layer in layers for u in layer["units"]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from harness._version import __version__
from harness.errors import ArgumentError
from harness.manifests._ids import new_manifest_id
from harness.prompt_assembler import AssembledPrompt
from harness.prompt_assembler._shared import manifest_fields

__all__ = ["CONTEXT_FIELDS", "ManifestRecord", "PromptRecord", "harness_version"]

CONTEXT_FIELDS: tuple[str, ...] = (
    "manifest_id",
    "harness_version",
    "requested_at",
    "workspace",
    "agent",
    "project_id",
    "targets",
    "imports",
    "tokenizer",
    "tokenizer_spec",
    "budgets",
    "strategies",
)
"""The build's context, beside the assembler's fields, in every recorded manifest."""


def harness_version() -> str:
    """The version of harness that records (``harness.__version__``)."""
    return __version__


@dataclass(frozen=True, slots=True)
class ManifestRecord:
    """One build to record: ``manifest`` (JSON-serialisable) and ``texts`` (sha256 -> text)."""

    manifest: Mapping[str, Any]
    texts: Mapping[str, str]

    @property
    def manifest_id(self) -> str:
        return str(self.manifest["manifest_id"])

    @classmethod
    def of(
        cls,
        prompt: AssembledPrompt,
        *,
        workspace: str,
        agent: str,
        project_id: str | None,
        requested_at: datetime,
        tokenizer_spec: str | None,
        targets: Sequence[Any] = (),
        imports: Mapping[str, Sequence[tuple[str, str]]] | None = None,
        manifest_id: str | None = None,
        sections: Mapping[str, Any] | None = None,
    ) -> ManifestRecord:
        """The record of ``prompt``, built for ``agent`` in ``workspace``.

        ``tokenizer_spec`` is what rebuilds the tokenizer on replay (``approximate``,
        ``tiktoken:NAME_OR_PATH``), or None when it was a tokenizer object passed in.
        ``sections`` are further named, JSON-ready parts of the build (``tools``: the tool
        catalogs' digests and blocked tools); a name the manifest already has is refused.
        """
        _check_requested_at(requested_at)
        typed = prompt.manifest_record()
        manifest = typed.to_dict_with_layers(prompt.layer_dicts())
        texts = prompt.input_texts()
        manifest.update(
            manifest_id=manifest_id if manifest_id is not None else new_manifest_id(),
            harness_version=harness_version(),
            requested_at=requested_at.isoformat(),
            workspace=workspace,
            agent=agent,
            project_id=project_id,
            targets=list(targets),
            imports={
                unit: [list(pair) for pair in pairs] for unit, pairs in (imports or {}).items()
            },
            tokenizer_spec=tokenizer_spec,
            budgets={layer["name"]: layer["budget"] for layer in manifest["layers"]},
            strategies={layer["name"]: layer["strategy"] for layer in manifest["layers"]},
        )
        for name, value in (sections or {}).items():
            if name in manifest:
                _refuse_section(name)
            manifest[name] = value
        return cls(manifest=manifest, texts=texts)


@dataclass(frozen=True, slots=True)
class PromptRecord:
    """One build to record, not yet made a manifest: its prompt and the context
    ``ManifestRecord.of`` takes (its keywords are these fields), checked as it checks them. A
    store encodes it straight from the layers it shares with earlier builds
    (``_prompt_codec``); ``manifest_record()`` is the same build as a ``ManifestRecord``,
    which a store writes byte for byte alike. ``manifest_id`` left empty: a new one."""

    prompt: AssembledPrompt
    workspace: str
    agent: str
    project_id: str | None
    requested_at: datetime
    tokenizer_spec: str | None
    targets: Sequence[Any] = ()
    imports: Mapping[str, Sequence[tuple[str, str]]] | None = None
    manifest_id: str = ""
    sections: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_requested_at(self.requested_at)
        if self.sections:
            taken = {*manifest_fields(self.prompt), "layers", *CONTEXT_FIELDS}
            for name in self.sections:
                if name in taken:
                    _refuse_section(name)
        if not self.manifest_id:
            object.__setattr__(self, "manifest_id", new_manifest_id())  # frozen

    def manifest_record(self) -> ManifestRecord:
        """This build as a ``ManifestRecord`` (what the general encoding takes)."""
        context = {name: getattr(self, name) for name in _CONTEXT_ARGUMENTS}
        return ManifestRecord.of(self.prompt, **context)


_CONTEXT_ARGUMENTS = tuple(name for name in PromptRecord.__slots__ if name != "prompt")


def _check_requested_at(requested_at: datetime) -> None:
    if requested_at.tzinfo is None:
        raise ArgumentError("requested_at must be timezone-aware (e.g. datetime.now(UTC))")


def _refuse_section(name: str) -> None:
    raise ArgumentError(f"section {name!r} would replace the manifest's own key")
