"""What a stored row becomes, whichever store read it: the database source and its warnings.

::

    from harness.instruction_files.stores._rows import row_read, source_path

    source_path("acme", "reviewer")                        # 'db:acme/reviewer'
    read = row_read("acme", "reviewer", b"\xef\xbb\xbfReview.", "2026-01-01")
    read.source.content, read.warnings                     # ('Review.', ('db:acme/reviewer: ...',))
"""

from __future__ import annotations

import hashlib
import re

from harness.instruction_files._models import InstructionSource
from harness.instruction_files.stores._base import StoreRead
from harness.workspace import decode

__all__ = ["row_read", "source_path", "text_of"]


def source_path(project_id: str, agent: str) -> str:
    """The ``path`` of a database source: ``"db:<project_id>/<agent>"``.

    Characters that would make it ambiguous or unprintable are percent-encoded (their UTF-8
    bytes): ``/`` and ``%`` (project ``a/b`` with agent ``c`` must not look like project ``a``
    with agent ``b/c``), control characters and lone surrogates (an id is caller input, and
    this path is printed). Other ids appear verbatim.
    """
    return f"db:{_quote(project_id)}/{_quote(agent)}"


_NEEDS_QUOTING = re.compile(r"[%/\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _quote(part: str) -> str:
    return _NEEDS_QUOTING.sub(
        lambda found: "".join(
            f"%{byte:02X}" for byte in found.group().encode("utf-8", "surrogatepass")
        ),
        part,
    )


def row_read(
    project_id: str, agent: str, content: bytes | str | None, updated_at: str | None
) -> StoreRead:
    """What a stored row becomes, for every store: bytes are decoded like a file (BOM removed,
    invalid UTF-8 replaced, each a warning); NULL and whitespace-only content is skipped with a
    warning; ``digest`` is the sha256 of the bytes (of the UTF-8 of a ``str``)."""
    path = source_path(project_id, agent)
    if content is None:
        return StoreRead(None, (f"{path}: skipped: its content is NULL",), updated_at)
    notes: list[str] = []
    if isinstance(content, bytes):
        raw = content
        content, notes = decode(raw)
    else:
        raw = content.encode("utf-8", "surrogatepass")
    if not content.strip():
        return StoreRead(None, (f"{path}: skipped: empty or whitespace-only",), updated_at)
    source = InstructionSource(
        kind="database",
        path=path,
        content=content,
        digest=hashlib.sha256(raw).hexdigest(),
        depth=0,
    )
    return StoreRead(source, tuple(f"{path}: {note}" for note in notes), updated_at)


def text_of(value: object) -> str | None:
    """``updated_at`` as text (the connection hands TEXT over as bytes)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
