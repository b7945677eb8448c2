"""Replayable context cases: a wrong agent run turned into a regression test of the context.

A case is one recorded build, copied out of the manifest store into a self-contained JSON file
with the units the build should have shown the model and a word classifying what went wrong.
Checking it re-runs the current assembler on the recorded inputs (no store needed) and
passes only while every expected unit is included::

    from harness import Unit, assemble
    from harness.cases import check_case, make_case
    from harness.manifests._record import ManifestRecord
    from datetime import UTC, datetime

    prompt = assemble({"task_state": [Unit("log", "x " * 9000), Unit("goal", "ship it")]})
    record = ManifestRecord.of(prompt, workspace="/w", agent="a", project_id=None,
                               requested_at=datetime.now(UTC), tokenizer_spec="approximate")
    texts = {k: v.encode() for k, v in record.texts.items()}
    case = make_case(dict(record.manifest), texts, expect=["goal", "log"], classify="lost_log")
    outcome = check_case(case)
    assert [(m.unit, m.reason) for m in outcome.missing] == [("log", "budget")]

``harness case save STORE ID --expect UNIT_ID... --classify WORD -o CASE.json`` writes one;
``harness case check CASE.json`` exits 0 when it passes, 1 naming each missing unit and its
drop reason, 2 for a file that is not a readable case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._tokenizer import Tokenizer
from harness.errors import HarnessError
from harness.manifests._replay import replay_manifest

if TYPE_CHECKING:
    from harness.manifests._store import ManifestStore

__all__ = [
    "CASE_FORMAT",
    "CaseCheck",
    "CaseError",
    "MissingUnit",
    "check_case",
    "load_case",
    "make_case",
    "save_case",
    "write_case",
]

CASE_FORMAT = "harness.case/1"
NOT_RECORDED = "not_recorded"  # a reason of the case, not of a build: the build never had it
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class CaseError(HarnessError, ValueError):
    """A case that cannot be saved or checked as asked; the message says what to fix."""


@dataclass(frozen=True, slots=True)
class MissingUnit:
    """An expected unit the assembler left out: where it was and the reason it was dropped
    (one of the build's closed set, or ``not_recorded``)."""

    unit: str
    layer: str | None
    reason: str
    detail: str = ""

    def __str__(self) -> str:
        where = f" in {self.layer}" if self.layer else ""
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.unit}{where}: {self.reason}{detail}"

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "layer": self.layer,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class CaseCheck:
    """A case's outcome: ``passed`` when every expected unit is included again."""

    classification: str
    manifest_id: str | None
    expected: tuple[str, ...]
    missing: tuple[MissingUnit, ...]
    digest: str
    recorded_digest: str

    @property
    def passed(self) -> bool:
        return not self.missing

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "classification": self.classification,
            "manifest_id": self.manifest_id,
            "expected": list(self.expected),
            "missing": [item.to_json() for item in self.missing],
            "digest": self.digest,
            "recorded_digest": self.recorded_digest,
        }

    def render(self) -> str:
        """The outcome in lines, for the terminal."""
        head = f"case {self.classification} (manifest {self.manifest_id})"
        if self.passed:
            return f"passed: {head}: all {len(self.expected)} expected units are included\n"
        lines = [f"failed: {head}: {len(self.missing)} of {len(self.expected)} expected missing"]
        lines.extend(f"  - {item}" for item in self.missing)
        return "\n".join(lines) + "\n"


def _known(manifest: Mapping[str, Any]) -> dict[str, tuple[str | None, str | None]]:
    """Every unit id of the record -> (layer, reason it was not rendered or None)."""
    known: dict[str, tuple[str | None, str | None]] = {}
    for layer in manifest.get("layers", ()):
        for entry in layer.get("units", ()):
            known.setdefault(str(entry["id"]), (layer.get("name"), None))
        for entry in layer.get("dropped_units", ()):
            known.setdefault(str(entry["id"]), (layer.get("name"), entry.get("reason")))
    request = manifest.get("request") or {}
    for entry in request.get("excluded", ()) if isinstance(request, Mapping) else ():
        known.setdefault(str(entry.get("id")), (entry.get("layer"), entry.get("reason")))
    return known


def _expected(expect: Iterable[str]) -> tuple[str, ...]:
    if isinstance(expect, str):
        raise CaseError(f"expect must be a list of unit ids, got the string {expect!r}")
    ids = tuple(dict.fromkeys(expect))
    if not ids or not all(isinstance(uid, str) and uid for uid in ids):
        raise CaseError(f"a case needs at least one expected unit id (non-empty str), got {ids!r}")
    return ids


def _word(classify: object) -> str:
    if not isinstance(classify, str) or not _WORD.fullmatch(classify):
        raise CaseError(
            f"the classification must be one word (letters, digits, '_', '.', '-'), "
            f"e.g. missing_config; got {classify!r}"
        )
    return classify


def make_case(
    manifest: Mapping[str, Any],
    texts: Mapping[str, bytes],
    *,
    expect: Iterable[str],
    classify: str,
) -> dict[str, Any]:
    """A case (JSON types) from a recorded ``manifest`` and the ``texts`` of its units.

    Every expected id must name a unit the build was given (kept, dropped or screened out):
    a unit the build never had cannot come back by re-running the assembler.
    """
    ids, word = _expected(expect), _word(classify)
    known = _known(manifest)
    unknown = [uid for uid in ids if uid not in known]
    if unknown:
        raise CaseError(
            f"unit {', '.join(map(repr, unknown))} is not in manifest "
            f"{manifest.get('manifest_id')}: expect only units the build was given "
            f"(it had {len(known)}: {', '.join(sorted(known)[:8])}...)"
        )
    wanted = {
        str(entry["sha256"])
        for layer in manifest.get("layers", ())
        for entry in (*layer.get("units", ()), *layer.get("dropped_units", ()))
    }
    stored = {k: v.decode("utf-8", "surrogatepass") for k, v in texts.items() if k in wanted}
    return {
        "format": CASE_FORMAT,
        "classification": word,
        "manifest_id": manifest.get("manifest_id"),
        "expect": list(ids),
        "manifest": dict(manifest),
        "texts": dict(sorted(stored.items())),
    }


def write_case(case: Mapping[str, Any], path: str | Path) -> Path:
    """Write ``case`` as ASCII JSON (a lone surrogate survives as an escape) to ``path``."""
    target = Path(path)
    try:
        target.write_text(json.dumps(case, indent=2, ensure_ascii=True) + "\n", encoding="ascii")
    except OSError as exc:
        raise CaseError(f"cannot write the case to {target}: {exc.strerror or exc}") from exc
    return target


async def save_case(
    store: ManifestStore,
    manifest_id: str,
    *,
    expect: Sequence[str],
    classify: str,
    path: str | Path | None = None,
) -> dict[str, Any]:
    """The case of build ``manifest_id`` recorded in ``store``, written to ``path`` if given."""
    manifest = await store.get(manifest_id)
    addresses = [
        str(entry["sha256"])
        for layer in manifest["layers"]
        for entry in (*layer.get("units", ()), *layer.get("dropped_units", ()))
    ]
    case = make_case(manifest, await store.texts(addresses), expect=expect, classify=classify)
    if path is not None:
        write_case(case, path)
    return case


def load_case(path: str | Path) -> dict[str, Any]:
    """Read a case file; ``CaseError`` when it is missing, not JSON or not a case."""
    source = Path(path)
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CaseError(f"cannot read the case {source}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CaseError(f"{source} is not JSON ({exc}): is it a case file?") from exc
    _check_shape(data, str(source))
    return dict(data)


def _check_shape(data: object, where: str) -> None:
    if not isinstance(data, dict) or data.get("format") != CASE_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise CaseError(
            f"{where} is not a context case of format {CASE_FORMAT!r} (found {found!r}): "
            "write one with `harness case save`"
        )
    if not isinstance(data.get("manifest"), dict) or not isinstance(data.get("texts"), dict):
        raise CaseError(f"{where}: a case holds a 'manifest' object and a 'texts' object")
    _expected(data.get("expect") or ())
    _word(data.get("classification"))


def check_case(
    case: Mapping[str, Any] | str | Path, *, tokenizer: Tokenizer | None = None
) -> CaseCheck:
    """Re-run the current assembler on the case's recorded inputs; which expected units are
    missing, and why. ``CaseError`` for a damaged case (a text missing or altered, or inputs
    the assembler refuses)."""
    data = load_case(case) if isinstance(case, str | Path) else dict(case)
    if not isinstance(case, str | Path):
        _check_shape(data, "the case")
    texts = {str(k): str(v).encode("utf-8", "surrogatepass") for k, v in data["texts"].items()}
    manifest = data["manifest"]
    try:
        replay = replay_manifest(manifest, texts, tokenizer=tokenizer)
    except (KeyError, TypeError, ValueError) as exc:
        raise CaseError(f"the case's manifest cannot be replayed: {exc}") from exc
    damaged = [
        d
        for d in replay.differences
        if d.kind in {"missing_text", "tampered_text", "format", "rebuild"}
    ]
    if damaged or replay.prompt is None or replay.digest is None:
        detail = "; ".join(map(str, damaged)) or "the inputs could not be rebuilt"
        raise CaseError(f"the case is damaged: {detail}; save it again from the store")
    rebuilt = replay.prompt.manifest_record().to_dict()
    now = _known(rebuilt)
    before = _known(manifest)
    missing = []
    expected = tuple(data["expect"])
    for uid in expected:
        layer, reason = now.get(uid) or before.get(uid) or (None, NOT_RECORDED)
        if uid in now and reason is None:
            continue
        missing.append(MissingUnit(uid, layer, str(reason), _detail(str(reason))))
    return CaseCheck(
        classification=str(data["classification"]),
        manifest_id=data.get("manifest_id"),
        expected=expected,
        missing=tuple(missing),
        digest=replay.digest,
        recorded_digest=replay.recorded_digest,
    )


_DETAILS = {
    "budget": "its layer's budget had no room for it",
    "stale": "older than its max_age at the recorded time",
    "denied": "the principal lacked a permission it requires",
    "duplicate": "its text repeats a unit kept earlier",
    "outranked": "a higher authority for its claim was present",
    "not_matched": "its path rule does not apply to the targets",
    "shadowed": "an override, or a file or skill of its name that wins, replaced it",
    NOT_RECORDED: "the build was never given it",
}


def _detail(reason: str) -> str:
    return _DETAILS.get(reason.split(" ", 1)[0], "")
