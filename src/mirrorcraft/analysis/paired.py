"""Paired Vanilla–Mirror estimates: RIE, the disclosure split and within-suite comparisons.

A *pair* is one (world, model, task, agent, budget). Its Vanilla mean uses the
agent's Vanilla episodes run with hidden rules; its Mirror means use the Mirror
episodes of one suite and one disclosure condition. A *comparison* is one pair
in one suite, and every paired estimate is a mean over comparisons of the
difference between two condition means; its variance is in ``estimates``.

The condition means shown beside an estimate (``PairedMeans``) are taken over
the same comparisons, so a table's Vanilla minus Mirror column is its RIE
exactly; the episodes that belong to no comparison are counted as unpaired.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from mirrorcraft.analysis.estimates import (
    CONFIGURATION_STRATA,
    SCORE,
    SR,
    STRATA,
    CellStats,
    Comparison,
    Estimate,
    PairKey,
    ci,
    contrast,
    pair_key,
    value,
)
from mirrorcraft.analysis.metrics import (
    DISCLOSED,
    HIDDEN,
    VANILLA,
    agent_order,
    is_success,
    suite_order,
)
from mirrorcraft.runner.records import EpisodeRecord

__all__ = [
    "ALL",
    "SCORE",
    "SR",
    "CellStats",
    "Comparison",
    "Estimate",
    "PairIndex",
    "PairKey",
    "PairedMeans",
    "Split",
    "ci",
    "compared_set",
    "contrast",
    "disclosure_split",
    "pair_key",
    "paired_means",
    "rie",
    "value",
]

ALL = "all"
"""The model (or suite) value meaning "pooled over all of them"."""


class PairIndex:
    """Episodes grouped by pair and condition, for building comparisons quickly."""

    def __init__(
        self, records: Iterable[EpisodeRecord], strata: str = CONFIGURATION_STRATA
    ) -> None:
        if strata not in STRATA:
            raise ValueError(f"strata must be one of {', '.join(STRATA)}, got {strata!r}")
        self.strata = strata
        vanilla: dict[PairKey, list[EpisodeRecord]] = defaultdict(list)
        mirror: dict[tuple[PairKey, str, str], list[EpisodeRecord]] = defaultdict(list)
        for r in records:
            key = pair_key(r)
            if r.rules == VANILLA:
                if r.disclosure == HIDDEN:
                    vanilla[key].append(r)
            else:
                mirror[(key, r.rules, r.disclosure)].append(r)
        self.vanilla: dict[PairKey, CellStats] = {k: CellStats.of(v) for k, v in vanilla.items()}
        self.mirror: dict[tuple[PairKey, str, str], CellStats] = {
            k: CellStats.of(v) for k, v in mirror.items()
        }
        self._groups: dict[tuple[str, str], list[tuple[PairKey, str]]] = defaultdict(list)
        for pair, suite in sorted({(pair, suite) for pair, suite, _ in self.mirror}):
            self._groups[(pair.agent, pair.model)].append((pair, suite))

    def suites(self) -> list[str]:
        return sorted({suite for _, suite, _ in self.mirror}, key=suite_order)

    def side(self, pair: PairKey, suite: str, condition: str) -> CellStats | None:
        if condition == VANILLA:
            return self.vanilla.get(pair)
        return self.mirror.get((pair, suite, condition))

    def comparisons(
        self,
        first: str,
        second: str,
        *,
        suites: Sequence[str] | None = None,
        agent: str | None = None,
        model: str = ALL,
        tasks: Collection[str] | None = None,
        require: Sequence[str] = (),
    ) -> list[Comparison]:
        """Every (pair, suite) holding episodes of ``first``, ``second`` and ``require``.

        ``agent`` None and ``model`` "all" select every agent and model; ``tasks``
        None selects every task.
        """
        wanted = set(suites) if suites is not None else None
        out: list[Comparison] = []
        for (a, m), keys in sorted(self._groups.items()):
            if (agent is not None and a != agent) or (model != ALL and m != model):
                continue
            for pair, suite in keys:
                if (wanted is not None and suite not in wanted) or (
                    tasks is not None and pair.task not in tasks
                ):
                    continue
                one = self.side(pair, suite, first)
                two = self.side(pair, suite, second)
                if one is None or two is None:
                    continue
                if any(self.side(pair, suite, c) is None for c in require):
                    continue
                out.append(
                    Comparison(pair, suite, first, one, second, two, pair.stratum_of(self.strata))
                )
        return out

    def cells(
        self,
        condition: str,
        *,
        suites: Sequence[str] | None = None,
        agent: str | None = None,
        model: str = ALL,
        tasks: Collection[str] | None = None,
    ) -> dict[tuple[PairKey, str | None], CellStats]:
        """Every cell of one condition in a selection, keyed by (pair, suite or None)."""
        wanted = set(suites) if suites is not None else None

        def chosen(pair: PairKey) -> bool:
            return (
                (agent is None or pair.agent == agent)
                and (model == ALL or pair.model == model)
                and (tasks is None or pair.task in tasks)
            )

        if condition == VANILLA:
            return {(p, None): s for p, s in self.vanilla.items() if chosen(p)}
        return {
            (p, suite): s
            for (p, suite, cond), s in self.mirror.items()
            if cond == condition and chosen(p) and (wanted is None or suite in wanted)
        }


@dataclass(frozen=True)
class PairedMeans:
    """Both condition means over the comparisons of a selection, and what was left unpaired.

    ``first_mean - second_mean`` equals the contrast over the same comparisons.
    """

    comparisons: int
    first: dict[str, float | int | None]
    """``episodes`` (in the comparisons' cells), ``score`` and ``sr`` (means over comparisons)."""
    second: dict[str, float | int | None]
    unpaired_first: int
    """Episodes of the first condition in the selection that belong to no comparison."""
    unpaired_second: int


def _side(comparisons: Sequence[Comparison], which: int) -> dict[str, float | int | None]:
    if not comparisons:
        return {"episodes": 0, "score": None, "sr": None}
    stats = [c.first_stats if which == 0 else c.second_stats for c in comparisons]
    cells = {(c.pair, c.suite if (c.first if which == 0 else c.second) != VANILLA else None): s
             for c, s in zip(comparisons, stats, strict=True)}  # fmt: skip
    n = len(comparisons)
    return {
        "episodes": sum(s.n for s in cells.values()),
        "score": math.fsum(s.mean(SCORE) for s in stats) / n,
        "sr": math.fsum(s.mean(SR) for s in stats) / n,
    }


def paired_means(
    index: PairIndex,
    first: str,
    second: str,
    *,
    suites: Sequence[str] | None = None,
    agent: str | None = None,
    model: str = ALL,
    tasks: Collection[str] | None = None,
) -> PairedMeans:
    """Condition means over exactly the comparisons an estimate of ``first - second`` uses."""
    found = index.comparisons(first, second, suites=suites, agent=agent, model=model, tasks=tasks)
    used: list[set[tuple[PairKey, str | None]]] = [set(), set()]
    for c in found:
        used[0].add((c.pair, None if c.first == VANILLA else c.suite))
        used[1].add((c.pair, None if c.second == VANILLA else c.suite))
    left = []
    for i, condition in enumerate((first, second)):
        every = index.cells(condition, suites=suites, agent=agent, model=model, tasks=tasks)
        left.append(sum(s.n for k, s in every.items() if k not in used[i]))
    return PairedMeans(len(found), _side(found, 0), _side(found, 1), left[0], left[1])


def rie(
    index: PairIndex,
    measure: str,
    *,
    disclosure: str = HIDDEN,
    suites: Sequence[str] | None = None,
    agent: str | None = None,
    model: str = ALL,
    tasks: Collection[str] | None = None,
) -> Estimate | None:
    """RIE (Vanilla minus Mirror) over every matching comparison; pooled when several suites."""
    found = index.comparisons(
        VANILLA, disclosure, suites=suites, agent=agent, model=model, tasks=tasks
    )
    return contrast(found, measure)


@dataclass(frozen=True)
class Split:
    """ReAct-style disclosure split of one measure over one set of comparisons.

    ``rie == gap + delta`` holds exactly: ``rie.value`` is defined as their sum
    (it equals the directly computed mean difference up to rounding).
    """

    vanilla: float
    hidden: float
    disclosed: float
    rie: Estimate
    gap: Estimate
    """Vanilla minus disclosed."""
    delta: Estimate
    """Disclosed minus hidden."""


def _side_mean(comparisons: Sequence[Comparison], measure: str, side: int) -> float:
    return math.fsum(
        (c.first_stats if side == 0 else c.second_stats).mean(measure) for c in comparisons
    ) / len(comparisons)


def disclosure_split(
    index: PairIndex,
    measure: str,
    *,
    suites: Sequence[str] | None = None,
    agent: str | None = None,
    model: str = ALL,
) -> Split | None:
    """Split RIE into Gap and Δ using only pairs that have all three conditions in a suite."""

    def find(first: str, second: str, other: str) -> list[Comparison]:
        return index.comparisons(
            first, second, suites=suites, agent=agent, model=model, require=(other,)
        )

    vh = find(VANILLA, HIDDEN, DISCLOSED)
    if not vh:
        return None
    gap = contrast(find(VANILLA, DISCLOSED, HIDDEN), measure)
    dh = find(DISCLOSED, HIDDEN, VANILLA)
    delta = contrast(dh, measure)
    direct = contrast(vh, measure)
    assert gap is not None and delta is not None and direct is not None
    total = dataclasses.replace(direct, value=gap.value + delta.value)
    return Split(
        vanilla=_side_mean(vh, measure, 0),
        hidden=_side_mean(vh, measure, 1),
        disclosed=_side_mean(dh, measure, 0),
        rie=total,
        gap=gap,
        delta=delta,
    )


def compared_set(
    records: Iterable[EpisodeRecord],
    threshold: float = 50.0,
    tasks: Sequence[str] = ("iron_armor", "diamond"),
) -> dict[str, list[str]]:
    """Per model, the agents whose hidden Vanilla SR is at least ``threshold`` on every task.

    An agent without Vanilla episodes on one of the tasks is not in the set.
    """
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    models: set[str] = set()
    for r in records:
        if r.rules == VANILLA and r.disclosure == HIDDEN:
            models.add(r.model)
            if r.task in tasks:
                cell = counts[(r.model, r.agent, r.task)]
                cell[0] += 1 if is_success(r) else 0
                cell[1] += 1
    out: dict[str, list[str]] = {}
    for model in sorted(models):
        agents = {a for (m, a, _t) in counts if m == model}
        out[model] = sorted(
            (
                a
                for a in agents
                if all(
                    (c := counts.get((model, a, t))) is not None
                    and 100.0 * c[0] / c[1] >= threshold
                    for t in tasks
                )
            ),
            key=agent_order,
        )
    return out
