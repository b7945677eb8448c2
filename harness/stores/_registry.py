"""Which backend opens a store: one classifier of locations, one registry of URL schemes.

Every kind of store (``"instructions"``, ``"manifests"``, ``"pins"``) is opened from a
location: a path is the embedded SQLite file, a ``scheme://`` URL goes to the backend
registered for that scheme and kind::

    from harness.stores import register_store, url_scheme

    url_scheme("postgresql://db/engine")   # 'postgresql'
    url_scheme("examples/acme.db")         # None: a path (SQLite)
    register_store("mysql", "my_package.store:MysqlInstructionStore", kind="instructions")

A factory is a callable or a ``"module:attribute"`` reference, imported only when a location
of that scheme is first opened (a driver such as asyncpg is then needed only by those who use
it). What a factory is called with is each kind's own contract (its package documents it).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

from harness.errors import HarnessError

__all__ = ["StoreKind", "fits_text", "is_url", "register_store", "store_factory", "url_scheme"]

StoreKind: TypeAlias = Literal["instructions", "manifests", "pins"]
Factory: TypeAlias = Callable[..., Any]

_KINDS: tuple[StoreKind, ...] = ("instructions", "manifests", "pins")
_NOUNS: dict[StoreKind, str] = {
    "instructions": "database",
    "manifests": "manifest store",
    "pins": "pin store",
}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_REGISTRY: dict[StoreKind, dict[str, Factory | str]] = {kind: {} for kind in _KINDS}
_EXTRAS = {"asyncpg": "postgres"}
"""Driver module -> the harness extra that installs it (for the message when it is missing)."""


def url_scheme(location: str | os.PathLike[str]) -> str | None:
    """The lower-cased scheme of a ``scheme://`` URL, or ``None`` for a path."""
    if not isinstance(location, str):
        return None
    found = _SCHEME.match(location)
    return found.group(1).lower() if found else None


def is_url(location: str | os.PathLike[str]) -> bool:
    """True for a ``scheme://`` URL; anything else is a path (an SQLite file)."""
    return url_scheme(location) is not None


def fits_text(value: str) -> bool:
    """True when ``value`` can be sent to a database as UTF-8 text (no lone surrogates, which
    is what bytes that are not UTF-8 become on a command line or in a file name)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def register_store(scheme: str, factory: Factory | str, *, kind: StoreKind) -> None:
    """Open locations ``scheme://...`` of store ``kind`` with ``factory`` (a callable, or a
    ``"module:attribute"`` reference imported on first use). A later registration of the same
    scheme and kind replaces the earlier one."""
    if kind not in _REGISTRY:
        raise StoreSchemeError(f"store kind {kind!r} is unknown: use one of {', '.join(_KINDS)}")
    if _SCHEME.fullmatch(f"{scheme}://") is None:
        raise StoreSchemeError(f"{scheme!r} is not a URL scheme (letters, digits, + - .)")
    _REGISTRY[kind][scheme.lower()] = factory


def store_factory(scheme: str, *, kind: StoreKind, error: Callable[[str], Exception]) -> Factory:
    """The factory registered for ``scheme`` and ``kind``; ``error(message)`` is raised (the
    kind's own error type) for an unknown scheme or a backend that is not installed."""
    known = _REGISTRY[kind]
    factory = known.get(scheme.lower())
    if factory is None:
        listed = ", ".join(f"{name}://" for name in sorted(known))
        urls = f" or a URL starting with one of {listed}" if listed else ""
        raise error(
            f"{_NOUNS[kind]} URL scheme {scheme!r} is not supported: give the path of an "
            f"SQLite file{urls}"
        )
    if callable(factory):
        return factory
    return _import(scheme, factory, error)


def _import(scheme: str, reference: str, error: Callable[[str], Exception]) -> Factory:
    module_name, _, attribute = reference.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or module_name
        if missing == module_name:
            what = f"its module {module_name} is missing from this installation"
        else:
            extra = _EXTRAS.get(missing.partition(".")[0])
            install = f"pip install 'harness[{extra}]'" if extra else f"pip install {missing}"
            what = f"the {missing!r} package it needs is not installed ({install})"
        raise error(f"{scheme}:// stores are not available: {what}; or use an SQLite path") from exc
    for name in attribute.split("."):
        value = getattr(value, name)
    factory: Factory = value
    return factory


class StoreSchemeError(HarnessError, ValueError):
    """``register_store`` was given an unknown store kind or something that is no URL scheme."""
