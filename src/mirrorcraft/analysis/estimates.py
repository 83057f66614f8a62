"""Paired estimates and their variances: a mean over comparisons of two condition means.

A *pair* is one (world, model, task, agent, budget); a *comparison* is one pair
in one suite with both condition cells present (e.g. its Vanilla episodes and
its M04 episodes). A paired estimate is the mean over comparisons of the
difference of the two cell means (the paper's RIE, section 3.5).

Variance, exactly for any design: the estimate is a weighted sum of episode
outcomes, the weight of an episode being the summed coefficients (±1/n_c) of
the comparisons its cell enters, divided by the cell's size. With independent
episodes (as the paper assumes), its variance is
``sum over cells of coef_cell**2 / n_cell * sigma2``, where ``sigma2`` is the
per-episode variance of the cell's *stratum*: the cells of one condition (and
suite) that share model, task, agent and budget, pooled. For SR ``sigma2`` is
the binomial ``p(1-p)`` of the pooled stratum (the paper's "binomial variances
stratified by model and task"); for Score it is the stratum's sample variance.
In a balanced design this equals the paper's ``sum_s w_s**2 (var1_s + var2_s)``
with equal stratum weights; in an unbalanced one it is the exact variance of the
mean of pair means, not an approximation.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from mirrorcraft.analysis.metrics import VANILLA, is_success
from mirrorcraft.analysis.stats import Z95, interval
from mirrorcraft.runner.records import EpisodeRecord

SR = "sr"
SCORE = "score"

CONFIGURATION_STRATA = "configuration"
"""A stratum is one model, task, configuration and budget (the default: "30 episodes per
cell", App. C): an estimate that pools configurations keeps each its own stratum."""
MODEL_TASK_STRATA = "model-task"
"""A stratum is one model, task and budget, whatever the configuration ("stratified by model
and task", read literally): pooled configurations share one binomial variance, which then
also holds the spread between them."""
STRATA = (CONFIGURATION_STRATA, MODEL_TASK_STRATA)

ONE_EPISODE = "a cell with one episode"
BOUNDARY = "a cell with SR 0% or 100%"
NO_SPREAD = "a cell whose episodes all have the same Score"


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

    def stratum_of(self, strata: str) -> tuple[str | int, ...]:
        """The pair's stratum under one reading of the paper's strata (``STRATA``)."""
        if strata == MODEL_TASK_STRATA:
            return (self.model, self.task, self.budget)
        return self.stratum


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

    def unit_variance(self, measure: str, corrected: bool = False) -> float:
        """Per-episode variance: sample variance of Score, binomial p(1-p) of SR (percent²).

        ``corrected`` (SR only) uses the Agresti–Coull p~ = (x+2)/(n+4), scaled by
        n/(n+4) so that ``unit_variance / n`` is the continuity-corrected
        p~(1-p~)/(n+4) of the paper's appendix C.
        """
        if measure == SCORE:
            if self.n < 2:
                return 0.0
            numerator = self.n * self.score_squares - self.score_sum * self.score_sum
            return numerator / (self.n * (self.n - 1))
        if corrected:
            p = (self.successes + 2) / (self.n + 4)
            return 1e4 * p * (1.0 - p) * self.n / (self.n + 4)
        p = self.successes / self.n
        return 1e4 * p * (1.0 - p)

    def mean_variance(self, measure: str, corrected: bool = False) -> float:
        """Variance of this group's mean (the group as one stratum)."""
        return self.unit_variance(measure, corrected) / self.n

    def degenerate(self, measure: str) -> str | None:
        """Why this stratum's variance estimate is degenerate (None when it is not)."""
        if self.n < 2:
            return ONE_EPISODE
        if measure == SR and self.successes in (0, self.n):
            return BOUNDARY
        if measure == SCORE and self.unit_variance(SCORE) == 0:
            return NO_SPREAD
        return None


@dataclass(frozen=True)
class Comparison:
    pair: PairKey
    suite: str
    first: str
    """Condition of the minuend: "vanilla", "hidden" or "disclosed"."""
    first_stats: CellStats
    second: str
    second_stats: CellStats
    stratum: tuple[str | int, ...] = ()
    """The pair's variance stratum (``PairKey.stratum_of``); empty: ``pair.stratum``."""


@dataclass(frozen=True)
class Estimate:
    """A paired estimate with its variances (SR in percentage points)."""

    value: float
    variance: float
    variance_ac: float | None
    """Agresti–Coull (continuity-corrected) variance; None for Score."""
    comparisons: int
    parts: dict[str, tuple[float, float | None]] = field(default_factory=dict)
    """Condition -> (variance, Agresti–Coull variance) of its side of the estimate."""
    degenerate: str | None = None
    """Why the binomial (or Score) variance understates the uncertainty: a stratum with
    one episode, with SR 0% or 100%, or without any spread in Score."""

    @property
    def half_width(self) -> float:
        return Z95 * math.sqrt(self.variance)

    @property
    def half_width_ac(self) -> float | None:
        return None if self.variance_ac is None else Z95 * math.sqrt(self.variance_ac)

    def side_variance(self, *conditions: str, corrected: bool = False) -> float | None:
        """The variance of the named sides only (None for a corrected Score variance)."""
        total = 0.0
        for condition in conditions:
            plain, ac = self.parts.get(condition, (0.0, 0.0))
            if corrected and ac is None:
                return None
            total += (ac or 0.0) if corrected else plain
        return total

    def interval_json(self) -> dict[str, float | str | None]:
        """The 95% interval as JSON: binomial bounds, both half-widths, and a degeneracy note."""
        low, high = interval(self.value, self.variance)
        return {
            "half_width": self.half_width,
            "low": low,
            "high": high,
            "half_width_ac": self.half_width_ac,
            "degenerate": self.degenerate,
        }


def ci(estimate: Estimate | None) -> dict[str, float | str | None] | None:
    return None if estimate is None else estimate.interval_json()


def value(estimate: Estimate | None) -> float | None:
    return None if estimate is None else estimate.value


def _stratum_key(c: Comparison, condition: str) -> tuple[object, ...]:
    return (c.stratum or c.pair.stratum, condition, None if condition == VANILLA else c.suite)


def contrast(comparisons: Sequence[Comparison], measure: str) -> Estimate | None:
    """Mean over comparisons of (first mean - second mean), with its exact variance."""
    return _weighted(comparisons, measure, 1.0, -1.0)


def side_mean(comparisons: Sequence[Comparison], measure: str, side: str) -> Estimate | None:
    """Mean over comparisons of one side's cell mean (``side``: "first" or "second").

    The same comparisons as the contrast, so a figure can show the two sides whose
    difference is the RIE, each with its exact stratified interval.
    """
    weights = (1.0, 0.0) if side == "first" else (0.0, 1.0)
    return _weighted(comparisons, measure, *weights)


def _weighted(
    comparisons: Sequence[Comparison], measure: str, w_first: float, w_second: float
) -> Estimate | None:
    """Mean over comparisons of ``w_first * first mean + w_second * second mean``."""
    if not comparisons:
        return None
    n = len(comparisons)
    total = math.fsum(
        w_first * c.first_stats.mean(measure) + w_second * c.second_stats.mean(measure)
        for c in comparisons
    )
    coef: dict[tuple[object, ...], dict[PairKey, float]] = defaultdict(lambda: defaultdict(float))
    cells: dict[tuple[object, ...], dict[PairKey, CellStats]] = defaultdict(dict)
    for c in comparisons:
        for sign, condition, stats in (
            (w_first, c.first, c.first_stats),
            (w_second, c.second, c.second_stats),
        ):
            if sign == 0.0:
                continue
            key = _stratum_key(c, condition)
            coef[key][c.pair] += sign / n
            cells[key][c.pair] = stats
    parts: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    reasons: list[str] = []
    for key, members in cells.items():
        pooled = sum(members.values(), CellStats())
        spread = math.fsum(coef[key][p] ** 2 / members[p].n for p in members)
        part = parts[str(key[1])]
        part[0] += spread * pooled.unit_variance(measure)
        if measure == SR:
            part[1] += spread * pooled.unit_variance(measure, corrected=True)
        why = pooled.degenerate(measure)
        if why:
            reasons.append(why)
    variance = math.fsum(p[0] for p in parts.values())
    variance_ac = math.fsum(p[1] for p in parts.values()) if measure == SR else None
    side = {cond: (p[0], p[1] if measure == SR else None) for cond, p in sorted(parts.items())}
    degenerate = None
    for why in (ONE_EPISODE, BOUNDARY, NO_SPREAD):
        if why in reasons:
            degenerate = why
            break
    return Estimate(total / n, variance, variance_ac, n, side, degenerate)
