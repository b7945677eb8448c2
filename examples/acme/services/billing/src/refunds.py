"""Partial refunds (illustrative source for the example workspace)."""


def refundable(captured_minor: int, refunded_minor: int) -> int:
    """Minor units that may still be refunded: never more than was captured."""
    return max(0, captured_minor - refunded_minor)
