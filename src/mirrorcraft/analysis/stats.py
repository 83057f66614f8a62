"""Statistics for the paired estimates: variances, 95% intervals, Cochran's Q, Bonferroni.

Everything here is plain Python so that the runtime does not need scipy; the
chi-square survival function is computed from the regularized upper incomplete
gamma function (power series below ``a + 1``, Lentz continued fraction above).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959964
"""Two-sided 95% quantile of the standard normal distribution."""


def interval(estimate: float, variance: float, z: float = Z95) -> tuple[float, float]:
    """Normal-approximation interval ``estimate ± z·sqrt(variance)``."""
    if variance < 0:
        raise ValueError("variance must not be negative")
    half = z * math.sqrt(variance)
    return estimate - half, estimate + half


def binomial_variance(successes: int, n: int) -> float:
    """Variance of a success proportion: p(1-p)/n."""
    if n <= 0:
        raise ValueError("a proportion needs at least one episode")
    p = successes / n
    return p * (1.0 - p) / n


def agresti_coull_variance(successes: int, n: int) -> float:
    """Continuity-corrected variance: p~(1-p~)/n~ with p~ = (x+2)/(n+4), n~ = n+4."""
    if n < 0:
        raise ValueError("n must not be negative")
    n_adj = n + 4
    p_adj = (successes + 2) / n_adj
    return p_adj * (1.0 - p_adj) / n_adj


def mean_variance(values: Sequence[float]) -> float:
    """Variance of a sample mean: sample variance (n-1 denominator) over n; 0 below two values."""
    n = len(values)
    if n < 2:
        return 0.0
    mean = math.fsum(values) / n
    return math.fsum((v - mean) ** 2 for v in values) / (n - 1) / n


@dataclass(frozen=True)
class Stratum:
    """Success counts of the two compared conditions in one stratum (e.g. one model and task)."""

    x1: int
    n1: int
    x2: int
    n2: int


def stratified_difference_variance(
    strata: Sequence[Stratum], weights: Sequence[float] | None = None, *, corrected: bool = False
) -> float:
    """Variance of ``sum_s w_s (p1_s - p2_s)``: ``sum_s w_s^2 (var1_s + var2_s)``.

    Weights default to equal (1/k for k strata); ``corrected`` uses the
    Agresti–Coull variances instead of the plain binomial ones.
    """
    if not strata:
        raise ValueError("no strata")
    w = [1.0 / len(strata)] * len(strata) if weights is None else list(weights)
    if len(w) != len(strata):
        raise ValueError("one weight per stratum")
    var = agresti_coull_variance if corrected else binomial_variance
    return math.fsum(
        ws * ws * (var(s.x1, s.n1) + var(s.x2, s.n2)) for ws, s in zip(w, strata, strict=True)
    )


# --- chi-square tail ----------------------------------------------------------------------

_EPS = 1e-16
_TINY = 1e-300


def _lower_series(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x) by its power series (x < a + 1)."""
    term = 1.0 / a
    total = term
    k = a
    for _ in range(10_000):
        k += 1.0
        term *= x / k
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _upper_fraction(a: float, x: float) -> float:
    """Regularized upper incomplete gamma Q(a, x) by its continued fraction (x >= a + 1)."""
    b = x + 1.0 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h * math.exp(-x + a * math.log(x) - math.lgamma(a))


def gamma_upper_regularized(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a) for a > 0, x >= 0."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x < 0:
        raise ValueError("x must not be negative")
    if x == 0:
        return 1.0
    if x < a + 1.0:
        return max(0.0, 1.0 - _lower_series(a, x))
    return min(1.0, _upper_fraction(a, x))


def chi2_sf(q: float, df: int) -> float:
    """Survival function P(X >= q) of a chi-square variable with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    if q <= 0:
        return 1.0
    return gamma_upper_regularized(df / 2.0, q / 2.0)


# --- heterogeneity and multiplicity ----------------------------------------------------------


@dataclass(frozen=True)
class CochranQ:
    q: float
    df: int
    p: float
    pooled: float
    """Inverse-variance weighted mean of the estimates."""


def cochran_q(estimates: Sequence[float], variances: Sequence[float]) -> CochranQ | None:
    """Cochran's heterogeneity test with weights 1/variance.

    ``None`` when it is undefined: fewer than two estimates or a variance that is
    not positive (an estimate without sampling variance would get infinite weight).
    """
    if len(estimates) != len(variances):
        raise ValueError("one variance per estimate")
    if len(estimates) < 2 or any(not v > 0 for v in variances):
        return None
    weights = [1.0 / v for v in variances]
    total = math.fsum(weights)
    pooled = math.fsum(w * e for w, e in zip(weights, estimates, strict=True)) / total
    q = math.fsum(w * (e - pooled) ** 2 for w, e in zip(weights, estimates, strict=True))
    df = len(estimates) - 1
    return CochranQ(q, df, chi2_sf(q, df), pooled)


def bonferroni(p_values: Sequence[float], m: int | None = None) -> list[float]:
    """Bonferroni-adjusted p-values ``min(1, p·m)``; ``m`` defaults to the number of tests."""
    family = len(p_values) if m is None else m
    if family < 1:
        return []
    return [min(1.0, p * family) for p in p_values]
