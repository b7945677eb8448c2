"""What ``Harness(manifests=...)`` holds: the store, its recorder child, and a build's record.

::

    from datetime import UTC, datetime
    from harness.manifests._provenance import BuildFacts, Provenance

    provenance = Provenance("manifests.db")        # or a postgresql:// URL; opened by open()
    store = await provenance.open()                # created if missing (its directory must exist)
    spec = provenance.child_spec()                 # the recorder, for the Harness tree
    about = BuildFacts("/srv/acme", "reviewer", None, targets=["pkg/x.py"])
    prompt = await provenance.recorded(prompt, datetime.now(UTC), "approximate", about)
    assert prompt.manifest_id is not None
    await provenance.aclose()                      # after the tree (and so the drain) stopped
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness._tokenizer import Tokenizer
from harness.manifests._errors import ManifestStoreError
from harness.manifests._record import PromptRecord
from harness.manifests._recorder import Recorder
from harness.manifests._store import ManifestStore
from harness.prompt_assembler import AssembledPrompt
from harness.runtime import ChildSpec
from harness.stores import is_url

__all__ = ["BuildFacts", "Provenance"]


@dataclass(frozen=True, slots=True)
class BuildFacts:
    """What a manifest records of a build besides its prompt: where and for whom it was
    built, the targets, each unit's imports, and the further named sections (tools, skills)."""

    workspace: os.PathLike[str] | str
    agent: str
    project_id: str | None
    targets: Sequence[str] = ()
    imports: Mapping[str, Sequence[tuple[str, str]]] | None = None
    sections: Mapping[str, Any] | None = None

    def fields(self) -> dict[str, Any]:
        """The keywords ``ManifestRecord.of`` (and ``PromptRecord``) takes for them."""
        found = {name: getattr(self, name) for name in self.__slots__}
        found["workspace"] = os.fspath(self.workspace)
        return found


class Provenance:
    """The manifest store of one Harness and the recorder that writes to it."""

    def __init__(self, location: str | os.PathLike[str]) -> None:
        if not isinstance(location, str | os.PathLike):
            raise TypeError(
                f"manifests must be a path to an SQLite file, got {type(location).__name__}"
            )
        text = os.fspath(location)
        if not text:
            raise ManifestStoreError(
                "manifests is empty: give the path of an SQLite file or a postgresql:// URL"
            )
        # A path is made absolute now: a later chdir must not move it.
        self.location: str = text if is_url(text) else str(Path(text).absolute())
        self._store: ManifestStore | None = None
        self._recorder = Recorder(None)  # one actor for the Harness's life; the store at open

    @property
    def store(self) -> ManifestStore | None:
        """The open store (None before ``open`` and after ``aclose``)."""
        return self._store

    async def open(self) -> ManifestStore:
        """Open the store, creating its file if missing (``ManifestStoreError`` if it cannot)."""
        store = await ManifestStore.open(self.location, create=True)
        self._store = self._recorder.store = store
        return store

    def child_spec(self) -> ChildSpec:
        """The recorder's spec, for the Harness tree (started after ``open``)."""
        spec: ChildSpec = self._recorder.child_spec("manifest_recorder")
        return spec

    async def aclose(self) -> None:
        store, self._store = self._store, None
        self._recorder.store = None
        if store is not None:
            await store.aclose()

    async def recorded(
        self,
        prompt: AssembledPrompt,
        requested_at: datetime,
        tokenizer: Tokenizer | str,
        about: BuildFacts,
    ) -> AssembledPrompt:
        """``prompt`` once durably recorded, carrying its ``manifest_id`` (what
        ``Harness.build`` hands out); ``tokenizer`` is the spec or object it was built with
        (a spec is what rebuilds it on replay), ``about`` what else the manifest says."""
        record = PromptRecord(  # encoded from the layers it shares with earlier builds
            prompt,
            requested_at=requested_at,
            tokenizer_spec=tokenizer if isinstance(tokenizer, str) else None,
            **about.fields(),
        )
        manifest_id = record.manifest_id
        recording = self._recorder.record(record)
        del record  # the build waits for its commit holding only the encoded row
        await recording
        return _with_id(prompt, manifest_id)


def _with_id(prompt: AssembledPrompt, manifest_id: str) -> AssembledPrompt:
    """``prompt`` carrying ``manifest_id``: a shallow copy, so that what the record computed
    (the digest, the manifest) stays with it instead of being computed again on first use
    (``dataclasses.replace`` would run the constructor and drop them)."""
    copied = object.__new__(type(prompt))
    copied.__dict__.update(prompt.__dict__, manifest_id=manifest_id)  # frozen: no setattr
    return copied
