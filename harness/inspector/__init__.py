"""The context inspector: a recorded build as one self-contained HTML page, and line
differences of the unit texts two builds differ in.

::

    from harness.inspector import render_page, write_view

    await write_view("manifests.db", manifest_id, None, "build.html")   # what harness view does

The page (``harness.inspector._page``) loads nothing and runs no script; every recorded text is
escaped. ``harness.inspector._textdiff`` gives the line differences ``harness diff --text``
prints.
"""

from __future__ import annotations

from harness.inspector._command import ViewError, write_view
from harness.inspector._page import render_page
from harness.inspector._textdiff import UnitTextDiff, render_text_differences, text_differences

__all__ = [
    "UnitTextDiff",
    "ViewError",
    "render_page",
    "render_text_differences",
    "text_differences",
    "write_view",
]
