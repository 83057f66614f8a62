"""Episode-level measures and plain group means: Score, SR, actions, cost; names and ordering.

Conventions: SR is a percentage (0-100), Score is on the milestone scale (0-100).
Every function over a group returns ``None`` for an empty group instead of 0, so
a missing cell can never be mistaken for a measured zero.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from mirrorcraft.runner.records import EpisodeRecord
from mirrorcraft.safeload import parse_yaml

VANILLA = "vanilla"
HIDDEN = "hidden"
DISCLOSED = "disclosed"

PAPER_AGENTS = (
    "direct",
    "react",
    "reflexion",
    "voyager",
    "xenon",
    "adam",
    "mineevolve",
    "oracle",
    "vanilla-planner",
    "adaptive-planner",
    "random",
)
CONTROL_AGENTS = ("oracle",)
"""Agents that are controls, not benchmark conditions: the oracle is given the active rules
(it shows that every task is reachable under every rule set). They are left out of every
benchmark table and test and shown only in the controls table."""
PAPER_TASKS = ("iron_armor", "diamond", "enchantment")
PAPER_BIOMES = ("plains", "taiga", "snowy_plains", "jungle", "savanna")
_SUITE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def is_control(record: EpisodeRecord) -> bool:
    """Whether the episode belongs to a control agent (see ``CONTROL_AGENTS``)."""
    return record.agent in CONTROL_AGENTS


def is_success(record: EpisodeRecord) -> bool:
    """An episode succeeds when it reached the final milestone (Score 100)."""
    return record.score >= 100


def mean_score(records: Sequence[EpisodeRecord]) -> float | None:
    if not records:
        return None
    return math.fsum(r.score for r in records) / len(records)


def success_rate(records: Sequence[EpisodeRecord]) -> float | None:
    """Percentage of episodes that succeeded."""
    if not records:
        return None
    return 100.0 * sum(1 for r in records if is_success(r)) / len(records)


def mean_actions(records: Sequence[EpisodeRecord]) -> float | None:
    if not records:
        return None
    return math.fsum(r.actions_used for r in records) / len(records)


@dataclass(frozen=True)
class CostSummary:
    """Mean dollar cost per episode; ``mean`` is None when any episode's cost is unknown."""

    mean: float | None
    episodes: int
    unknown: int


def mean_cost(records: Sequence[EpisodeRecord]) -> CostSummary:
    known = [r.cost_usd for r in records if r.cost_usd is not None]
    unknown = len(records) - len(known)
    mean = None if unknown or not records else math.fsum(known) / len(records)
    return CostSummary(mean, len(records), unknown)


@dataclass(frozen=True)
class CallSummary:
    """Model calls per episode, split into paid and cached, and how many episodes' token
    counts (hence cost) are partly estimated."""

    paid_calls: float | None
    cached_calls: float | None
    prompt_tokens: float | None
    completion_tokens: float | None
    estimated_episodes: int


def call_summary(records: Sequence[EpisodeRecord]) -> CallSummary:
    n = len(records)

    def mean(values: Iterable[int]) -> float | None:
        return math.fsum(values) / n if n else None

    return CallSummary(
        mean(r.model_calls - r.cached_calls for r in records),
        mean(r.cached_calls for r in records),
        mean(r.prompt_tokens for r in records),
        mean(r.completion_tokens for r in records),
        sum(1 for r in records if r.estimated_calls),
    )


def configuration_label(agent: str, disclosure: str) -> str:
    """Display name of a configuration: the agent, marked when it was told the rules."""
    return agent if disclosure == HIDDEN else f"{agent} w/rules"


def _ranked(value: str, known: Sequence[str]) -> tuple[int, str]:
    return (known.index(value) if value in known else len(known), value)


def agent_order(agent: str) -> tuple[int, str]:
    return _ranked(agent, PAPER_AGENTS)


def configuration_order(config: tuple[str, str]) -> tuple[int, tuple[int, str]]:
    agent, disclosure = config
    return (0 if disclosure == HIDDEN else 1, agent_order(agent))


def task_order(task: str) -> tuple[int, str]:
    return _ranked(task, PAPER_TASKS)


def biome_order(biome: str) -> tuple[int, str]:
    return _ranked(biome, PAPER_BIOMES)


def suite_order(suite: str) -> tuple[int, str]:
    """M01..M99 first in number order, then any other rule-set id alphabetically."""
    if len(suite) == 3 and suite[0] == "M" and suite[1:].isdigit():
        return (int(suite[1:]), suite)
    return (1000, suite)


def distinct(values: Iterable[str], key: object = None) -> list[str]:
    """Sorted distinct values (``key`` is a sort key function, default plain order)."""
    unique = set(values)
    return sorted(unique, key=key) if callable(key) else sorted(unique)


@lru_cache(maxsize=64)
def suite_title(suite: str) -> str:
    """The packaged suite's name (e.g. "Quantity scarcity"), or "" for other rule sets.

    Read straight from the suite manifest so that naming a row never depends on
    the rules engine loading.
    """
    if not _SUITE_ID.fullmatch(suite):
        return ""
    try:
        path = resources.files("mirrorcraft").joinpath("data", "suites", f"{suite}.yaml")
        doc = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    except (OSError, ValueError):
        return ""
    name = doc.get("name") if isinstance(doc, dict) else None
    return name if isinstance(name, str) else ""


def rule_change(suite: str, records: Iterable[EpisodeRecord]) -> str:
    """What a rule set changes, for the "Rule change" column: the packaged suite's name, else
    the ``rules_title`` its records carry (a user's own suite: its manifest's name, its
    datapack's description or what it changes; the most frequent one if a resumed run's
    records differ), else ""."""
    title = suite_title(suite)
    if title:
        return title
    counts: dict[str, int] = {}
    for r in records:
        if r.rules == suite and r.rules_title:
            counts[r.rules_title] = counts.get(r.rules_title, 0) + 1
    return min(counts, key=lambda t: (-counts[t], t)) if counts else ""
