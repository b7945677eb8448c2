"""Replay: rebuild a recorded prompt from its stored inputs and check it is the same prompt.

Pure (no I/O): the store reads the manifest and the texts, this module re-runs ``assemble``::

    from harness import Unit, assemble
    from datetime import UTC, datetime
    from harness.manifests._record import ManifestRecord
    from harness.manifests._replay import replay_manifest

    prompt = assemble({"task_state": [Unit("goal", "ship it")]})
    record = ManifestRecord.of(prompt, workspace="/w", agent="a", project_id=None,
                               requested_at=datetime.now(UTC), tokenizer_spec="approximate")
    texts = {k: v.encode() for k, v in record.texts.items()}
    result = replay_manifest(dict(record.manifest), texts)
    assert result.identical and result.digest == prompt.digest
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness._tokenizer import Tokenizer, parse_tokenizer_spec
from harness.errors import HarnessError
from harness.prompt_assembler import AssembledPrompt, Manifest, ManifestSchemaError, replay_inputs

__all__ = ["Difference", "Replay", "ReplayError", "replay_manifest", "tokenizer_for"]


class ReplayError(HarnessError, ValueError):
    """A recorded build cannot be replayed as asked (e.g. its tokenizer cannot be rebuilt)."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One way the replay differs from the record; ``str()`` is one readable line.

    ``kind``: ``missing_text``, ``tampered_text``, ``format``, ``tokenizer``, ``layer``,
    ``digest`` or ``rebuild``; ``layer`` and ``unit`` say where, when it is one layer or one unit.
    """

    kind: str
    detail: str
    layer: str | None = None
    unit: str | None = None

    def __str__(self) -> str:
        where = "/".join(part for part in (self.layer, self.unit) if part is not None)
        return f"{self.kind}: {where}: {self.detail}" if where else f"{self.kind}: {self.detail}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "layer": self.layer, "unit": self.unit, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class Replay:
    """The outcome of replaying one recorded build.

    ``digest`` is the rebuilt prompt's (None if it could not be rebuilt), ``recorded_digest``
    the one recorded; ``prompt`` is the rebuilt prompt itself.
    """

    manifest_id: str
    identical: bool
    digest: str | None
    recorded_digest: str
    differences: tuple[Difference, ...]
    prompt: AssembledPrompt | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "manifest_id": self.manifest_id,
            "identical": self.identical,
            "digest": self.digest,
            "recorded_digest": self.recorded_digest,
            "differences": [difference.to_json() for difference in self.differences],
        }


def tokenizer_for(manifest: Mapping[str, Any]) -> Tokenizer:
    """The recorded tokenizer, rebuilt from its spec; ``ReplayError`` when it cannot be."""
    name = str(manifest.get("tokenizer"))
    spec = manifest.get("tokenizer_spec")
    for candidate in (spec, name):
        if not isinstance(candidate, str):
            continue
        try:
            parsed = parse_tokenizer_spec(candidate)
        except ValueError:
            continue
        return parsed.build()
    raise ReplayError(
        f"the build was assembled with tokenizer {name!r}, which harness cannot rebuild from "
        "its name: pass the same tokenizer, replay(manifest_id, tokenizer=...)"
    )


def _decode(texts: Mapping[str, bytes]) -> dict[str, str]:
    decoded = {}
    for address, body in texts.items():
        try:
            decoded[address] = body.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:  # tampered bytes: shown as found, and reported as tampered
            decoded[address] = body.decode("utf-8", "replace")
    return decoded


_COMPARED = ("kept", "dropped", "truncated", "tokens", "budget", "strategy", "authority")


def _layer_differences(recorded: Mapping[str, Any], rebuilt: AssembledPrompt) -> list[Difference]:
    found = []
    layers = {layer["name"]: layer for layer in rebuilt.manifest_record().to_dict()["layers"]}
    for layer in recorded["layers"]:
        again = layers.get(layer["name"], {})
        for key in _COMPARED:
            if layer.get(key) != again.get(key):
                found.append(
                    Difference(
                        "layer",
                        f"{key} was {layer.get(key)!r}, is now {again.get(key)!r}",
                        layer=layer["name"],
                    )
                )
    return found


def replay_manifest(
    manifest: Mapping[str, Any],
    texts: Mapping[str, bytes],
    *,
    tokenizer: Tokenizer | None = None,
) -> Replay:
    """Re-run ``assemble`` on what ``manifest`` recorded, with ``texts`` (address -> bytes)."""
    recorded_digest = str(manifest["digest"])
    manifest_id = str(manifest.get("manifest_id"))
    differences: list[Difference] = []
    tok = tokenizer if tokenizer is not None else tokenizer_for(manifest)
    if tok.name != manifest.get("tokenizer"):
        differences.append(
            Difference(
                "tokenizer", f"recorded {manifest.get('tokenizer')!r}, replayed {tok.name!r}"
            )
        )
    try:
        typed = Manifest.from_dict(manifest)
    except ManifestSchemaError as exc:
        differences.append(Difference("format", f"the record cannot be read as a manifest: {exc}"))
        return Replay(manifest_id, False, None, recorded_digest, tuple(differences))
    inputs = replay_inputs(typed, _decode(texts))
    for problem in inputs.problems:
        kind = "format" if problem.kind == "format" else f"{problem.kind}_text"
        differences.append(Difference(kind, problem.detail, problem.layer, problem.unit))
    try:
        prompt = inputs.assemble(tok)
    except (ValueError, TypeError) as exc:
        differences.append(Difference("rebuild", f"assemble refused the inputs: {exc}"))
        return Replay(manifest_id, False, None, recorded_digest, tuple(differences))
    if prompt.digest != recorded_digest:
        differences.append(
            Difference("digest", f"recorded {recorded_digest}, replayed {prompt.digest}")
        )
    differences.extend(_layer_differences(manifest, prompt))
    return Replay(
        manifest_id, not differences, prompt.digest, recorded_digest, tuple(differences), prompt
    )
