"""Resource ids: vanilla names are kept bare (``oak_log``), other namespaces keep theirs."""

from __future__ import annotations

import re

_ID_RE = re.compile(r"^(?:[a-z0-9_.-]+:)?[a-z0-9_./-]+$")
MAX_ID_LENGTH = 128


def normalize_id(raw: str) -> str:
    """``minecraft:oak_log`` -> ``oak_log``; ``mypack:thing`` stays as it is.

    Raises ValueError for anything that is not a well-formed resource id.
    """
    if not isinstance(raw, str):
        raise ValueError(f"expected an id string, got {type(raw).__name__}")
    text = raw.strip().lower()
    if not text or len(text) > MAX_ID_LENGTH or not _ID_RE.match(text):
        shown = raw if len(raw) <= 40 else raw[:40] + "..."
        raise ValueError(f"not a valid resource id: {shown!r}")
    if text.startswith("minecraft:"):
        return text[len("minecraft:") :]
    return text


def full_id(name: str) -> str:
    """``oak_log`` -> ``minecraft:oak_log`` (ids with a namespace stay as they are)."""
    return name if ":" in name else f"minecraft:{name}"


def is_valid_id(raw: object) -> bool:
    if not isinstance(raw, str):
        return False
    try:
        normalize_id(raw)
    except ValueError:
        return False
    return True
