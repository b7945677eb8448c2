"""The SQLite file behind ``ManifestStore``: schema, opening checks, group-committed writes.

Blocking functions on one ``sqlite3.Connection``; ``harness.manifests.store`` runs them in a
worker thread, one at a time. For example (blocking, outside an event loop)::

    from pathlib import Path
    from harness.manifests.sqlite import Identity, open_database, list_rows

    connection, identity = open_database(Path("manifests.db"), create=True, timeout=5.0)
    print(list_rows(connection, agent=None, project_id=None, limit=10))

Design notes:
- Durability: WAL with ``synchronous=FULL``: every commit syncs the WAL before it returns, so
  a build whose record has been committed survives the process being killed AND the machine
  losing power (as far as the disk honours fsync). ``NORMAL`` with WAL would survive a killed
  process only; group commit (many records per transaction, one sync) pays for FULL.
- Layout: ``manifest_texts`` holds every unit text once, as its UTF-8 bytes under their
  sha256; ``manifest_parts`` holds each layer's manifest entry once (zlib-compressed JSON under
  the sha256 of the JSON), so identical builds share their layers and texts; ``manifests``
  holds one row per build: its id, the columns ``list`` filters on, and the rest of its
  manifest (zlib-compressed JSON) with each layer replaced by its part's address. It is a
  rowid table: a WITHOUT ROWID table would push each row of about a kilobyte into overflow
  pages and quadruple the growth per build.
- Opening checks, each a ``ManifestStoreError`` saying what to do: a missing file (unless
  ``create``), something that is not a regular file, a file that is not SQLite, an SQLite
  database of something else (tables but no ``harness_schema`` row), a schema newer than this
  harness reads, a damaged schema. Only bound parameters reach SQL.
- Before each write the path is checked to still name the opened file: writes to a file whose
  directory was removed (or that was replaced) would land in an orphaned inode and be lost.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.manifests.errors import ManifestStoreError
from harness.manifests.record import ManifestRecord
from harness.workspace import kind_of

__all__ = [
    "SCHEMA_VERSION",
    "Identity",
    "Written",
    "list_rows",
    "open_database",
    "read_manifest",
    "read_texts",
    "write_records",
]

SCHEMA_VERSION = 1
_COMPONENT = "manifests"
_HEADER = b"SQLite format 3\x00"
_TABLES = frozenset({"harness_schema", "manifests", "manifest_texts", "manifest_parts"})

_SCHEMA = f"""
CREATE TABLE harness_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO harness_schema (component, version) VALUES ('{_COMPONENT}', {SCHEMA_VERSION});
CREATE TABLE manifest_texts (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE manifest_parts (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE manifests (
    manifest_id TEXT NOT NULL UNIQUE,
    requested_at TEXT NOT NULL,
    agent TEXT NOT NULL,
    project_id TEXT,
    workspace TEXT NOT NULL,
    digest TEXT NOT NULL,
    manifest BLOB NOT NULL
);
CREATE INDEX manifests_by_agent ON manifests (agent, manifest_id);
CREATE INDEX manifests_by_project ON manifests (project_id, manifest_id);
"""

_LIST_COLUMNS = "manifest_id, requested_at, agent, project_id, workspace, digest, manifest"


@dataclass(frozen=True, slots=True)
class Identity:
    """Which file was opened (device and inode), to notice it being removed or replaced."""

    path: Path
    device: int
    inode: int


def _where(path: Path) -> str:
    return f"manifest store {str(path)!r}"


def explain(path: Path, exc: sqlite3.Error, doing: str) -> ManifestStoreError:
    """A ``ManifestStoreError`` that says what went wrong with ``path`` and what to do."""
    text = str(exc)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        advice = (
            "is read-only: give the process write access to the file and its directory, "
            "or record to another path"
        )
    elif "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        advice = (
            "is corrupt or not a manifest store: restore it from a backup, or record to a new path"
        )
    elif "locked" in lowered or "busy" in lowered:
        advice = "stayed locked by another connection: retry, or raise the store's timeout"
    elif "disk" in lowered and "full" in lowered:
        advice = "is on a full disk: free space, or record to another disk"
    elif "unable to open" in lowered:
        advice = "cannot be opened: check that the path and its directory exist and are readable"
    else:
        advice = f"failed ({type(exc).__name__}: {text}): check the file and its directory"
    return ManifestStoreError(f"{_where(path)}: {doing}: it {advice}")


def _check_file(path: Path, create: bool) -> bool:
    """Raise unless ``path`` may be opened; True when it must be created."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not create:
            raise ManifestStoreError(
                f"{_where(path)} does not exist: record builds into it first (Harness("
                "manifests=PATH) or `harness debug ... --record PATH` create it), or check "
                "the path"
            ) from None
        if not path.parent.is_dir():
            raise ManifestStoreError(
                f"{_where(path)} cannot be created: its directory {str(path.parent)!r} does "
                "not exist; create the directory first"
            ) from None
        return True
    except OSError as exc:
        raise ManifestStoreError(
            f"{_where(path)} cannot be opened ({exc.strerror}): check the path"
        ) from None
    if not stat.S_ISREG(mode):
        raise ManifestStoreError(
            f"{_where(path)} is {kind_of(mode)}, not a regular file: point it at a manifest "
            "store file (or at a new path to create one)"
        )
    with path.open("rb") as file:
        header = file.read(len(_HEADER))
    if header and header != _HEADER:
        raise ManifestStoreError(
            f"{_where(path)} is not an SQLite database (a foreign or corrupt file): point it "
            "at a manifest store, or at a new path to create one"
        )
    return False


def _check_schema(connection: sqlite3.Connection, path: Path) -> None:
    """Create the schema in an empty database; otherwise check it is ours, and its version."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    if not tables:
        connection.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
        return
    if "harness_schema" not in tables:
        raise ManifestStoreError(
            f"{_where(path)} is an SQLite database of something else (tables: "
            f"{', '.join(sorted(tables)[:5])}): point it at a manifest store, or at a new path"
        )
    row = connection.execute(
        "SELECT version FROM harness_schema WHERE component = ?", (_COMPONENT,)
    ).fetchone()
    if row is None:
        raise ManifestStoreError(
            f"{_where(path)} holds another harness component's data, not manifests: record "
            "manifests to a file of their own"
        )
    version = row[0]
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ManifestStoreError(
            f"{_where(path)} has schema version {version!r}, newer than this harness reads "
            f"({SCHEMA_VERSION}): upgrade harness to read it"
        )
    if version < SCHEMA_VERSION or not tables >= _TABLES:
        raise ManifestStoreError(
            f"{_where(path)} has a damaged or unknown schema (version {version!r}, missing "
            f"{', '.join(sorted(_TABLES - tables)) or 'nothing'}): restore it from a backup"
        )


def open_database(
    path: Path, *, create: bool, timeout: float
) -> tuple[sqlite3.Connection, Identity]:
    """Open (or, with ``create``, create) the store at ``path``; checks as in the notes."""
    _check_file(path, create)
    try:
        connection = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise explain(path, exc, "opening") from exc
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        _check_schema(connection, path)
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            connection.execute("SELECT count(*) FROM manifests").fetchone()  # readable at least
        connection.execute("PRAGMA synchronous = FULL")
        info = os.stat(path)
    except ManifestStoreError:
        connection.close()
        raise
    except sqlite3.Error as exc:
        connection.close()
        raise explain(path, exc, "opening") from exc
    return connection, Identity(path, info.st_dev, info.st_ino)


def _json(value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.encode("utf-8", "surrogatepass")


def _unjson(data: bytes) -> Any:
    return json.loads(data.decode("utf-8", "surrogatepass"))


def _inflate(path: Path, blob: object, what: str) -> Any:
    """Decompress and parse a stored JSON blob; a damaged one is a ``ManifestStoreError``."""
    try:
        if not isinstance(blob, bytes):
            raise TypeError(f"a {type(blob).__name__}, not a BLOB")
        return _unjson(zlib.decompress(blob))
    except (zlib.error, TypeError, ValueError) as exc:
        raise ManifestStoreError(
            f"{_where(path)} is damaged: {what} cannot be read ({exc}): restore the store "
            "from a backup"
        ) from None


def _check_identity(identity: Identity) -> None:
    try:
        info = os.stat(identity.path)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ManifestStoreError(
            f"{_where(identity.path)} cannot be written: the file is gone ({reason}); its "
            "directory was removed or the file deleted: recreate the directory and restart"
        ) from None
    if (info.st_dev, info.st_ino) != (identity.device, identity.inode):
        raise ManifestStoreError(
            f"{_where(identity.path)} cannot be written: the file was replaced since it was "
            "opened; restart the Harness to open the new file"
        )


class Written:
    """Addresses (texts and layer parts) this connection has committed, most recent last.

    A build like the last one then costs no compression and no blob for what is stored
    already; bounded (oldest forgotten first). Only an optimisation: a forgotten address is
    simply written again (``INSERT OR IGNORE``). Rows deleted behind the store's back are not
    noticed until forgotten, and replay then reports their units' texts as missing.
    """

    def __init__(self, limit: int = 65_536) -> None:
        self._seen: dict[str, None] = {}
        self._limit = limit
        self._layers: dict[str, tuple[Mapping[str, Any], str, bytes]] = {}

    def layer_address(self, layer: Mapping[str, Any], parts: dict[str, bytes]) -> str:
        """The address of a layer's part; a new part is added to ``parts``.

        A layer equal to the last one of its name (compared in C, cheaper than encoding it)
        reuses its address and compressed part: consecutive builds of one agent mostly share
        their layers. (A recorded manifest is not to be changed afterwards: it is compared.)
        """
        name = str(layer.get("name"))
        last = self._layers.get(name)
        if last is not None and last[0] == layer:
            _, address, compressed = last
        else:
            body = _json(layer)
            address = hashlib.sha256(body).hexdigest()
            compressed = zlib.compress(body)
            self._layers[name] = (layer, address, compressed)
        if address not in self._seen and address not in parts:
            parts[address] = compressed
        return address

    def __contains__(self, address: object) -> bool:
        return address in self._seen

    def add(self, addresses: Iterable[str]) -> None:
        seen = self._seen
        for address in addresses:
            seen.pop(address, None)
            seen[address] = None
        while len(seen) > self._limit:
            del seen[next(iter(seen))]


def _split(record: ManifestRecord, written: Written, parts: dict[str, bytes]) -> bytes:
    """The row's manifest (layers replaced by addresses); new parts are added to ``parts``."""
    header = dict(record.manifest)
    header["layers"] = [written.layer_address(layer, parts) for layer in header["layers"]]
    return zlib.compress(_json(header), 1)


def write_records(
    connection: sqlite3.Connection,
    identity: Identity,
    records: Sequence[ManifestRecord],
    written: Written | None = None,
) -> None:
    """Write every record in ONE transaction (group commit); all or none of them lands."""
    known = written if written is not None else Written(0)
    rows = []
    parts: dict[str, bytes] = {}
    texts: dict[str, bytes] = {}
    for record in records:
        header = _split(record, known, parts)
        for address, text in record.texts.items():
            if address not in known and address not in texts:
                texts[address] = text.encode("utf-8", "surrogatepass")
        manifest = record.manifest
        rows.append(
            (
                record.manifest_id,
                manifest["requested_at"],
                manifest["agent"],
                manifest["project_id"],
                manifest["workspace"],
                manifest["digest"],
                header,
            )
        )
    _check_identity(identity)
    try:
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.executemany(
                "INSERT OR IGNORE INTO manifest_texts (sha256, body) VALUES (?, ?)",
                texts.items(),
            )
            connection.executemany(
                "INSERT OR IGNORE INTO manifest_parts (sha256, body) VALUES (?, ?)",
                parts.items(),
            )
            connection.executemany(
                f"INSERT INTO manifests ({_LIST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)", rows
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise explain(identity.path, exc, f"recording {len(records)} build(s)") from exc
    known.add(texts)
    known.add(parts)


def _expand(connection: sqlite3.Connection, path: Path, header: bytes) -> dict[str, Any]:
    manifest: dict[str, Any] = _inflate(path, header, "a manifest row")
    layers = []
    for address in manifest["layers"]:
        row = connection.execute(
            "SELECT body FROM manifest_parts WHERE sha256 = ?", (address,)
        ).fetchone()
        if row is None:
            raise ManifestStoreError(
                f"{_where(path)} is damaged: manifest {manifest.get('manifest_id')!r} points "
                f"to a missing layer record {address}: restore the store from a backup"
            )
        try:
            body = zlib.decompress(row[0])
        except (zlib.error, TypeError):
            body = b""
        if hashlib.sha256(body).hexdigest() != address:
            raise ManifestStoreError(
                f"{_where(path)} is damaged: the layer record {address} of manifest "
                f"{manifest.get('manifest_id')!r} does not match its address: restore the "
                "store from a backup"
            )
        layers.append(_unjson(body))
    manifest["layers"] = layers
    return manifest


def read_manifest(
    connection: sqlite3.Connection, path: Path, manifest_id: str
) -> dict[str, Any] | None:
    """The recorded manifest of ``manifest_id`` in full, or None when there is none."""
    try:
        row = connection.execute(
            "SELECT manifest FROM manifests WHERE manifest_id = ?", (manifest_id,)
        ).fetchone()
        return None if row is None else _expand(connection, path, row[0])
    except sqlite3.Error as exc:
        raise explain(path, exc, f"reading manifest {manifest_id!r}") from exc


_SUMMARY_KEYS = ("tokens", "estimated", "tokenizer", "harness_version")


def list_rows(
    connection: sqlite3.Connection,
    path: Path,
    *,
    agent: str | None,
    project_id: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Summaries of the newest ``limit`` builds, newest first, filtered when asked."""
    clauses, values = [], []
    if agent is not None:
        clauses.append("agent = ?")
        values.append(agent)
    if project_id is not None:
        clauses.append("project_id = ?")
        values.append(project_id)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    query = f"SELECT {_LIST_COLUMNS} FROM manifests{where} ORDER BY manifest_id DESC LIMIT ?"
    try:
        rows = connection.execute(query, (*values, limit)).fetchall()
    except sqlite3.Error as exc:
        raise explain(path, exc, "listing manifests") from exc
    result = []
    for manifest_id, requested_at, row_agent, row_project, workspace, digest, header in rows:
        manifest = _inflate(path, header, f"manifest {manifest_id!r}")
        summary: dict[str, Any] = {
            "manifest_id": manifest_id,
            "requested_at": requested_at,
            "agent": row_agent,
            "project_id": row_project,
            "workspace": workspace,
            "digest": digest,
        }
        summary.update({key: manifest.get(key) for key in _SUMMARY_KEYS})
        result.append(summary)
    return result


def read_texts(
    connection: sqlite3.Connection, path: Path, addresses: Iterable[str]
) -> Mapping[str, bytes]:
    """The stored bytes at each address that has any (missing addresses are left out)."""
    found: dict[str, bytes] = {}
    try:
        for address in dict.fromkeys(addresses):
            row = connection.execute(
                "SELECT body FROM manifest_texts WHERE sha256 = ?", (address,)
            ).fetchone()
            if row is not None and isinstance(row[0], bytes):
                found[address] = row[0]
    except sqlite3.Error as exc:
        raise explain(path, exc, "reading stored texts") from exc
    return found
