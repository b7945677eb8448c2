"""Rules and task-state files: one unit per line, for ``--rules`` and ``--task-state``.

The command line fills the two caller-provided layers from files, in discard order (oldest
first)::

    from harness._unit_files import read_unit_file

    units = read_unit_file("examples/acme/business-rules.txt")
    units[0].id  # 'business-rules.txt:2': FILE:LINE when the file gives no id

A ``.jsonl`` file holds one JSON value per line: a string (the unit's text) or an object
``{"text": ..., "id": ..., "source": ...}`` where only ``text`` is required. Any other file
holds one unit per line; blank lines and lines starting with ``#`` are skipped.

Lines end at ``\\n`` (an optional ``\\r`` before it is part of the ending), nowhere else:
``str.splitlines`` would also break at U+2028, U+0085, form feeds and other separators, so a
valid JSON line holding a raw U+2028 would be split in two and every later ``FILE:LINE`` id
would name the wrong line. The file must be UTF-8 (a leading BOM is dropped): invalid bytes
are an error naming the line, never silently replaced.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.prompt_assembler import Unit

__all__ = ["UnitFileError", "read_unit_file", "split_lines"]


class UnitFileError(HarnessError, ValueError):
    """A rules or task-state file cannot be used; the message names the file and line."""


def split_lines(text: str) -> list[str]:
    """``text`` split at ``\\n`` only, one trailing ``\\r`` removed from each line; no empty
    last line for a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UnitFileError(
            f"{where}:{line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        ) from None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_unit(line: str, where: str, default_id: str) -> Unit:
    try:
        value: Any = json.loads(line)
    except json.JSONDecodeError as exc:
        raise UnitFileError(f"{where}: not JSON ({exc.msg})") from None
    if isinstance(value, str):
        value = {"text": value}
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        raise UnitFileError(f"{where}: expected a string or {{'text': ...}}")
    unit_id, source = value.get("id", default_id), value.get("source")
    if not isinstance(unit_id, str) or not (source is None or isinstance(source, str)):
        raise UnitFileError(f"{where}: 'id' and 'source' must be strings")
    for name, field in (("text", value["text"]), ("id", unit_id), ("source", source)):
        if field is not None and not _encodable(field):
            raise UnitFileError(
                f"{where}: {name!r} holds an unpaired surrogate escape (such as \\ud800); "
                "write valid Unicode"
            )
    return Unit(id=unit_id, text=value["text"], source=source)


def read_unit_file(path: str | os.PathLike[str], *, label: str | None = None) -> list[Unit]:
    """The units of a rules or task-state file, in file order.

    ``label`` prefixes messages (the CLI passes ``"--rules FILE"``). Raises ``UnitFileError``
    for an unreadable file, invalid UTF-8, a malformed JSON line or a duplicate id.
    """
    file = Path(path)
    where = label if label is not None else os.fspath(path)
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise UnitFileError(f"{where}: no such file") from None
    except OSError as exc:
        raise UnitFileError(f"{where}: cannot be read ({exc.strerror})") from None
    text = _decode(raw, where)
    jsonl = file.suffix == ".jsonl"
    units: list[Unit] = []
    seen: set[str] = set()
    for number, line in enumerate(split_lines(text), start=1):
        stripped = line.strip()
        if not stripped or (not jsonl and stripped.startswith("#")):
            continue
        default_id = f"{file.name}:{number}"
        if jsonl:
            unit = _json_unit(stripped, f"{where}:{number}", default_id)
        else:
            unit = Unit(id=default_id, text=stripped)
        if unit.id in seen:
            raise UnitFileError(f"{where}:{number}: duplicate id {unit.id!r}")
        seen.add(unit.id)
        units.append(unit)
    return units
