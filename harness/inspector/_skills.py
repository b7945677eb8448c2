"""The inspector's skills section: the catalog and each activation of a recorded build.

Pure: a manifest in, escaped HTML out::

    from harness.inspector._skills import skills_section

    body = skills_section(manifest)   # None when the build recorded no skills

Each catalog entry and each activation is shown with its status in the ``skills`` layer
(kept, or dropped and why), so a reader sees which skills the model was offered and which
instructions it was given, with the digests that name their exact bytes: the catalog's
digest, each ``SKILL.md``'s and each rendered body's sha256, the trigger and reason of the
activation, and the resources it listed (never read). A skill another of its name won over
is listed below the catalog, shadowed by the winner.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.inspector._excluded import excluded_entries

__all__ = ["skills_section"]


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _statuses(manifest: Mapping[str, Any]) -> dict[str, tuple[str, str | None]]:
    """Per unit id of the ``skills`` layer: ``kept`` or ``dropped`` and the reason."""
    found: dict[str, tuple[str, str | None]] = {}
    for layer in manifest.get("layers", ()):
        if layer.get("name") != "skills":
            continue
        for unit in layer.get("units", ()):
            found[str(unit.get("id"))] = ("cut" if unit.get("truncated") else "kept", None)
        for unit in layer.get("dropped_units", ()):
            reason = unit.get("reason")
            found[str(unit.get("id"))] = ("dropped", None if reason is None else str(reason))
    return found


def _status(statuses: Mapping[str, tuple[str, str | None]], unit_id: str) -> str:
    status, reason = statuses.get(unit_id, ("not in the layer", None))
    label = f"dropped: {reason}" if status == "dropped" and reason else status
    css = status if status in ("kept", "cut", "dropped") else "other"
    return f'<td class="status {css}" data-status="{_e(status)}">{_e(label)}</td>'


def _short(digest: Any) -> str:
    text = "" if digest is None else str(digest)
    return f'<code title="{_e(text)}">{_e(text[:12])}</code>'


def _table(css: str, headers: Sequence[str], rows: Iterable[str], empty: str) -> str:
    """A table of ``rows`` (each its cells) under ``headers``; ``empty`` when there are none."""
    body = "".join(f"<tr>{row}</tr>" for row in rows)
    if not body:
        return f'<p class="none">{empty}</p>'
    head = "".join(f"<th>{header}</th>" for header in headers)
    return f'<table class="skills {css}"><tr>{head}</tr>{body}</table>'


def _catalog(record: Mapping[str, Any], statuses: Mapping[str, tuple[str, str | None]]) -> str:
    rows = (
        f'<td><code class="skill-name">{_e(entry.get("name"))}</code></td>'
        f"<td>{_e(entry.get('scope'))}{' (rule)' if entry.get('kind') == 'rule' else ''}</td>"
        f"<td><code>{_e(entry.get('path'))}</code></td><td>{_short(entry.get('sha256'))}</td>"
        + _status(statuses, f"{entry.get('kind') or 'skill'}:{entry.get('name')}")
        for entry in record.get("catalog") or ()
    )
    headers = ("name", "scope", "location", "SKILL.md sha256", "status")
    return _table("skill-catalog", headers, rows, "no catalog entries")


def _resources(activation: Mapping[str, Any]) -> str:
    listed = list(activation.get("resources") or ())
    if not listed:
        return '<span class="none">none</span>'
    return "<ul>" + "".join(f"<li><code>{_e(path)}</code></li>" for path in listed) + "</ul>"


def _activations(record: Mapping[str, Any], statuses: Mapping[str, tuple[str, str | None]]) -> str:
    rows = (
        f'<td><code class="skill-name">{_e(item.get("name"))}</code></td>'
        f"<td>{_e(item.get('trigger'))}</td><td>{_e(item.get('reason'))}</td>"
        f"<td>{_e(item.get('tokens'))}</td><td>{_short(item.get('skill_sha256'))}</td>"
        f"<td>{_short(item.get('body_sha256'))}</td><td>{_resources(item)}</td>"
        + _status(statuses, f"activation:{item.get('name')}")
        for item in record.get("activations") or ()
    )
    headers = ("name", "trigger", "reason", "tokens", "SKILL.md sha256", "body sha256")
    return _table("skill-activations", (*headers, "resources", "status"), rows, "no activations")


def skills_section(manifest: Mapping[str, Any]) -> str | None:
    """The body of the page's skills section, or None when no skills were recorded."""
    record = manifest.get("skills")
    if not isinstance(record, Mapping):
        return None
    statuses = _statuses(manifest)
    digest = record.get("catalog_digest")
    shown = _short(digest) if digest is not None else '<span class="none">no catalog</span>'
    return (
        f'<p class="meta">catalog digest {shown}</p><h3>Catalog</h3>'
        f"{_catalog(record, statuses)}{_shadowed(manifest)}"
        f"<h3>Activations</h3>{_activations(record, statuses)}"
    )


def _shadowed(manifest: Mapping[str, Any]) -> str:
    """The skills another of the same name won over (not in the catalog)."""
    losers = [e for e in excluded_entries(manifest) if e.get("layer") == "skills"]
    if not losers:
        return ""
    items = "".join(
        f'<li data-reason="{_e(e.get("reason"))}"><code>{_e(e.get("id"))}</code> '
        f"{_e(e.get('reason'))} by <code>{_e(e.get('by'))}</code></li>"
        for e in losers
    )
    return f'<h4>Not in the catalog</h4><ul class="skill-shadowed">{items}</ul>'
