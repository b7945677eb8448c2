"""The version of harness: the one place it is written (``pyproject.toml`` reads it here).

Read it as ``harness.__version__`` (or ``harness --version``)::

    import harness

    print(harness.__version__)   # e.g. 0.1.0

Design note: a module of its own, one assignment and no imports, because the build backend
(hatch, ``[tool.hatch.version]``) reads the version from this file without importing harness.
"""

__version__ = "0.1.0"
