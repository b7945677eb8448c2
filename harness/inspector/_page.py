"""The inspector page: one recorded build (or two and their diff) as one self-contained HTML file.

Pure: manifests and stored texts in, the page's text out::

    from harness.inspector._page import render_page

    html_text = render_page(manifest, texts)                  # one build
    html_text = render_page(manifest, texts, other, diff=(change, differences))

The page loads nothing and runs nothing: no script at all, styles inline, and a
Content-Security-Policy of ``default-src 'none'; style-src 'unsafe-inline'`` so that even a
unit that smuggled markup past the escaping could not fetch or execute anything. Every
recorded value (ids, sources, texts, reasons, paths) goes through ``html.escape``.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from typing import Any

from harness.inspector._excluded import (
    excluded_section,
    exclusion_changes,
    exclusions_diff,
    layer_exclusions,
    request_record,
)
from harness.inspector._skills import skills_section
from harness.inspector._textdiff import UnitTextDiff, decode
from harness.manifests._diff import LayerDiff, ManifestDiff, UnitRef

__all__ = ["CSP", "SECTIONS", "render_page"]

CSP = "default-src 'none'; style-src 'unsafe-inline'"

SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("targets", "Targets", ("targets",)),
    ("imports", "Imports", ("imports",)),
    ("skills", "Skills", ("skills", "skill_catalog", "activations")),
    ("tools", "Tool digests", ("tools", "tool_catalog", "tool_digests")),
    ("readiness", "Readiness", ("readiness", "request", "corroborating")),
)
"""Page section id, heading, and the manifest keys shown in it (whichever are recorded; the
readiness section's are in the manifest's ``request`` record). An "Excluded" section follows:
every unit not rendered, by reason, and the policy each target missed."""

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d2430;background:#fff}
h1{font-size:1.3em}h2{font-size:1.1em;margin:1.2em 0 .3em}
table.summary td{padding:.1em .8em .1em 0}code,pre{font:12px/1.35 ui-monospace,monospace}
.bar{display:flex;height:22px;border:1px solid #889;background:#eef0f4;margin:.3em 0;width:100%}
.seg{height:100%;border-right:1px solid #fff;box-sizing:border-box;min-width:2px}
.kept{background:#3a8f5c}.cut{background:#d19a1f}.dropped{background:#c0392b}
.dropped.reason-stale{background:#7d5ba6}.dropped.reason-other{background:#555}
.unit{border-left:6px solid #ccc;padding:.2em .6em;margin:.25em 0;background:#fafbfc}
.unit.kept{border-color:#3a8f5c;background:#f3faf5}.unit.cut{border-color:#d19a1f;background:#fdf8ec}
.unit.dropped{border-color:#c0392b;background:#fcf1f0}
.unit.dropped.reason-stale{border-color:#7d5ba6}.unit.dropped.reason-other{border-color:#555}
.unit.excluded{border-color:#8a6d3b;background:#f7f3ec}.excluded{background:#8a6d3b}
.meta{color:#4a5262}.status{font-weight:600}.over{color:#c0392b;font-weight:600}
pre{white-space:pre-wrap;word-break:break-word;background:#f4f5f7;padding:.5em;margin:.3em 0}
.none{color:#778;font-style:italic}.add{background:#e6f6ea}.del{background:#fbe9e7}
table.skills{border-collapse:collapse;margin:.3em 0}
table.skills td,table.skills th{border:1px solid #dde;padding:.15em .5em;text-align:left}
td.status.kept{color:#3a8f5c}td.status.dropped{color:#c0392b}
.hunk{color:#6a4fa0}.legend span{display:inline-block;padding:0 .5em;margin-right:.4em;color:#fff}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _reason_class(reason: str | None) -> str:
    if reason == "stale":
        return "reason-stale"
    text = (reason or "").lower()
    return "reason-budget" if "budget" in text or "fit" in text else "reason-other"


def _entries(layer: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], str, str | None]]:
    """Every input unit of a recorded layer in input order, with its status and drop reason."""
    found: list[tuple[Mapping[str, Any], str, str | None]] = [
        (unit, "cut" if unit.get("truncated") else "kept", None) for unit in layer.get("units", ())
    ]
    found.extend(
        (unit, "dropped", unit.get("reason") and str(unit["reason"]))
        for unit in layer.get("dropped_units", ())
    )
    return sorted(found, key=lambda item: int(item[0].get("index", 0)))


def _bar(layer: Mapping[str, Any]) -> str:
    budget = int(layer.get("budget") or 0)
    tokens = int(layer.get("tokens") or 0)
    scale = max(budget, tokens, 1)
    segments = []
    for unit, status, _ in _entries(layer):
        if status == "dropped":
            continue  # a dropped unit takes no room in the prompt
        share = 100.0 * int(unit.get("tokens") or 0) / scale
        label = f"{unit.get('id')}: {unit.get('tokens')} tokens ({status})"
        segments.append(
            f'<span class="seg {status}" style="width:{share:.3f}%" title="{_e(label)}"></span>'
        )
    over = ' <span class="over">over budget</span>' if tokens > budget else ""
    return (
        f'<div class="bar" title="{tokens} of {budget} tokens">{"".join(segments)}</div>'
        f'<div class="meta"><span class="figures">{tokens} / {budget} tokens</span>{over}</div>'
    )


def _unit(
    unit: Mapping[str, Any], status: str, reason: str | None, texts: Mapping[str, bytes]
) -> str:
    text = decode(texts.get(str(unit.get("sha256"))))
    label = f"dropped: {reason}" if status == "dropped" and reason else status
    classes = f"unit {status}" + (f" {_reason_class(reason)}" if status == "dropped" else "")
    tokens = unit.get("tokens")
    body = (
        f"<pre>{_e(text)}</pre>"
        if text is not None
        else '<p class="none">text not in the store</p>'
    )
    return (
        f'<div class="{classes}" data-unit-id="{_e(unit.get("id"))}" data-status="{status}">'
        f'<code class="unit-id">{_e(unit.get("id"))}</code> '
        f'<span class="status">{_e(label)}</span> '
        f'<span class="meta">source {_e(unit.get("source") or "-")}, '
        f"{_e('-' if tokens is None else tokens)} tokens, trust {_e(unit.get('trust'))}, "
        f"sha256 {_e(str(unit.get('sha256'))[:12])}</span>"
        f"<details><summary>text</summary>{body}</details></div>"
    )


def _layer(
    layer: Mapping[str, Any], texts: Mapping[str, bytes], manifest: Mapping[str, Any]
) -> str:
    name = str(layer.get("name"))
    units = "".join(_unit(u, s, r, texts) for u, s, r in _entries(layer))
    units += layer_exclusions(manifest, name)
    notes = "".join(f"<li>{_e(note)}</li>" for note in layer.get("notes", ()))
    heading = f"{_e(layer.get('strategy'))}, {_e(layer.get('authority'))}"
    return (
        f'<section class="layer" id="layer-{_e(name)}" data-layer="{_e(name)}">'
        f'<h2>{_e(name)} <span class="meta">({heading})</span></h2>{_bar(layer)}'
        + (units or _NONE.format("no units"))
        + (f'<ul class="notes">{notes}</ul>' if notes else "")
        + "</section>"
    )


_NONE = '<p class="none">{}</p>'


def _value(value: Any) -> str:
    if isinstance(value, Mapping):
        if not value:
            return '<p class="none">none</p>'
        rows = "".join(
            f"<dt><code>{_e(k)}</code></dt><dd>{_value(v)}</dd>" for k, v in value.items()
        )
        return f"<dl>{rows}</dl>"
    if isinstance(value, list | tuple):
        if not value:
            return '<p class="none">none</p>'
        return "<ul>" + "".join(f"<li>{_value(item)}</li>" for item in value) + "</ul>"
    if isinstance(value, str):
        return f"<code>{_e(value)}</code>"
    return f"<code>{_e(json.dumps(value, ensure_ascii=False))}</code>"


def _sections(manifest: Mapping[str, Any]) -> str:
    out = []
    for section_id, heading, keys in SECTIONS:
        source = request_record(manifest) if section_id == "readiness" else manifest
        if section_id == "readiness" and "readiness" in manifest:  # recorded at the top
            source = manifest
        present = [key for key in keys if key in source]
        special = skills_section(manifest) if section_id == "skills" else None
        if special is not None:
            body = special
        elif not present:
            body = '<p class="none">none recorded</p>'
        else:
            body = "".join(
                (f"<h3>{_e(key)}</h3>" if len(present) > 1 else "") + _value(source[key])
                for key in present
            )
        out.append(f'<section id="{section_id}"><h2>{heading}</h2>{body}</section>')
    out.append(f'<section id="excluded"><h2>Excluded</h2>{excluded_section(manifest)}</section>')
    return "".join(out)


_SUMMARY = (
    ("agent", "agent"),
    ("project_id", "project"),
    ("workspace", "workspace"),
    ("requested_at", "requested at"),
    ("tokens", "tokens"),
    ("digest", "sha256"),
    ("tokenizer_spec", "tokenizer"),
    ("harness_version", "harness"),
)


def _build(manifest: Mapping[str, Any], texts: Mapping[str, bytes], side: str) -> str:
    rows = "".join(
        f"<tr><td>{label}</td><td><code>{_e(manifest.get(key, '-'))}</code></td></tr>"
        for key, label in _SUMMARY
        if key in manifest
    )
    layers = "".join(_layer(layer, texts, manifest) for layer in manifest.get("layers", ()))
    return (
        f'<article class="build" id="build-{side}"><h1>Build {_e(manifest.get("manifest_id"))}'
        f'</h1><table class="summary">{rows}</table>{layers}{_sections(manifest)}</article>'
    )


def _ref(unit: UnitRef) -> str:
    return f"<code>{_e(unit.id)}</code> ({_e(unit.fate_text())})"


def _layer_diff(layer: LayerDiff) -> str:
    items = [f'<li class="added">+ {_ref(u)} added in B</li>' for u in layer.added]
    items += [f'<li class="removed">- {_ref(u)} removed in B</li>' for u in layer.removed]
    items += [
        f'<li class="changed">~ <code>{_e(a.id)}</code> changed: sha256 '
        f"{_e(a.sha256[:12])} &rarr; {_e(b.sha256[:12])}</li>"
        for a, b in layer.changed
    ]
    items += [
        f'<li class="trimmed">! <code>{_e(a.id)}</code> trimmed differently: '
        f"{_e(a.fate_text())} in A, {_e(b.fate_text())} in B</li>"
        for a, b in layer.trimmed
    ]
    items += [
        f'<li class="setting">* {_e(c.name)}: {_e(c.a)} &rarr; {_e(c.b)}</li>'
        for c in layer.settings
    ]
    body = "".join(items) or '<li class="none">no changes</li>'
    name = _e(layer.name)
    return f'<div class="layer-diff" data-layer="{name}"><h3>{name}</h3><ul>{body}</ul></div>'


def _line(line: str) -> str:
    kind = "hunk" if line.startswith("@@") else ""
    if line.startswith("+") and not line.startswith("+++"):
        kind = "add"
    elif line.startswith("-") and not line.startswith("---"):
        kind = "del"
    return f'<span class="line {kind}">{_e(line)}</span>\n'


def _text_diff(difference: UnitTextDiff) -> str:
    missing = (
        f'<p class="none">text of {" and ".join(difference.missing)} not in the store</p>'
        if difference.missing
        else ""
    )
    lines = "".join(_line(line) for line in difference.lines)
    return (
        f'<div class="text-diff" data-layer="{_e(difference.layer)}" '
        f'data-unit-id="{_e(difference.unit_id)}"><h4>{_e(difference.layer)}: '
        f"<code>{_e(difference.unit_id)}</code></h4>{missing}<pre>{lines}</pre></div>"
    )


def _diff(
    change: ManifestDiff,
    differences: Sequence[UnitTextDiff],
    sides: tuple[Mapping[str, Any], Mapping[str, Any]],
) -> str:
    context = "".join(
        f"<li>{_e(c.name)}: <code>{_e(c.a)}</code> &rarr; <code>{_e(c.b)}</code></li>"
        for c in change.context
    )
    excluded = exclusion_changes(*sides)
    same = '<p class="same">no differences</p>' if change.same and not excluded else ""
    return (
        f'<section id="diff"><h1>Diff A {_e(change.a)} &rarr; B {_e(change.b)}</h1>{same}'
        f"<ul class=context>{context}</ul>{''.join(_layer_diff(x) for x in change.layers)}"
        f"{exclusions_diff(excluded)}"
        f"<h2>Text differences</h2>{''.join(_text_diff(d) for d in differences)}"
        f"{'' if differences else '<p class=none>no unit text differs</p>'}</section>"
    )


_LEGEND = (
    '<p class="legend"><span class="kept">kept</span><span class="cut">cut</span>'
    '<span class="dropped reason-budget">dropped: budget</span>'
    '<span class="dropped reason-stale">dropped: stale</span>'
    '<span class="dropped reason-other">dropped: other</span>'
    '<span class="excluded">excluded before assembly</span></p>'
)


def render_page(
    manifest: Mapping[str, Any],
    texts: Mapping[str, bytes],
    other: Mapping[str, Any] | None = None,
    *,
    diff: tuple[ManifestDiff, Sequence[UnitTextDiff]] | None = None,
) -> str:
    """The page of ``manifest`` (and of ``other`` and ``diff``, the difference to it)."""
    title = f"harness build {manifest.get('manifest_id')}"
    parts = [_diff(*diff, (manifest, other or {}))] if diff is not None else []
    parts.append(_build(manifest, texts, "a"))
    if other is not None:
        parts.append(_build(other, texts, "b"))
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>"
        f"{_LEGEND}{''.join(parts)}</body></html>\n"
    )
