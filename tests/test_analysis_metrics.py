"""Score, SR, cost, RIE, the disclosure split, stratified variances and the compared set."""

from __future__ import annotations

import math

import pytest

from mirrorcraft.analysis.metrics import (
    configuration_label,
    mean_actions,
    mean_cost,
    mean_score,
    success_rate,
    suite_order,
)
from mirrorcraft.analysis.paired import (
    SCORE,
    SR,
    PairIndex,
    compared_set,
    contrast,
    disclosure_split,
    rie,
)
from mirrorcraft.analysis.stats import (
    Stratum,
    agresti_coull_variance,
    binomial_variance,
    stratified_difference_variance,
)
from mirrorcraft.runner.records import EpisodeRecord
from tests.test_analysis_helpers import make_record, synthetic_study


def test_group_means_and_empty_groups() -> None:
    rs = [make_record(score=100), make_record(score=50, repetition=1), make_record(repetition=2)]
    assert mean_score(rs) == pytest.approx(50.0)
    assert success_rate(rs) == pytest.approx(100 / 3)
    assert mean_actions(rs) == 1.0
    assert mean_score([]) is None
    assert success_rate([]) is None
    assert mean_actions([]) is None


def test_cost_unknown_is_never_zero() -> None:
    known = [make_record(cost=0.1), make_record(cost=0.3, repetition=1)]
    assert mean_cost(known).mean == pytest.approx(0.2)
    mixed = [*known, make_record(cost=None, repetition=2)]
    summary = mean_cost(mixed)
    assert summary.mean is None and summary.unknown == 1 and summary.episodes == 3
    assert mean_cost([]).mean is None


def test_labels_and_suite_order() -> None:
    assert configuration_label("react", "hidden") == "react"
    assert configuration_label("react", "disclosed") == "react w/rules"
    assert sorted(["my-pack", "M10", "M02"], key=suite_order) == ["M02", "M10", "my-pack"]


def _two_pairs() -> list[EpisodeRecord]:
    return [
        # pair w1: Vanilla 100, 50 -> Score 75, SR 50; M01 100, 100 -> 100, 100
        make_record(world="w-1", score=100),
        make_record(world="w-1", score=50, repetition=1),
        make_record(world="w-1", rules="M01", score=100),
        make_record(world="w-1", rules="M01", score=100, repetition=1),
        # pair w2: Vanilla 0 -> 0, 0; M01 50, 0, 100 -> 50, 33.3
        make_record(world="w-2", score=0),
        make_record(world="w-2", rules="M01", score=50),
        make_record(world="w-2", rules="M01", score=0, repetition=1),
        make_record(world="w-2", rules="M01", score=100, repetition=2),
    ]


def test_rie_is_the_mean_over_pairs() -> None:
    index = PairIndex(_two_pairs())
    sc = rie(index, SCORE)
    sr = rie(index, SR)
    assert sc is not None and sr is not None
    assert sc.value == pytest.approx(((75 - 100) + (0 - 50)) / 2)
    assert sr.value == pytest.approx(((50 - 100) + (0 - 100 / 3)) / 2)
    assert sr.comparisons == 2


def test_rie_ignores_pairs_without_both_sides() -> None:
    records = [*_two_pairs(), make_record(world="w-3", score=100)]  # Vanilla only
    records.append(make_record(world="w-4", rules="M01", score=100))  # Mirror only
    est = rie(PairIndex(records), SR)
    assert est is not None and est.comparisons == 2
    assert rie(PairIndex(records), SR, suites=["M02"]) is None  # empty cell
    assert rie(PairIndex([]), SCORE) is None


def test_pooled_rie_is_the_mean_over_all_pair_suite_comparisons() -> None:
    records = [
        make_record(world="w-1", score=100),
        make_record(world="w-2", score=100),
        make_record(world="w-1", rules="M01", score=0),  # diff 100
        make_record(world="w-2", rules="M01", score=0),  # diff 100
        make_record(world="w-1", rules="M02", score=100),  # diff 0
    ]
    index = PairIndex(records)
    pooled = rie(index, SR)
    assert pooled is not None
    assert pooled.value == pytest.approx(200 / 3)  # not the mean of suite RIEs (50)
    m01, m02 = rie(index, SR, suites=["M01"]), rie(index, SR, suites=["M02"])
    assert m01 is not None and m01.value == 100 and m02 is not None and m02.value == 0


def test_vanilla_of_the_pair_uses_hidden_episodes_of_the_same_agent() -> None:
    records = [
        make_record(agent="react", score=100),
        make_record(agent="react", disclosure="disclosed", score=0),  # ignored as Vanilla
        make_record(agent="other", score=0),
        make_record(agent="react", rules="M01", score=0),
    ]
    est = rie(PairIndex(records), SR, agent="react")
    assert est is not None and est.value == 100.0


def test_zero_vanilla_successes() -> None:
    records = [make_record(world=f"w-{i}", score=35) for i in range(3)]
    records += [make_record(world=f"w-{i}", rules="M04", score=100 * (i == 0)) for i in range(3)]
    est = rie(PairIndex(records), SR)
    assert est is not None
    assert est.value == pytest.approx(-100 / 3)  # RIE_SR cannot be positive
    # the Vanilla cell has no binomial variance; the Mirror cell has p = 1/3, n = 3
    assert est.variance == pytest.approx(1e4 * binomial_variance(1, 3))
    expected_ac = agresti_coull_variance(0, 3) + agresti_coull_variance(1, 3)
    assert est.variance_ac == pytest.approx(1e4 * expected_ac)
    # neither side ever succeeds: no binomial variance at all, but a corrected one
    never = [r for r in records if r.rules == "vanilla" or r.score != 100]
    flat = rie(PairIndex(never), SR, suites=["M04"])
    assert flat is not None and flat.value == 0.0 and flat.variance == 0.0
    assert flat.variance_ac is not None and flat.variance_ac > 0


def test_contrast_variance_matches_the_stratified_formula() -> None:
    # two strata (tasks) with equal numbers of worlds: equal weights
    records = []
    outcomes = {
        ("iron_armor", "vanilla"): [1, 1, 1, 0],
        ("iron_armor", "M01"): [1, 0, 0, 0],
        ("diamond", "vanilla"): [1, 1, 0, 0],
        ("diamond", "M01"): [0, 0, 0, 1],
    }
    for (task, rules), wins in outcomes.items():
        for i, win in enumerate(wins):
            records.append(
                make_record(
                    world=f"w-{i // 2}", task=task, rules=rules, repetition=i % 2, score=100 * win
                )
            )
    est = rie(PairIndex(records), SR)
    assert est is not None
    expected = stratified_difference_variance([Stratum(3, 4, 1, 4), Stratum(2, 4, 1, 4)])
    assert est.variance == pytest.approx(1e4 * expected)
    assert est.value == pytest.approx(100 * ((0.75 - 0.25) + (0.5 - 0.25)) / 2)
    ac = stratified_difference_variance([Stratum(3, 4, 1, 4), Stratum(2, 4, 1, 4)], corrected=True)
    assert est.variance_ac == pytest.approx(1e4 * ac)


def test_shared_vanilla_cell_enters_once_in_a_pooled_estimate() -> None:
    records = [make_record(world="w-1", score=100 * (i < 2), repetition=i) for i in range(4)]
    for suite in ("M01", "M02"):
        records += [
            make_record(world="w-1", rules=suite, score=100 * (i < 1), repetition=i)
            for i in range(4)
        ]
    est = rie(PairIndex(records), SR)
    assert est is not None
    # estimate = pV - (pM01 + pM02)/2: the Vanilla coefficient is 1, each Mirror one 1/2
    expected = binomial_variance(2, 4) + 0.25 * binomial_variance(1, 4) * 2
    assert est.variance == pytest.approx(1e4 * expected)


def test_score_variance_uses_the_sample_variance() -> None:
    records = [make_record(score=s, repetition=i) for i, s in enumerate([0, 50, 100])]
    records += [make_record(rules="M01", score=10, repetition=i) for i in range(3)]
    est = rie(PairIndex(records), SCORE)
    assert est is not None and est.variance_ac is None
    assert est.variance == pytest.approx(2500 / 3)
    assert est.half_width == pytest.approx(1.959964 * math.sqrt(2500 / 3))


@pytest.mark.parametrize("seed", range(8))
def test_disclosure_identity_rie_equals_gap_plus_delta(seed: int) -> None:
    records, _ = synthetic_study(seed=seed, agents=("react",), worlds=("plains-1", "taiga-1"))
    index = PairIndex(records)
    for suites in (None, ["M01"], ["M04"], ["M06"]):
        for measure in (SR, SCORE):
            split = disclosure_split(index, measure, suites=suites)
            assert split is not None
            assert split.rie.value == split.gap.value + split.delta.value
            direct = contrast(index.comparisons("vanilla", "hidden", suites=suites), measure)
            assert direct is not None
            assert math.isclose(split.rie.value, direct.value, rel_tol=1e-12, abs_tol=1e-9)
            assert split.vanilla - split.disclosed == pytest.approx(split.gap.value)
            assert split.disclosed - split.hidden == pytest.approx(split.delta.value)


def test_disclosure_split_uses_only_pairs_with_all_three_conditions() -> None:
    records = [
        make_record(world="w-1", score=100),
        make_record(world="w-1", rules="M01", score=0),
        make_record(world="w-1", rules="M01", disclosure="disclosed", score=100),
        make_record(world="w-2", score=100),
        make_record(world="w-2", rules="M01", score=0),  # no disclosed run: left out
    ]
    split = disclosure_split(PairIndex(records), SR)
    assert split is not None
    assert (split.rie.value, split.gap.value, split.delta.value) == (100.0, 0.0, 100.0)
    assert split.rie.comparisons == 1
    assert disclosure_split(PairIndex(records[:2]), SR) is None


def test_compared_set_rule() -> None:
    def runs(agent: str, model: str, task: str, wins: int, n: int = 4) -> list[EpisodeRecord]:
        return [
            make_record(agent=agent, model=model, task=task, score=100 * (i < wins), repetition=i)
            for i in range(n)
        ]

    records = (
        runs("react", "m1", "iron_armor", 2)  # exactly 50%: included (tie)
        + runs("react", "m1", "diamond", 3)
        + runs("xenon", "m1", "iron_armor", 4)
        + runs("xenon", "m1", "diamond", 1)  # 25% on diamond: out
        + runs("adam", "m1", "iron_armor", 4)  # no diamond runs: out
        + runs("react", "m2", "iron_armor", 4)
        + runs("react", "m2", "diamond", 4)
        + runs("direct", "m2", "enchantment", 4)
    )
    records += [
        make_record(agent="voyager", model="m1", task=t, disclosure="disclosed", score=100)
        for t in ("iron_armor", "diamond")
    ]
    assert compared_set(records) == {"m1": ["react"], "m2": ["react"]}
    assert compared_set(records, threshold=25.0)["m1"] == ["react", "xenon"]
    assert compared_set(records, threshold=60.0)["m1"] == []
