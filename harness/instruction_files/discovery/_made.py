"""An ``InstructionSource`` made without its frozen ``__init__``: a cold load makes one per file.

The frozen, slotted dataclass's ``__init__`` sets each of its eleven fields with
``object.__setattr__``; ``made_source`` sets them through the slot descriptors instead, which
is half the cost (``docs/architecture/walk.md``). The class has no ``__post_init__``, and
the module refuses to import if its fields change (then ``made_source`` must be updated).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from harness.instruction_files._models import InstructionSource, SourceKind, Trigger

__all__ = ["made_source"]

_FIELDS = (
    "kind", "path", "content", "digest", "depth", "version",
    "imports", "format", "trigger", "globs", "metadata",
)  # fmt: skip
if tuple(field.name for field in dataclasses.fields(InstructionSource)) != _FIELDS:
    raise RuntimeError("InstructionSource's fields changed: update _made.made_source")
_new = object.__new__
_SETS = tuple(getattr(InstructionSource, name).__set__ for name in _FIELDS)  # slot descriptors


def made_source(
    kind: SourceKind,
    path: str,
    content: str,
    digest: str,
    depth: int,
    version: str | None,
    imports: tuple[tuple[str, str], ...],
    format: str,
    trigger: Trigger,
    globs: tuple[str, ...],
    metadata: Mapping[str, object],
) -> InstructionSource:
    """``InstructionSource(...)`` with every field given, as its ``__init__`` makes it."""
    source: InstructionSource = _new(InstructionSource)
    (
        kind_,
        path_,
        content_,
        digest_,
        depth_,
        version_,
        imports_,
        format_,
        trigger_,
        globs_,
        meta_,
    ) = _SETS
    kind_(source, kind)
    path_(source, path)
    content_(source, content)
    digest_(source, digest)
    depth_(source, depth)
    version_(source, version)
    imports_(source, imports)
    format_(source, format)
    trigger_(source, trigger)
    globs_(source, globs)
    meta_(source, metadata)
    return source
