"""Line-by-line differences of the units two recorded builds hold under one id with other text.

The manifest diff says a unit changed (its sha256); this says how, from the stored texts::

    from harness.inspector._textdiff import text_differences, render_text_differences

    change = await store.diff(id_a, id_b)
    texts = await store.texts(changed_addresses(change))
    print(render_text_differences(text_differences(change, texts)))

Pure: a ``ManifestDiff`` and the stored bytes in, ``UnitTextDiff`` values out. A text the store
does not hold (any more) is shown as missing, never guessed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from harness.manifests._diff import ManifestDiff, display_value

__all__ = [
    "UnitTextDiff",
    "changed_addresses",
    "decode",
    "render_text_differences",
    "text_differences",
]


@dataclass(frozen=True, slots=True)
class UnitTextDiff:
    """One changed unit: its layer, id and unified-diff lines (``---``/``+++`` headers first);
    ``missing`` names the side(s) whose text the store does not hold."""

    layer: str
    unit_id: str
    lines: tuple[str, ...]
    missing: tuple[str, ...] = ()


def decode(data: bytes | None) -> str | None:
    """Stored bytes as text (an undecodable byte shown as U+FFFD); ``None`` stays ``None``."""
    return None if data is None else data.decode("utf-8", "replace")


def changed_addresses(change: ManifestDiff) -> list[str]:
    """The sha256 addresses of both sides of every changed unit."""
    return [ref.sha256 for layer in change.layers for pair in layer.changed for ref in pair]


def text_differences(change: ManifestDiff, texts: Mapping[str, bytes]) -> list[UnitTextDiff]:
    """The line differences of every changed unit, in layer then unit order."""
    found: list[UnitTextDiff] = []
    for layer in change.layers:
        for old, new in layer.changed:
            a, b = decode(texts.get(old.sha256)), decode(texts.get(new.sha256))
            missing = tuple(side for side, text in (("A", a), ("B", b)) if text is None)
            lines = difflib.unified_diff(
                (a or "").splitlines(),
                (b or "").splitlines(),
                fromfile=f"A {old.id}",
                tofile=f"B {new.id}",
                lineterm="",
            )
            found.append(UnitTextDiff(layer.name, old.id, tuple(lines), missing))
    return found


def render_text_differences(differences: Iterable[UnitTextDiff]) -> str:
    """The differences for a terminal: every line through the display escaper."""
    out: list[str] = []
    for difference in differences:
        out.append(f"{difference.layer}: {display_value(difference.unit_id)}")
        if difference.missing:
            sides = " and ".join(difference.missing)
            out.append(f"  (text of {sides} not in the store: shown as empty)")
        out.extend(f"  {display_value(line)}" for line in difference.lines)
    if not out:
        return "no unit text differs\n"
    return "\n".join(out) + "\n"
