"""The inspector's exclusions: every unit a recorded build removed before assembly, and the
policy its targets missed.

Pure: manifests in, escaped HTML out::

    from harness.inspector._excluded import excluded_section, layer_exclusions

    html_text = layer_exclusions(manifest, "evidence")     # the layer's removed units
    html_text = excluded_section(manifest)                 # the rest, and required_policy_missing

A build records what it did not render in two places: a unit the layer's strategy dropped
(``budget``, ``stale``) is among the layer's ``dropped_units``; a unit removed before
assembly (``denied``, ``duplicate``, ``outranked``, ``not_matched``, ``shadowed``) is an entry
of the request record's ``excluded`` list, with what it repeats (``of``) or who won over it
(``by``). The page shows the latter beside the layer it belonged to, so a reader sees every
unit the layer was given; an entry of a layer the page does not show, and each target's
``required_policy_missing`` files, are in the page's "Excluded" section.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "excluded_entries",
    "excluded_section",
    "exclusion_changes",
    "exclusions_diff",
    "layer_exclusions",
    "missing_policies",
    "request_record",
]

_RELATIONS = ("of", "by")
"""The keys of an entry naming another unit: what it repeats, who won over it."""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def request_record(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    """The manifest's ``request`` record (readiness, exclusions, policy), or an empty one."""
    record = manifest.get("request")
    return record if isinstance(record, Mapping) else {}


def excluded_entries(manifest: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The units removed before assembly, in recorded order."""
    entries = request_record(manifest).get("excluded") or ()
    return [entry for entry in entries if isinstance(entry, Mapping)]


def missing_policies(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """Per target (``""``: the whole workspace) the chain files dropped for budget."""
    found = request_record(manifest).get("required_policy_missing") or {}
    if not isinstance(found, Mapping):
        return {}
    return {str(target): [str(path) for path in paths] for target, paths in found.items()}


def _css(reason: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in reason)


def _relations(entry: Mapping[str, Any]) -> str:
    return "".join(
        f' {key} <code class="relation" data-{key}="{_e(entry[key])}">{_e(entry[key])}</code>'
        for key in _RELATIONS
        if entry.get(key)
    )


def _entry(entry: Mapping[str, Any], *, with_layer: bool = False) -> str:
    reason = str(entry.get("reason") or "-")
    layer = f' <span class="meta">layer {_e(entry.get("layer"))}</span>' if with_layer else ""
    return (
        f'<div class="unit excluded reason-{_e(_css(reason))}" data-unit-id="{_e(entry.get("id"))}"'
        f' data-status="excluded" data-reason="{_e(reason)}">'
        f'<code class="unit-id">{_e(entry.get("id"))}</code> '
        f'<span class="status">excluded: {_e(reason)}{_relations(entry)}</span>{layer} '
        '<span class="meta">removed before assembly: no text rendered</span></div>'
    )


def layer_exclusions(manifest: Mapping[str, Any], layer: str) -> str:
    """The entries removed from ``layer`` before assembly ("" when none)."""
    return "".join(_entry(e) for e in excluded_entries(manifest) if e.get("layer") == layer)


def excluded_section(manifest: Mapping[str, Any]) -> str:
    """The body of the page's "Excluded" section: every exclusion and drop by reason, the
    entries of layers the page does not show, and each target's missing policy."""
    shown = {str(layer.get("name")) for layer in manifest.get("layers", ())}
    elsewhere = [e for e in excluded_entries(manifest) if str(e.get("layer")) not in shown]
    parts = [_counts(manifest)]
    if elsewhere:
        parts.append("<h3>Outside the recorded layers</h3>")
        parts.extend(_entry(entry, with_layer=True) for entry in elsewhere)
    missing = missing_policies(manifest)
    if missing:
        rows = "".join(
            f'<tr data-target="{_e(target)}"><td><code>{_e(target or "(workspace)")}</code></td>'
            f"<td>{''.join(f'<code class=policy>{_e(p)}</code> ' for p in paths)}</td></tr>"
            for target, paths in missing.items()
        )
        parts.append(
            "<h3>required_policy_missing</h3><p class=meta>instruction files on a target's "
            "chain dropped for their layer's budget</p>"
            f'<table class="skills policy-missing"><tr><th>target</th><th>files</th></tr>'
            f"{rows}</table>"
        )
    return "".join(parts)


def _counts(manifest: Mapping[str, Any]) -> str:
    """How many units were not rendered, per reason (removed before assembly or dropped)."""
    counts: dict[str, int] = {}
    for layer in manifest.get("layers", ()):
        for unit in layer.get("dropped_units", ()):
            reason = str(unit.get("reason") or "-")
            counts[reason] = counts.get(reason, 0) + 1
    for entry in excluded_entries(manifest):
        reason = str(entry.get("reason") or "-")
        counts[reason] = counts.get(reason, 0) + 1
    if not counts:
        return '<p class="none">every unit given was rendered</p>'
    items = "".join(
        f'<li data-reason="{_e(reason)}"><code>{_e(reason)}</code>: {count}</li>'
        for reason, count in sorted(counts.items())
    )
    return f'<ul class="reasons">{items}</ul>'


def _keyed(manifest: Mapping[str, Any]) -> dict[tuple[str, str], Mapping[str, Any]]:
    found: dict[tuple[str, str], Mapping[str, Any]] = {}
    for entry in excluded_entries(manifest):
        found.setdefault((str(entry.get("layer")), str(entry.get("id"))), entry)
    for target, paths in missing_policies(manifest).items():
        for path in paths:
            key = (f"required_policy_missing for {target or '(workspace)'}", path)
            found[key] = {"reason": "required_policy_missing"}
    return found


def _said(entry: Mapping[str, Any]) -> str:
    return f"{_e(entry.get('reason'))}{_relations(entry)}"


def _diff_items(
    a: Mapping[tuple[str, str], Mapping[str, Any]], b: Mapping[tuple[str, str], Mapping[str, Any]]
) -> Iterable[str]:
    for key in sorted(a.keys() | b.keys()):
        where, unit_id = key
        name = f"<code>{_e(unit_id)}</code> ({_e(where)})"
        if key not in b:
            yield f'<li class="removed">- {name} excluded in A ({_said(a[key])}), not in B</li>'
        elif key not in a:
            yield f'<li class="added">+ {name} excluded in B ({_said(b[key])})</li>'
        elif dict(a[key]) != dict(b[key]):
            yield f'<li class="changed">~ {name}: {_said(a[key])} &rarr; {_said(b[key])}</li>'


def exclusion_changes(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The units excluded in one build and not the other, or for another reason, and the
    policy missing in one and not the other: one escaped list item each."""
    return list(_diff_items(_keyed(a), _keyed(b)))


def exclusions_diff(changes: Sequence[str]) -> str:
    """The diff's "Exclusions" part, of ``exclusion_changes``."""
    body = "".join(changes) or '<li class="none">the same units excluded</li>'
    return f'<div class="exclusions-diff"><h2>Exclusions</h2><ul>{body}</ul></div>'
