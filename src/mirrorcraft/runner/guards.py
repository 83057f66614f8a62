"""Resume guards: a results folder never mixes episodes of different specs, rules or worlds.

Before a run continues in a folder that already holds evaluated episodes, each
stored record is compared with what the run would produce now: the spec hash
(``ExperimentSpec.hash``: everything that changes results; not the ``execution``
block nor the model client's transport settings; for a grid, a record of another
version of the spec that measures what the spec now asks of its episode counts as
this spec's, and one of a condition the spec no longer lists is kept and left out:
``runner.versions``), the fingerprint of each rule
set it names (a suite manifest or datapack edited in place), the vanilla rules
(another software version), on the embedded simulator each world (a biome
spec file edited in place), the body (the simulator's behaviour version, the body
settings and the skill definitions: ``body.config.body_fingerprint``), each task's
definition (its milestones and their values), each LLM configuration's prompts (the
template files it names and how prompts are built from them: its ``template_hashes``), and
for a user's own agent where it came from (its import path, its package's version, the hash of its options: another
version of the agent's package installed since). Records written before a
fingerprint was stamped carry none and are not compared on it. A difference refuses the run with one line, unless
the user allows it: then the differing episodes of the current spec are run
again (the old records move to the ``superseded`` table) and the analysis reads
only episodes of the spec that ran last (``analysis.loading``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from mirrorcraft.runner.records import EpisodeRecord
from mirrorcraft.runner.versions import CHANGED, REMOVED, SAME, Judge


class ChangedSpecError(Exception):
    """The folder's episodes ran under another spec, rule set or world; the message says which."""


@dataclass(frozen=True)
class Fingerprints:
    """What a run would stamp on its episodes now."""

    spec_hash: str
    rules: dict[str, str]
    """Rule-set name (as the spec lists it) -> fingerprint."""
    vanilla: str
    worlds: dict[str, str] = field(default_factory=dict)
    """World id -> fingerprint (only worlds to compare; empty on real servers)."""
    agents: dict[str, dict[str, str]] = field(default_factory=dict)
    """Agent id -> its origin now (``EpisodeRecord.agent_origin``; empty for packaged agents)."""
    body: str = ""
    """The body's fingerprint now, for the backend the run uses (empty: not compared)."""
    tasks: dict[str, str] = field(default_factory=dict)
    """Task id -> its definition's fingerprint now (tasks that no longer exist are absent)."""
    prompts: dict[str, str] = field(default_factory=dict)
    """Prompt template name -> its digest now, and ``prompt_version`` -> how prompts are built
    now (``agents.llm.templates``); empty: not compared."""
    lineage: Judge | None = None
    """The spec now, judging records of other spec versions (``runner.versions``); None:
    any other spec hash is a change."""

    def verdict(self, r: EpisodeRecord) -> str:
        """``SAME`` for a record stamped with this spec hash (or none), else the lineage's."""
        if not r.spec_hash or r.spec_hash == self.spec_hash:
            return SAME
        return CHANGED if self.lineage is None else self.lineage.verdict(r)


@dataclass
class Mismatch:
    what: str  # "spec" | "rules" | "vanilla" | "world" | "body" | "task" | "agent" | "prompts"
    name: str
    stored: str
    now: str
    episodes: list[str] = field(default_factory=list)


def compare(records: Iterable[EpisodeRecord], now: Fingerprints) -> list[Mismatch]:
    """Every way stored episodes differ from ``now``, each with the episodes concerned."""
    found: dict[tuple[str, str, str], Mismatch] = {}

    def add(what: str, name: str, stored: str, current: str, episode: str) -> None:
        key = (what, name, stored)
        found.setdefault(key, Mismatch(what, name, stored, current)).episodes.append(episode)

    for r in records:
        verdict = now.verdict(r)
        if verdict == REMOVED:
            continue  # a condition the spec no longer lists: kept, left out of the analysis
        if verdict == CHANGED:
            add("spec", "", r.spec_hash, now.spec_hash, r.episode_id)
            continue
        current = now.rules.get(r.rules)
        if current is not None and r.ruleset_fingerprint and r.ruleset_fingerprint != current:
            add("rules", r.rules, r.ruleset_fingerprint, current, r.episode_id)
        elif r.vanilla_fingerprint and r.vanilla_fingerprint != now.vanilla:
            add("vanilla", "vanilla", r.vanilla_fingerprint, now.vanilla, r.episode_id)
        elif (world := now.worlds.get(r.world)) and r.world_fingerprint != world:
            add("world", r.world, r.world_fingerprint, world, r.episode_id)
        elif r.body_fingerprint and now.body and r.body_fingerprint != now.body:
            add("body", "", r.body_fingerprint, now.body, r.episode_id)
        elif r.task_fingerprint and (task := now.tasks.get(r.task)) and r.task_fingerprint != task:
            add("task", r.task, r.task_fingerprint, task, r.episode_id)
        elif (changed := agent_change(r.agent_origin, now.agents.get(r.agent))) is not None:
            add("agent", r.agent, changed[0], changed[1], r.episode_id)
        elif (changed := prompt_change(r.prompt_hashes(), now.prompts)) is not None:
            add("prompts", r.agent, changed[0], changed[1], r.episode_id)
    return list(found.values())


def prompt_change(stored: dict[str, str], now: dict[str, str]) -> tuple[str, str] | None:
    """(stored, now) descriptions of the template digests and prompt version a record names
    that differ now (None when all agree; names only one side knows, such as a user agent's
    own templates or a record written before the version was kept, are not compared)."""
    differ = sorted(k for k in stored.keys() & now.keys() if stored[k] != now[k])
    if not differ:
        return None
    return (
        ", ".join(f"{k} {stored[k]}" for k in differ),
        ", ".join(f"{k} {now[k]}" for k in differ),
    )


ORIGIN_KEYS = ("ref", "version", "options_hash")


def agent_change(stored: dict[str, str], now: dict[str, str] | None) -> tuple[str, str] | None:
    """(stored, now) descriptions when a user agent's import path, version or options differ
    (None when they agree, or when either side records no origin). A remote agent's version
    is only known once it answers, so only its URL and options are compared."""
    if not stored or now is None or not now:
        return None
    keys = ORIGIN_KEYS if now.get("kind") != "remote" else ("ref", "options_hash")
    if all(stored.get(k, "") == now.get(k, "") for k in keys):
        return None

    def describe(o: dict[str, str]) -> str:
        return " ".join(f"{k} {o[k]}" for k in keys if o.get(k)) or "nothing recorded"

    return describe(stored), describe(now)


NO_FLAG = (
    "use another --out (--allow-changed-spec does not apply to accumulation runs: their "
    "knowledge stores cannot mix two specs)"
)


def explain(m: Mismatch, folder: Path, *, allowable: bool = True) -> str:
    """One line for a mismatch; without ``allowable`` (accumulation runs) it offers only
    another ``--out``, as ``--allow-changed-spec`` is refused there."""
    n = len(m.episodes)
    ways = "use another --out, or pass --allow-changed-spec" if allowable else NO_FLAG
    if m.what == "spec":
        beside = (
            " to run the new spec beside them (analysis then reads only the new spec's episodes)"
            if allowable
            else ""
        )
        return (
            f"{folder} holds {n} episode(s) of another version of this spec (hash {m.stored}, "
            f"now {m.now}): a setting that changes what they measure was edited (a budget, "
            f"the seed, the call budget, a model's settings, an agent's options or the "
            f"configuration behind its label, the backend, the experiment's name...); "
            f"{ways}{beside}"
        )
    rerun = "to rerun them (the old records are kept in the superseded table)" if allowable else ""
    if m.what == "rules":
        return (
            f"rule set {m.name!r} changed since its {n} stored episode(s) ran (fingerprint "
            f"{m.stored}, now {m.now}): restore it, {ways} {rerun}"
        )
    if m.what == "agent":
        return (
            f"agent {m.name!r} changed since its {n} stored episode(s) ran (then: {m.stored}; "
            f"now: {m.now}): install the version that ran, {ways} {rerun}"
        )
    if m.what == "prompts":
        return (
            f"agent {m.name!r} was prompted differently when its {n} stored episode(s) ran "
            f"(then: {m.stored}; now: {m.now}): another software version changed its prompt "
            f"templates or how prompts are built; install the version that ran, {ways} {rerun}"
        )
    if m.what == "body":
        return (
            f"the body differs from that of {n} stored episode(s) (fingerprint {m.stored}, now "
            f"{m.now}): another simulator version, or body.yaml or skills.yaml edited (another "
            f"software version?); install the version that ran, {ways} {rerun}"
        )
    if m.what == "task":
        return (
            f"task {m.name!r} is defined differently from when its {n} stored episode(s) ran "
            f"(fingerprint {m.stored}, now {m.now}: its milestones or their values changed); "
            f"restore it, {ways} {rerun}"
        )
    if m.what == "vanilla":
        return (
            f"the vanilla rules differ from those of {n} stored episode(s) (fingerprint "
            f"{m.stored}, now {m.now}; another software version?): {ways} {rerun}"
        )
    return (
        f"world {m.name!r} now generates a different world (fingerprint {m.now}; the stored "
        f"episodes have {m.stored}): the spec file changed since they ran; restore it, "
        f"{ways} {rerun}"
    )


def carried(records: Iterable[EpisodeRecord], now: Fingerprints, stale: set[str]) -> list[str]:
    """Stored episodes of another spec version that measure what the spec now asks of them
    (``runner.versions.SAME``) and are not stale: they count as the spec's episodes."""
    return [
        r.episode_id
        for r in records
        if r.spec_hash
        and r.spec_hash != now.spec_hash
        and r.episode_id not in stale
        and now.verdict(r) == SAME
    ]


def removed(records: Iterable[EpisodeRecord], now: Fingerprints) -> int:
    """Stored episodes of conditions the spec no longer lists (kept, left out of analysis)."""
    return sum(1 for r in records if now.verdict(r) == REMOVED)


def stale_episodes(
    records: Iterable[EpisodeRecord],
    now: Fingerprints,
    folder: Path,
    *,
    allow: bool,
    allowable: bool = True,
) -> set[str]:
    """Stored episodes that no longer match; refuses (``ChangedSpecError``) unless ``allow``
    (``allowable``: whether ``--allow-changed-spec`` may be offered)."""
    mismatches = compare(records, now)
    if mismatches and not allow:
        raise ChangedSpecError(explain(mismatches[0], folder, allowable=allowable).rstrip())
    return {e for m in mismatches for e in m.episodes}
