"""The agent roster: a static map from agent slug to one identity line.

::

    from harness._agents import Roster

    roster = Roster({"reviewer": "You are the reviewer: check changes against the rules."})
    print(roster.identity("reviewer"))      # UnknownAgent (a KeyError) for any other slug
    bigger = roster.extend({"triage": "You are triage: label and route new issues."})
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

from harness.errors import ConfigError, HarnessError

__all__ = ["Roster", "UnknownAgent", "validate_entries"]

_SLUG = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


class UnknownAgent(HarnessError, KeyError):
    """An agent slug that is not in the roster; the message lists the known slugs."""

    def __init__(self, slug: str, known: tuple[str, ...]) -> None:
        self.slug = slug
        self.known = known
        listed = ", ".join(known) if known else "(the roster is empty)"
        self.message = (
            f"unknown agent {slug!r}; known agents: {listed}. "
            "Add it to the roster (config/agents.toml or HarnessConfig.agents) to use it."
        )
        super().__init__(self.message)

    def __str__(self) -> str:
        # KeyError.__str__ would repr() the message and wrap it in quotes.
        return self.message


def validate_entries(entries: Mapping[str, object]) -> dict[str, str]:
    """Check slugs and identity lines, returning clean ``{slug: line}``.

    Raises ``ConfigError`` (a ``ValueError``) naming the offending slug: a roster is
    configuration, and a bad entry should stop the program at load time rather than produce
    a strange prompt later.
    """
    clean: dict[str, str] = {}
    for slug, line in entries.items():
        if not isinstance(slug, str) or _SLUG.fullmatch(slug) is None:
            raise ConfigError(
                f"agent slug {slug!r} is invalid: use 1-64 lower-case letters, digits, '-' "
                "or '_', starting with a letter or digit"
            )
        if not isinstance(line, str):
            raise ConfigError(f"agent {slug!r}: the identity must be a string, not {line!r}")
        text = line.strip()
        if not text:
            raise ConfigError(f"agent {slug!r}: the identity line is empty")
        if "\n" in text or "\r" in text:
            raise ConfigError(f"agent {slug!r}: the identity must be ONE line (found a newline)")
        clean[slug] = text
    return clean


class Roster(Mapping[str, str]):
    """Immutable ``slug -> identity line`` map, sorted by slug for stable listings."""

    __slots__ = ("_entries",)

    def __init__(self, entries: Mapping[str, str] | None = None) -> None:
        clean = validate_entries(entries or {})
        self._entries: dict[str, str] = dict(sorted(clean.items()))

    def __getitem__(self, slug: str) -> str:
        try:
            return self._entries[slug]
        except KeyError:
            raise UnknownAgent(slug, self.slugs) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Roster({list(self._entries)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Roster):
            return self._entries == other._entries
        if isinstance(other, Mapping):  # a Mapping equals any mapping with the same items
            return self._entries == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:  # consistent: only other Rosters are both equal and hashable
        return hash(tuple(self._entries.items()))

    @property
    def slugs(self) -> tuple[str, ...]:
        """Known slugs, sorted."""
        return tuple(self._entries)

    def identity(self, slug: str) -> str:
        """The identity line for ``slug``; raises ``UnknownAgent`` listing the known slugs."""
        return self[slug]

    def extend(self, entries: Mapping[str, str]) -> Roster:
        """A new roster with ``entries`` added; an existing slug is replaced."""
        return Roster({**self._entries, **entries})
