"""Passwords kept out of messages: a store's URL is shown redacted, driver text is scrubbed.

Every store that connects to a server names it in its errors and logs; the password can reach
a message from two places, the URL (which is printed) and the text of a driver exception
(which is quoted). ``redact`` covers the first and ``scrub`` the second::

    from harness.stores._secrets import passwords_of, redact, scrub

    url = "postgresql://app:s3cret@db:5432/engine"
    redact(url)                                         # 'postgresql://app:***@db:5432/engine'
    scrub("login failed for s3cret", passwords_of(url)) # 'login failed for ***'
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

__all__ = ["cause", "passwords_of", "redact", "scrub"]

_HIDDEN = "***"
_SECRET_PARAMS = frozenset({"password", "passfile", "sslpassword"})


def redact(url: str) -> str:
    """``url`` with the password of its user info and of its query replaced by ``***``.

    A URL without a password is returned as written. Never raises: text that does not even
    split as a URL is replaced whole (it might be nothing but a password in the wrong place).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"<unparsable URL, {len(url)} characters>"
    userinfo, at, hosts = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{_HIDDEN}@{hosts}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(key in _SECRET_PARAMS for key, _ in pairs):
        query = urlencode(
            [(key, _HIDDEN if key in _SECRET_PARAMS else value) for key, value in pairs],
            safe="/*",
        )
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    shown = f"{parts.scheme}://{netloc}{parts.path}"
    return shown + (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")


def passwords_of(url: str) -> tuple[str, ...]:
    """Every spelling of a password in ``url`` (as written and percent-decoded)."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        userinfo, at, _ = parts.netloc.rpartition("@")
        if at and ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
        found.extend(
            value
            for key, value in parse_qsl(parts.query, keep_blank_values=True)
            if key in _SECRET_PARAMS
        )
    except ValueError:
        found.append(url)
    spellings = {spelling for secret in found for spelling in (secret, unquote(secret))}
    return tuple(sorted((s for s in spellings if s), key=len, reverse=True))


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, _HIDDEN)
    return text


def cause(exc: BaseException, secrets: tuple[str, ...]) -> BaseException | None:
    """``exc`` to chain as the cause of the error raised for it, or ``None`` if its text holds
    a secret (a traceback prints the cause's message too)."""
    text = f"{exc!s} {exc!r}"
    return None if any(secret in text for secret in secrets) else exc
