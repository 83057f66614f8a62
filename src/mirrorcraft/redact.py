"""Credentials in endpoint URLs, kept out of everything we store or print.

A key can ride in a URL two ways: user-info (``https://user:KEY@host/v1``) and
query parameters (``?api_key=KEY``). ``redact_url`` replaces both with ``***``
and leaves every other URL exactly as it was (so a spec hash over a URL without
secrets does not change); ``redact_text`` does the same for every URL inside a
message.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
_SECRET_NAME = re.compile(r"key|token|secret|pass|auth|sig|credential|session", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")


def _secret_param(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_url(url: str) -> str:
    """``url`` with user-info and secret-looking query values masked (unchanged if none)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _fallback(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_secret_param(k) for k, _ in pairs):
            query = urlencode([(k, MASK if _secret_param(k) else v) for k, v in pairs], safe="*")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _fallback(url: str) -> str:
    """For a URL ``urlsplit`` refuses: mask whatever sits between ``//`` and ``@``."""
    return re.sub(r"(://)[^/@\s]*@", rf"\g<1>{MASK}@", url)


def redact_text(text: str) -> str:
    """``text`` with every URL in it passed through ``redact_url``."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group(0)), text)
