"""How much of the experiment its spec describes a results database holds.

A database written by ``mirrorcraft run`` stores the spec it ran under. Tables computed
from a run cut short (``--limit``, an interrupted run, episodes still faulting) look like
a finished experiment's; ``unfinished`` says how many of the spec's episodes are missing.
An accumulation run keeps two databases under one spec: its training episodes
(``train.sqlite``) and its evaluation episodes (``results.sqlite``); each is measured
against the episodes of its own phase.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mirrorcraft.analysis.loading import stored_spec
from mirrorcraft.runner.runlock import describe, live_holder
from mirrorcraft.runner.spec import SpecError, expand, parse_spec

TRAIN_DB = "train.sqlite"
"""The name an accumulation run gives its training database."""


def unfinished(path: str | Path, stored: Iterable[str]) -> tuple[int, int] | None:
    """(episodes of the stored spec not among ``stored`` episode ids, episodes the spec
    plans), or None when the results name no spec this version can read (JSONL, a spec of
    another schema, an accumulation spec whose user agent cannot be imported here)."""
    doc = stored_spec(path)
    if doc is None:
        return None
    held = set(stored)
    if doc.get("kind") == "accumulation":
        planned = _accumulation_phase(doc, held, Path(path).name == TRAIN_DB)
        if planned is None:
            return None
    else:
        try:
            planned = {c.episode_id for c in expand(parse_spec(doc, str(path)))}
        except (SpecError, ValueError):  # another schema's spec
            return None
    return len(planned - held), len(planned)


def training_database(path: str | Path) -> Path | None:
    """The training database beside an accumulation run's evaluation database (the
    ``train.sqlite`` in its folder), or None: for other results, for the training database
    itself, or when there is none."""
    p = Path(path)
    doc = stored_spec(p)
    if doc is None or doc.get("kind") != "accumulation" or p.name == TRAIN_DB:
        return None
    train = p.parent / TRAIN_DB
    return train if train.is_file() else None


def _accumulation_phase(doc: dict[str, Any], held: set[str], named_train: bool) -> set[str] | None:
    """The episode ids of the phase these results hold: training when they hold training
    episodes (or, holding none of either, when the file has the training database's name)."""
    from mirrorcraft.runner.accumulation import AccumulationSpec, plan_streams

    try:
        train, evals = plan_streams(AccumulationSpec.model_validate(doc))
    except (ValidationError, ValueError):
        return None
    train_ids = {c.episode_id for s in train for c in s.conditions}
    eval_ids = {c.episode_id for s in evals for c in s.conditions}
    if held & train_ids or (named_train and not held & eval_ids):
        return train_ids
    return eval_ids


def note_unfinished(summary: dict[str, Any], path: str | Path, stored: Iterable[str]) -> None:
    """Set ``summary["episodes"]["unfinished"]``: ``{"missing", "planned"}``, or None where
    ``unfinished`` cannot tell (``analyze --json``, a report's ``summary.json`` and a run's
    own report all carry it the same way)."""
    left = unfinished(path, stored)
    summary["episodes"]["unfinished"] = (
        None if left is None else {"missing": left[0], "planned": left[1]}
    )


def writing_run(path: str | Path) -> str | None:
    """A line saying that a run is writing the results database now (its folder's
    ``run.lock`` names a live process on this host), else None (also for JSONL)."""
    if stored_spec(path) is None:
        return None
    holder = live_holder(Path(path).parent)
    if holder is None:
        return None
    return (
        f"a run is still writing {Path(path).parent} ({describe(holder)}): these results "
        "hold only the episodes finished so far"
    )
