"""The seam every store shares: where a location points, and which backend opens it.

Instruction stores, manifest stores and pin stores each open a *location*: a path is the
embedded SQLite file (nothing to install), a ``scheme://`` URL is opened by the backend
registered for that scheme and kind (``postgresql://`` and ``postgres://`` ship, behind the
``harness[postgres]`` extra)::

    from harness.stores import is_url, register_store

    is_url("postgresql://app@db/engine")     # True
    is_url("records/manifests.db")           # False: an SQLite path
    register_store("mysql", "my_package.store:open_backend", kind="manifests")

``harness.stores._secrets`` keeps passwords out of messages; ``harness.stores._postgres`` (which
imports asyncpg) is what the PostgreSQL backends of every kind share.
"""

from harness.stores._registry import StoreKind as StoreKind
from harness.stores._registry import StoreSchemeError as StoreSchemeError
from harness.stores._registry import fits_text as fits_text
from harness.stores._registry import is_url as is_url
from harness.stores._registry import register_store as register_store
from harness.stores._registry import store_factory as store_factory
from harness.stores._registry import url_scheme as url_scheme

__all__ = [
    "StoreKind",
    "StoreSchemeError",
    "fits_text",
    "is_url",
    "register_store",
    "store_factory",
    "url_scheme",
]
