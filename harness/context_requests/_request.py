"""What a run asks of its context: the decision it prepares and the evidence that decision needs.

::

    from harness.context_requests import ContextRequest, Requirement

    request = ContextRequest(
        "raise the PaymentService timeout to 10 s",
        action="change_production_config",
        requirements=[Requirement("effective_config", claim="timeout.production")],
        principal=frozenset({"repo:read"}),
        authority={"timeout.production": ["runtime_control_plane", "incident", "source_code"]},
    )
    assert request.rank("timeout.production", "incident") == 1

Both are frozen values, checked on construction, so a bad request fails where it is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from harness.errors import ArgumentError, ArgumentTypeError

__all__ = ["ContextRequest", "Requirement"]


def _text(value: object, what: str, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        raise ArgumentTypeError(f"{what} must be a non-empty str, got {value!r}")


@dataclass(frozen=True, slots=True)
class Requirement:
    """Evidence the decision needs: a unit of ``kind`` (and, when given, of ``claim``).

    ``required=False`` makes it informative only: its status is reported, it never blocks.
    """

    kind: str
    claim: str | None = field(default=None, kw_only=True)
    required: bool = field(default=True, kw_only=True)

    def __post_init__(self) -> None:
        _text(self.kind, "Requirement.kind")
        _text(self.claim, "Requirement.claim", optional=True)
        if not isinstance(self.required, bool):
            raise ArgumentTypeError(f"Requirement.required must be a bool, got {self.required!r}")

    def label(self) -> str:
        """``kind`` or ``kind[claim]``: how reports name the requirement."""
        return self.kind if self.claim is None else f"{self.kind}[{self.claim}]"


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """The task, the action it prepares, the evidence it requires, the permissions the run
    holds (``principal``) and, per claim type, its authority classes from highest to lowest."""

    task: str
    action: str | None = field(default=None, kw_only=True)
    # Declared as the caller may pass them (any sequence, any mapping of sequences); stored
    # as tuples behind a read-only mapping.
    requirements: Sequence[Requirement] = field(default=(), kw_only=True)
    principal: frozenset[str] = field(default=frozenset(), kw_only=True)
    authority: Mapping[str, Sequence[str]] = field(
        default_factory=lambda: MappingProxyType({}), kw_only=True, compare=False, hash=False
    )

    def __post_init__(self) -> None:
        _text(self.task, "ContextRequest.task")
        _text(self.action, "ContextRequest.action", optional=True)
        requirements = _requirements(self.requirements)
        object.__setattr__(self, "requirements", requirements)
        principal = self.principal
        if not isinstance(principal, frozenset | set) or not all(
            isinstance(p, str) for p in principal
        ):
            raise ArgumentTypeError(
                f"ContextRequest.principal must be a frozenset of permission names, got "
                f"{principal!r}"
            )
        object.__setattr__(self, "principal", frozenset(principal))
        object.__setattr__(self, "authority", _authority(self.authority))

    def permits(self, requires: frozenset[str]) -> bool:
        """Whether the run's principal holds every permission in ``requires``."""
        return requires <= self.principal

    def rank(self, claim: str | None, authority: str | None) -> int:
        """``authority``'s place for ``claim`` (0 is highest); a class not listed, or a unit
        without one, ranks below every listed class."""
        order = self.authority.get(claim, ()) if claim is not None else ()
        if authority is not None and authority in order:
            return order.index(authority)
        return len(order)

    def to_dict(self) -> dict[str, object]:
        """The request as JSON types (what a manifest records)."""
        return {
            "task": self.task,
            "action": self.action,
            "requirements": [
                {"kind": r.kind, "claim": r.claim, "required": r.required}
                for r in self.requirements
            ],
            "principal": sorted(self.principal),
            "authority": {claim: list(order) for claim, order in sorted(self.authority.items())},
        }


def _requirements(value: object) -> tuple[Requirement, ...]:
    if isinstance(value, str | Requirement) or not isinstance(value, Sequence):
        raise ArgumentTypeError(
            f"ContextRequest.requirements must be a sequence of Requirement, got {value!r}"
        )
    for item in value:
        if not isinstance(item, Requirement):
            raise ArgumentTypeError(
                f"ContextRequest.requirements: expected Requirement items, got {item!r}"
            )
    return tuple(value)


def _authority(value: object) -> Mapping[str, tuple[str, ...]]:
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(
            f"ContextRequest.authority must map a claim to its authority classes, highest "
            f"first, got {value!r}"
        )
    checked: dict[str, tuple[str, ...]] = {}
    for claim, order in value.items():
        _text(claim, "ContextRequest.authority key (a claim type)")
        if isinstance(order, str) or not isinstance(order, Sequence):
            raise ArgumentTypeError(
                f"ContextRequest.authority[{claim!r}] must be a sequence of authority classes, "
                f"got {order!r}"
            )
        for name in order:
            _text(name, f"ContextRequest.authority[{claim!r}] item")
        if len(set(order)) != len(order):
            raise ArgumentError(
                f"ContextRequest.authority[{claim!r}] lists an authority class twice: {order!r}"
            )
        checked[claim] = tuple(order)
    return MappingProxyType(checked)
