"""Versions of a grid spec in one results folder: which stored episodes still count.

A spec edited between runs of one folder gets another hash (``ExperimentSpec.hash``), but
most edits leave what a stored episode measured as it was: prose (``description``), the
horizon ``checkpoints`` the analysis reads, and every edit that only adds or removes
conditions (more repetitions, worlds, rule sets, tasks, agents or models). An episode's
condition is its id (``EpisodeCondition.episode_id``: world, rules, task, agent, model,
disclosure, budget, repetition, seed, call budget, the agent's options); what the spec
sets for it beyond its id is its *terms* (``episode_terms``: the experiment's name, the
backend, the configuration behind the agent's label, the model's settings). The rule
set, world, body, task and user-agent fingerprints are checked on each record as before
(``runner.guards``).

A stored record of another spec version is, for the spec now (``Lineage.verdict``):

* ``SAME``: its id is one of the spec's episodes and the version it ran under (kept in
  ``meta`` under ``VERSIONS_KEY``) gave it the same terms: it counts as this spec's
  episode (the run stamps the new hash on it, so the analysis pools it);
* ``CHANGED``: its id is one of the spec's episodes but its terms differ or its version
  is unknown, or the spec that ran last had this episode and the spec now has it under
  another id (a budget, the seed, the call budget or the agent's options edited): the
  run refuses, as for any change of what an episode measures;
* ``REMOVED``: its condition is no longer in the spec (or was left behind by an earlier
  ``--allow-changed-spec``): kept in the database, not run, left out of the analysis.

An accumulation spec is judged whole (``ProseOnly``): a stream's order, its snapshots and
what later episodes see depend on all of it, so only an edit of its ``description`` keeps
the stored episodes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from mirrorcraft.runner.records import EpisodeRecord
from mirrorcraft.runner.spec import (
    TRANSPORT_SETTINGS,
    EpisodeCondition,
    ExperimentSpec,
    identity_doc,
    runner_options,
)

VERSIONS_KEY = "spec_versions"
"""``meta`` key: {spec hash: the spec as stored (``public_dump``)} of each version that ran."""

REACH = ("base_url", "api_key_env")
"""A model entry's fields that say how the model is reached, never what it answers: editing
them (an endpoint that moved, a key kept in another variable) keeps the stored episodes."""

SAME = "same"
CHANGED = "changed"
REMOVED = "removed"

Slot = tuple[str, str, str, str, str, str, int]


class Judge(Protocol):
    def verdict(self, r: EpisodeRecord) -> str:
        """``SAME``, ``CHANGED`` or ``REMOVED`` for a record of another spec version."""
        ...


def slot(c: EpisodeCondition | EpisodeRecord) -> Slot:
    """An episode's place in the grid, without what it is measured under (budget, seed...)."""
    return (c.world, c.rules, c.task, c.agent, c.model, c.disclosure, c.repetition)


def stored_versions(meta: Callable[[str], Any]) -> dict[str, dict[str, Any]]:
    """The spec versions a folder's ``meta`` knows, by hash (a folder written before they
    were kept knows the one that ran last)."""
    out: dict[str, dict[str, Any]] = {}
    kept = meta(VERSIONS_KEY)
    if isinstance(kept, dict):
        out.update({h: d for h, d in kept.items() if isinstance(h, str) and isinstance(d, dict)})
    last, doc = meta("spec_hash"), meta("spec")
    if isinstance(last, str) and last and isinstance(doc, dict):
        out.setdefault(last, doc)
    return out


def episode_terms(doc: dict[str, Any], agent: str, model: str) -> str | None:
    """What a stored spec sets for episodes of ``agent`` (its id) and ``model`` beyond their
    condition, as comparable text; None when the spec names neither."""
    entry = None
    for a in doc.get("agents") or []:
        e = {"name": a, "options": {}, "label": None} if isinstance(a, str) else a
        if isinstance(e, dict) and (e.get("label") or e.get("name")) == agent:
            entry = e
    settings = next(
        (m for m in doc.get("models") or [] if isinstance(m, dict) and m.get("name") == model),
        None,
    )
    if entry is None or settings is None:
        return None
    settings = {k: v for k, v in settings.items() if k not in REACH}
    if isinstance(settings.get("client"), dict):
        client = settings["client"]
        settings["client"] = {k: v for k, v in client.items() if k not in TRANSPORT_SETTINGS}
    options = entry.get("options")
    terms = {
        "name": doc.get("name"),
        "backend": doc.get("backend", "sim"),
        "agent": entry.get("name"),
        "options": runner_options(options) if isinstance(options, dict) else options,
        "model": settings,
    }
    return json.dumps(terms, sort_keys=True)


@dataclass(frozen=True)
class Lineage:
    """The spec now, against which stored records of other versions are judged."""

    episodes: frozenset[str]
    slots: frozenset[Slot]
    terms: dict[tuple[str, str], str | None]
    versions: dict[str, dict[str, Any]]
    last: str
    """The hash of the spec that ran last in the folder ("" for a new folder)."""

    @classmethod
    def of(
        cls,
        spec: ExperimentSpec,
        conditions: Iterable[EpisodeCondition],
        meta: Callable[[str], Any],
    ) -> Lineage:
        conditions = list(conditions)
        doc = spec.public_dump()
        pairs = {(c.agent, c.model) for c in conditions}
        last = meta("spec_hash")
        return cls(
            frozenset(c.episode_id for c in conditions),
            frozenset(slot(c) for c in conditions),
            {(a, m): episode_terms(doc, a, m) for a, m in pairs},
            stored_versions(meta),
            last if isinstance(last, str) else "",
        )

    def verdict(self, r: EpisodeRecord) -> str:
        """``SAME``, ``CHANGED`` or ``REMOVED`` for a record of another spec version."""
        if r.episode_id not in self.episodes:
            moved = slot(r) in self.slots and r.spec_hash == self.last
            return CHANGED if moved else REMOVED
        old = self.versions.get(r.spec_hash)
        now = self.terms.get((r.agent, r.model))
        if old is None or now is None or episode_terms(old, r.agent, r.model) != now:
            return CHANGED
        return SAME


def prose_free(doc: dict[str, Any]) -> str:
    """A stored spec as comparable text, without what never changes an episode: its
    ``description``, ``execution``, the model client's transport settings, how each model
    is reached (``REACH``)."""
    rest = identity_doc(
        json.loads(
            json.dumps({k: v for k, v in doc.items() if k not in ("description", "execution")})
        )
    )
    for m in rest.get("models") or []:
        if isinstance(m, dict):
            for k in REACH:
                m.pop(k, None)
    return json.dumps(rest, sort_keys=True)


@dataclass(frozen=True)
class ProseOnly:
    """An accumulation spec now: a record of another version counts only when that version
    differs from it in prose alone (``prose_free``)."""

    now: str
    versions: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, doc: dict[str, Any], meta: Callable[[str], Any]) -> ProseOnly:
        return cls(prose_free(doc), stored_versions(meta))

    def verdict(self, r: EpisodeRecord) -> str:
        old = self.versions.get(r.spec_hash)
        return SAME if old is not None and prose_free(old) == self.now else CHANGED


def with_version(meta: Callable[[str], Any], spec_hash: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The folder's ``VERSIONS_KEY`` value with the spec that runs now added."""
    return {**stored_versions(meta), spec_hash: doc}
