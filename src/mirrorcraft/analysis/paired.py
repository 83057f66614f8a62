"""Paired Vanilla–Mirror estimates: RIE, the disclosure split and within-suite comparisons.

A *pair* is one (world, model, task, agent, budget). Its Vanilla mean uses the
agent's Vanilla episodes run with hidden rules; its Mirror means use the Mirror
episodes of one suite and one disclosure condition. A *comparison* is one pair
in one suite, and every paired estimate is a mean over comparisons of the
difference between two condition means.

Variances follow the paper's stratified binomial scheme: the stratum of a pair
is the pair without its world (model, task, agent, budget), each stratum's
episodes of one condition are pooled into one proportion, and the variance of
``sum_s w_s (p1_s - p2_s)`` is ``sum_s w_s^2 (var1_s + var2_s)``. The weight of
a stratum is its share of the comparisons, which equals the paper's equal
weights whenever every stratum holds the same number of worlds. A condition
cell shared by several terms (the Vanilla cell of a pooled-over-suites RIE)
enters once, with its weights summed.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from mirrorcraft.analysis.metrics import (
    DISCLOSED,
    HIDDEN,
    VANILLA,
    agent_order,
    is_success,
    suite_order,
)
from mirrorcraft.analysis.stats import (
    Z95,
    agresti_coull_variance,
    binomial_variance,
    interval,
)
from mirrorcraft.runner.records import EpisodeRecord

SR = "sr"
SCORE = "score"
ALL = "all"
"""The model (or suite) value meaning "pooled over all of them"."""


class PairKey(NamedTuple):
    """What a Vanilla–Mirror pair shares (a tuple, so grouping by it is fast)."""

    world: str
    model: str
    task: str
    agent: str
    budget: int

    @property
    def stratum(self) -> tuple[str, str, str, int]:
        """The pair without its world: the unit whose episodes share one variance term."""
        return (self.model, self.task, self.agent, self.budget)


def pair_key(record: EpisodeRecord) -> PairKey:
    return PairKey(record.world, record.model, record.task, record.agent, record.budget)


@dataclass(frozen=True)
class CellStats:
    """Sufficient statistics of one group of episodes (integers, so sums stay exact)."""

    n: int = 0
    successes: int = 0
    score_sum: int = 0
    score_squares: int = 0

    @classmethod
    def of(cls, records: Iterable[EpisodeRecord]) -> CellStats:
        n = x = s = ss = 0
        for r in records:
            n += 1
            x += 1 if is_success(r) else 0
            s += r.score
            ss += r.score * r.score
        return cls(n, x, s, ss)

    def __add__(self, other: CellStats) -> CellStats:
        return CellStats(
            self.n + other.n,
            self.successes + other.successes,
            self.score_sum + other.score_sum,
            self.score_squares + other.score_squares,
        )

    def mean(self, measure: str) -> float:
        """Mean Score, or SR in percent."""
        if measure == SCORE:
            return self.score_sum / self.n
        return 100.0 * self.successes / self.n

    def mean_variance(self, measure: str, corrected: bool = False) -> float:
        """Variance of the mean: sample variance / n for Score, binomial (percent²) for SR."""
        if measure == SCORE:
            if self.n < 2:
                return 0.0
            numerator = self.n * self.score_squares - self.score_sum * self.score_sum
            return numerator / (self.n * (self.n - 1)) / self.n
        if corrected:
            return 1e4 * agresti_coull_variance(self.successes, self.n)
        return 1e4 * binomial_variance(self.successes, self.n)


@dataclass(frozen=True)
class Comparison:
    pair: PairKey
    suite: str
    first: str
    """Condition of the minuend: "vanilla", "hidden" or "disclosed"."""
    first_stats: CellStats
    second: str
    second_stats: CellStats


class PairIndex:
    """Episodes grouped by pair and condition, for building comparisons quickly."""

    def __init__(self, records: Iterable[EpisodeRecord]) -> None:
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
                out.append(Comparison(pair, suite, first, one, second, two))
        return out


@dataclass(frozen=True)
class Estimate:
    """A paired estimate with its stratified variances (SR in percentage points)."""

    value: float
    variance: float
    variance_ac: float | None
    """Agresti–Coull (continuity-corrected) variance; None for Score."""
    comparisons: int

    @property
    def half_width(self) -> float:
        return Z95 * math.sqrt(self.variance)

    @property
    def half_width_ac(self) -> float | None:
        return None if self.variance_ac is None else Z95 * math.sqrt(self.variance_ac)

    def interval_json(self) -> dict[str, float | None]:
        """The 95% interval as JSON: binomial bounds and both half-widths."""
        low, high = interval(self.value, self.variance)
        return {
            "half_width": self.half_width,
            "low": low,
            "high": high,
            "half_width_ac": self.half_width_ac,
        }


def ci(estimate: Estimate | None) -> dict[str, float | None] | None:
    return None if estimate is None else estimate.interval_json()


def value(estimate: Estimate | None) -> float | None:
    return None if estimate is None else estimate.value


def contrast(comparisons: Sequence[Comparison], measure: str) -> Estimate | None:
    """Mean over comparisons of (first mean - second mean), with stratified variances."""
    if not comparisons:
        return None
    n = len(comparisons)
    value = math.fsum(
        c.first_stats.mean(measure) - c.second_stats.mean(measure) for c in comparisons
    )
    coef: dict[tuple[object, ...], float] = defaultdict(float)
    cells: dict[tuple[object, ...], dict[PairKey, CellStats]] = defaultdict(dict)
    for c in comparisons:
        for sign, condition, stats in (
            (1.0, c.first, c.first_stats),
            (-1.0, c.second, c.second_stats),
        ):
            key = (c.pair.stratum, condition, None if condition == VANILLA else c.suite)
            coef[key] += sign / n
            cells[key][c.pair] = stats
    pooled = {k: sum(v.values(), CellStats()) for k, v in cells.items()}
    variance = math.fsum(coef[k] ** 2 * pooled[k].mean_variance(measure) for k in coef)
    variance_ac = None
    if measure == SR:
        variance_ac = math.fsum(coef[k] ** 2 * pooled[k].mean_variance(measure, True) for k in coef)
    return Estimate(value / n, variance, variance_ac, n)


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
    total = Estimate(gap.value + delta.value, direct.variance, direct.variance_ac, len(vh))
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
