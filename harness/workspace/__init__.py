"""Workspace file safety: what may be read from a workspace, and how (ws owns this package)."""
