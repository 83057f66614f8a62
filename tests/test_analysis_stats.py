"""Statistics: intervals, binomial and Agresti–Coull variances, chi-square tail, Cochran's Q, Bonferroni."""

from __future__ import annotations

import math

import pytest

from mirrorcraft.analysis.stats import (
    Z95,
    Stratum,
    agresti_coull_variance,
    binomial_variance,
    bonferroni,
    chi2_sf,
    cochran_q,
    gamma_upper_regularized,
    interval,
    mean_variance,
    stratified_difference_variance,
)


def test_interval_uses_z_1_959964() -> None:
    assert Z95 == 1.959964
    low, high = interval(10.0, 4.0)
    assert low == pytest.approx(10.0 - 2 * 1.959964)
    assert high == pytest.approx(10.0 + 2 * 1.959964)
    assert interval(3.0, 0.0) == (3.0, 3.0)
    with pytest.raises(ValueError):
        interval(0.0, -1.0)


def test_binomial_and_agresti_coull_variances() -> None:
    assert binomial_variance(3, 10) == pytest.approx(0.3 * 0.7 / 10)
    assert binomial_variance(0, 30) == 0.0
    assert binomial_variance(30, 30) == 0.0
    # p~ = (x+2)/(n+4), n~ = n+4
    assert agresti_coull_variance(0, 30) == pytest.approx((2 / 34) * (32 / 34) / 34)
    assert agresti_coull_variance(3, 10) == pytest.approx((5 / 14) * (9 / 14) / 14)
    with pytest.raises(ValueError):
        binomial_variance(0, 0)


def test_mean_variance_is_sample_variance_over_n() -> None:
    assert mean_variance([]) == 0.0
    assert mean_variance([5.0]) == 0.0
    # values 0, 50, 100: mean 50, sample variance 2500, variance of mean 2500/3
    assert mean_variance([0.0, 50.0, 100.0]) == pytest.approx(2500 / 3)


def test_stratified_difference_variance_by_hand() -> None:
    strata = [Stratum(x1=6, n1=10, x2=3, n2=10), Stratum(x1=10, n1=20, x2=5, n2=20)]
    v1 = 0.6 * 0.4 / 10 + 0.3 * 0.7 / 10
    v2 = 0.5 * 0.5 / 20 + 0.25 * 0.75 / 20
    assert stratified_difference_variance(strata) == pytest.approx(0.25 * v1 + 0.25 * v2)
    weighted = stratified_difference_variance(strata, [0.8, 0.2])
    assert weighted == pytest.approx(0.64 * v1 + 0.04 * v2)
    corrected = stratified_difference_variance(strata, corrected=True)
    a1 = agresti_coull_variance(6, 10) + agresti_coull_variance(3, 10)
    a2 = agresti_coull_variance(10, 20) + agresti_coull_variance(5, 20)
    assert corrected == pytest.approx(0.25 * (a1 + a2))
    with pytest.raises(ValueError):
        stratified_difference_variance([])
    with pytest.raises(ValueError):
        stratified_difference_variance(strata, [1.0])


def test_chi2_sf_matches_scipy_on_many_points() -> None:
    scipy_stats = pytest.importorskip(
        "scipy.stats", reason="scipy (a dev dependency) gives the reference values"
    )
    qs = [1e-8, 1e-3, 0.05, 0.3, 0.9, 1.0, 2.1, 3.84, 5.0, 7.8, 11.4, 20.0, 41.7, 80.0, 196.0]
    qs += [500.0, 1500.0]
    for df in [1, 2, 3, 4, 5, 6, 8, 11, 17, 30, 60, 100, 250]:
        for q in qs:
            expected = float(scipy_stats.chi2.sf(q, df))
            got = chi2_sf(q, df)
            if expected < 1e-290:
                assert got < 1e-280
            else:
                assert got == pytest.approx(expected, rel=1e-9, abs=1e-300), (q, df)


def test_chi2_sf_edges() -> None:
    assert chi2_sf(0.0, 3) == 1.0
    assert chi2_sf(-1.0, 3) == 1.0
    assert chi2_sf(2.0, 2) == pytest.approx(math.exp(-1.0))  # df 2 is exponential
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)
    assert gamma_upper_regularized(1.0, 0.0) == 1.0
    with pytest.raises(ValueError):
        gamma_upper_regularized(0.0, 1.0)


def test_cochran_q_by_hand_and_against_scipy() -> None:
    scipy_stats = pytest.importorskip(
        "scipy.stats", reason="scipy (a dev dependency) gives the reference values"
    )
    estimates = [43.3, 13.3, 13.3]
    variances = [60.0, 45.0, 50.0]
    w = [1 / v for v in variances]
    pooled = sum(wi * e for wi, e in zip(w, estimates, strict=True)) / sum(w)
    q = sum(wi * (e - pooled) ** 2 for wi, e in zip(w, estimates, strict=True))
    result = cochran_q(estimates, variances)
    assert result is not None
    assert result.df == 2
    assert result.q == pytest.approx(q)
    assert result.pooled == pytest.approx(pooled)
    assert result.p == pytest.approx(float(scipy_stats.chi2.sf(q, 2)), rel=1e-10)


def test_cochran_q_ties_and_undefined_cases() -> None:
    same = cochran_q([5.0, 5.0, 5.0], [1.0, 2.0, 3.0])
    assert same is not None and same.q == pytest.approx(0.0) and same.p == 1.0
    assert cochran_q([1.0], [1.0]) is None
    assert cochran_q([1.0, 2.0], [1.0, 0.0]) is None  # zero variance: infinite weight
    with pytest.raises(ValueError):
        cochran_q([1.0, 2.0], [1.0])


def test_paper_p_values() -> None:
    # Q values quoted in the paper's appendix and their reported p-values.
    assert round(chi2_sf(2.1, 5), 2) == 0.84
    assert round(chi2_sf(11.4, 2), 3) == 0.003
    assert chi2_sf(41.7, 4) < 0.001
    assert chi2_sf(196.0, 5) < 0.001


def test_bonferroni() -> None:
    assert bonferroni([0.01, 0.3, 0.5]) == pytest.approx([0.03, 0.9, 1.0])
    assert bonferroni([0.003, 0.0001], m=12) == pytest.approx([0.036, 0.0012])
    assert bonferroni([]) == []
    assert bonferroni([0.2], m=0) == []
