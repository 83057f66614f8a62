"""How much of the experiment its spec describes a results database holds.

A database written by ``mirrorcraft run`` stores the spec it ran under. Tables computed
from a run cut short (``--limit``, an interrupted run, episodes still faulting) look like
a finished experiment's; ``unfinished`` says how many of the spec's episodes are missing.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mirrorcraft.analysis.loading import stored_spec
from mirrorcraft.runner.spec import SpecError, expand, parse_spec


def unfinished(path: str | Path, stored: Iterable[str]) -> tuple[int, int] | None:
    """(episodes of the stored spec not among ``stored`` episode ids, episodes the spec
    plans), or None when the results name no grid spec this version can read (JSONL, an
    accumulation run, a spec of another schema)."""
    doc = stored_spec(path)
    if doc is None:
        return None
    try:
        planned = {c.episode_id for c in expand(parse_spec(doc, str(path)))}
    except (SpecError, ValueError):  # an accumulation spec, or another schema's
        return None
    return len(planned - set(stored)), len(planned)


def note_unfinished(summary: dict[str, Any], path: str | Path, stored: Iterable[str]) -> None:
    """Set ``summary["episodes"]["unfinished"]``: ``{"missing", "planned"}``, or None where
    ``unfinished`` cannot tell (``analyze --json``, a report's ``summary.json`` and a run's
    own report all carry it the same way)."""
    left = unfinished(path, stored)
    summary["episodes"]["unfinished"] = (
        None if left is None else {"missing": left[0], "planned": left[1]}
    )
