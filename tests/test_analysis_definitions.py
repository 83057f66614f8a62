"""The paper's definitions pinned on hand-built records, with expected values worked out here.

Each expected value is computed in the test from the cell counts (by hand or with scipy),
never copied from the code's output: the Gap and ΔSR tests across suites with a shared
Vanilla cell, the fixed Bonferroni family with an undefined test, the horizon over one
budget with unequal task counts and mixed budgets, paired columns with unpaired episodes,
the exact variance of an unbalanced design, a single pair, degenerate intervals and the
oracle as a control.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from mirrorcraft.analysis.paired import SCORE, SR, PairIndex, rie
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.runner.records import EpisodeRecord
from tests.test_analysis_cli import run_cli
from tests.test_analysis_helpers import make_record, write_jsonl

Z = 1.959964


def _cell(n: int, wins: int, **kw: object) -> list[EpisodeRecord]:
    """``n`` episodes of one condition in world w-0.. (two repetitions per world)."""
    task = str(kw.pop("task", "diamond"))
    fail = {"diamond": 25, "iron_armor": 35, "enchantment": 45}[task]
    return [
        make_record(
            world=f"plains-{i // 2}",
            repetition=i % 2,
            task=task,
            score=100 if i < wins else fail,
            **kw,  # type: ignore[arg-type]
        )
        for i in range(n)
    ]


def _q(values: list[float], variances: list[float]) -> float:
    w = [1 / v for v in variances]
    mean = sum(wi * x for wi, x in zip(w, values, strict=True)) / sum(w)
    return sum(wi * (x - mean) ** 2 for wi, x in zip(w, values, strict=True))


# --- disclosure split: Q of RIE, Gap and ΔSR across suites --------------------------------------

HIDDEN = {"M01": 1, "M02": 4, "M03": 8}
DISCLOSED = {"M01": 2, "M02": 5, "M03": 9}


def _split_records() -> list[EpisodeRecord]:
    records = _cell(10, 6)  # the Vanilla cell every suite shares
    for suite in HIDDEN:
        records += _cell(10, HIDDEN[suite], rules=suite)
        records += _cell(10, DISCLOSED[suite], rules=suite, disclosure="disclosed")
    return records


def test_gap_q_uses_the_disclosed_variance_only() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    tests = {t["quantity"]: t for t in summarize(_split_records())["disclosure_tests"]}

    def var(x: int) -> float:
        return 1e4 * (x / 10) * (1 - x / 10) / 10

    gaps = [100 * (0.6 - DISCLOSED[s] / 10) for s in HIDDEN]
    q_gap = _q(gaps, [var(DISCLOSED[s]) for s in HIDDEN])
    assert tests["gap_sr"]["q"] == pytest.approx(q_gap, rel=1e-12)
    assert tests["gap_sr"]["p"] == pytest.approx(float(scipy_stats.chi2.sf(q_gap, 2)), rel=1e-9)
    # Δ = disclosed - hidden has no shared side: both variances
    deltas = [10 * (DISCLOSED[s] - HIDDEN[s]) for s in HIDDEN]
    q_delta = _q(deltas, [var(DISCLOSED[s]) + var(HIDDEN[s]) for s in HIDDEN])
    assert tests["delta_sr"]["q"] == pytest.approx(q_delta, rel=1e-12)
    # RIE = Vanilla - hidden shares the Vanilla cell: the hidden variance only
    ries = [100 * (0.6 - HIDDEN[s] / 10) for s in HIDDEN]
    assert tests["rie_sr"]["q"] == pytest.approx(
        _q(ries, [var(HIDDEN[s]) for s in HIDDEN]), rel=1e-12
    )
    # with the Vanilla variance in every suite (the old reading) Q would be much smaller
    assert _q(gaps, [var(6) + var(DISCLOSED[s]) for s in HIDDEN]) < 0.6 * q_gap
    assert {t["quantity"]: t["variance"] for t in tests.values()} == {
        "rie_sr": "hidden",
        "gap_sr": "disclosed",
        "delta_sr": "disclosed + hidden",
    }


def test_disclosure_tests_are_also_given_for_each_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Section 4.1 computes Cochran's Q "for each model separately", appendix C pools the
    models: the pooled tests come first ("all"), then one set per model."""
    scipy_stats = pytest.importorskip("scipy.stats")
    other_hidden = {"M01": 3, "M02": 3, "M03": 7}
    other_disclosed = {"M01": 8, "M02": 4, "M03": 6}
    records = _split_records()
    records += _cell(10, 5, model="m2")
    for suite in HIDDEN:
        records += _cell(10, other_hidden[suite], rules=suite, model="m2")
        records += _cell(
            10, other_disclosed[suite], rules=suite, disclosure="disclosed", model="m2"
        )
    tests = summarize(records)["disclosure_tests"]
    assert [(t["model"], t["quantity"]) for t in tests] == [
        (model, quantity)
        for model in ("all", "m1", "m2")
        for quantity in ("rie_sr", "gap_sr", "delta_sr")
    ]

    def var(x: int) -> float:
        return 1e4 * (x / 10) * (1 - x / 10) / 10

    by = {(t["model"], t["quantity"]): t for t in tests}
    # m2 alone: Δ = disclosed - hidden per suite, weighted by both sides' variances
    deltas = [10 * (other_disclosed[s] - other_hidden[s]) for s in HIDDEN]
    q = _q(deltas, [var(other_disclosed[s]) + var(other_hidden[s]) for s in HIDDEN])
    assert by[("m2", "delta_sr")]["q"] == pytest.approx(q, rel=1e-12)
    assert by[("m2", "delta_sr")]["p"] == pytest.approx(float(scipy_stats.chi2.sf(q, 2)))
    # m1 alone is the single-model case of the test above
    gaps = [100 * (0.6 - DISCLOSED[s] / 10) for s in HIDDEN]
    assert by[("m1", "gap_sr")]["q"] == pytest.approx(
        _q(gaps, [var(DISCLOSED[s]) for s in HIDDEN]), rel=1e-12
    )
    path = write_jsonl(tmp_path / "two.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    line = next(
        x for x in out.splitlines() if x.startswith("react") and " m2 " in x and "delta_sr" in x
    )
    assert f"{q:.2f}" in line.split()


def test_disclosure_tests_table_names_the_variance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", _split_records())
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("react") and "gap_sr" in x)
    assert line.split()[:4] == ["react", "all", "gap_sr", "disclosed"]


# --- within-suite tests: the Bonferroni family ---------------------------------------------------


def _compared_records() -> list[EpisodeRecord]:
    """m1: react and xenon compared (M02 undefined: no variance anywhere); m2: react alone."""
    out: list[EpisodeRecord] = []
    for task in ("iron_armor", "diamond"):
        kw = {"task": task}
        out += _cell(4, 4, agent="react", **kw) + _cell(4, 3, agent="xenon", **kw)
        out += _cell(4, 1, agent="react", rules="M01", **kw)
        out += _cell(4, 3, agent="xenon", rules="M01", **kw)
        out += _cell(4, 4, agent="react", rules="M02", **kw)  # RIE 0 without any variance
        out += _cell(4, 2, agent="xenon", rules="M02", **kw)
        out += _cell(4, 4, agent="react", model="m2", **kw)
        out += _cell(4, 2, agent="react", model="m2", rules="M01", **kw)
        out += _cell(4, 3, agent="react", model="m2", rules="M02", **kw)
    return out


def test_bonferroni_family_is_every_suite_and_model_with_undefined_tests() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    w = summarize(_compared_records())["within_suite"]
    assert w["compared"] == {"m1": ["react", "xenon"], "m2": ["react"]}
    assert w["family_size"] == 2 * 2  # suites M01, M02 times models m1, m2
    tests = {(t["suite"], t["model"]): t for t in w["tests"]}
    assert set(tests) == {("M01", "m1"), ("M02", "m1"), ("M01", "m2"), ("M02", "m2")}
    # M01, m1: react RIE = (1 - 1/4) over both tasks; xenon (3/4 - 3/4) = 0
    p = 100 * 1 / 4
    react = (100 - p, 2 * 1e4 * (0.25 * 0.75 / 4) / 4)  # Vanilla p=1 adds no variance
    xenon = (0.0, 2 * 1e4 * (2 * 0.75 * 0.25 / 4) / 4)
    q = _q([react[0], xenon[0]], [react[1], xenon[1]])
    t = tests[("M01", "m1")]
    assert t["q"] == pytest.approx(q, rel=1e-12) and t["df"] == 1
    p_value = float(scipy_stats.chi2.sf(q, 1))
    assert t["p"] == pytest.approx(p_value, rel=1e-9)
    assert t["p_bonferroni"] == pytest.approx(min(1.0, 4 * p_value), rel=1e-9)
    # undefined tests stay in the family and say why
    assert (
        tests[("M02", "m1")]["q"] is None and "zero variance" in tests[("M02", "m1")]["undefined"]
    )
    assert tests[("M02", "m1")]["p_ac"] is not None  # the corrected variance is never zero
    assert tests[("M01", "m2")]["undefined"] == "fewer than two estimates"
    assert tests[("M01", "m2")]["p_bonferroni"] is None


def test_undefined_tests_print_as_undefined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "c.jsonl", _compared_records())
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert "(Bonferroni over 4 tests)" in out
    lines = [x.split() for x in out.splitlines() if x.startswith(("M01 ", "M02 "))]
    rows = {(x[0], x[1]): x for x in lines if len(x) > 3 and x[1] in ("m1", "m2")}
    assert rows[("M02", "m1")][3] == "undefined"
    assert rows[("M01", "m2")][3] == "undefined"


def test_a_suite_run_only_with_disclosed_rules_is_not_in_the_bonferroni_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """react ran M05 only with the rules disclosed: the within-suite tests (hidden rules)
    have nothing to test there, but M05 counted in the family (6 instead of 4) and raised
    every adjusted p by half. It is listed as undefined, outside the family, and said so."""
    records = _compared_records()
    for task in ("iron_armor", "diamond"):
        records += _cell(4, 2, agent="react", rules="M05", disclosure="disclosed", task=task)
    w = summarize(records)["within_suite"]
    assert w["family_size"] == 4  # M01 and M02, each with m1 and m2, as without M05
    tests = {(t["suite"], t["model"]): t for t in w["tests"]}
    for model in ("m1", "m2"):
        t = tests[("M05", model)]
        assert t["k"] == 0 and t["in_family"] is False and "hidden rules" in t["undefined"]
    base = summarize(_compared_records())["within_suite"]["tests"][0]
    assert tests[("M01", "m1")]["p_bonferroni"] == pytest.approx(base["p_bonferroni"])
    path = write_jsonl(tmp_path / "c.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0 and "(Bonferroni over 4 tests)" in out
    assert "Not in the family: M05/m1, M05/m2" in out


def test_the_bonferroni_family_of_testable_tests_is_an_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The paper's design has no undefined Q test, so whether one counts in the family is a
    reading: ``--bonferroni testable`` counts only the tests with at least two compared
    configurations' RIEs (here M01 and M02 with m1, not m2's one-configuration tests)."""
    design = summarize(_compared_records())["within_suite"]
    testable = summarize(_compared_records(), family="testable")["within_suite"]
    assert (design["family"], design["family_size"]) == ("design", 4)
    assert (testable["family"], testable["family_size"]) == ("testable", 2)
    tests = {(t["suite"], t["model"]): t for t in testable["tests"]}
    assert [k for k, t in tests.items() if t["in_family"]] == [("M01", "m1"), ("M02", "m1")]
    p = tests[("M01", "m1")]["p"]
    assert tests[("M01", "m1")]["p_bonferroni"] == pytest.approx(min(1.0, 2 * p), rel=1e-12)
    assert tests[("M01", "m2")]["in_family"] is False and tests[("M01", "m2")]["q"] is None
    path = write_jsonl(tmp_path / "c.jsonl", _compared_records())
    code, out, _ = run_cli(["analyze", str(path), "--bonferroni", "testable"], capsys)
    assert code == 0 and "(Bonferroni over 2 tests)" in out
    assert "Not in the family: M01/m2, M02/m2 (fewer than two compared configurations" in out
    code, out, _ = run_cli(["analyze", str(path), "--json"], capsys)
    assert code == 0 and json.loads(out)["within_suite"]["family"] == "design"


# --- horizon -----------------------------------------------------------------------------------


def _success_at(step: int | None, budget: int, **kw: object) -> EpisodeRecord:
    trace = [0] * (step - 1) + [100] if step else [0] * budget
    return make_record(trace=trace, budget=budget, **kw)  # type: ignore[arg-type]


def _horizon_records() -> list[EpisodeRecord]:
    out = []
    # budget 200: four Iron Armor episodes and two Diamond ones (unequal task counts)
    for i, step in enumerate((50, 120, 180, None)):
        out.append(_success_at(step, 200, task="iron_armor", world=f"plains-{i}"))
    for i, step in enumerate((90, None)):
        out.append(_success_at(step, 200, task="diamond", world=f"plains-{i}"))
    # budget 150: three more Iron Armor episodes, all of which succeed early or not at all
    for i, step in enumerate((30, 140, None)):
        out.append(_success_at(step, 150, task="iron_armor", world=f"taiga-{i}"))
    return out


def test_horizon_averages_tasks_over_one_budget_and_reports_short_budgets_apart() -> None:
    h = summarize(_horizon_records())["horizon"]
    assert h["checkpoints"] == [100, 150, 200] and h["budget_at_least"] == 200
    (row,) = h["rows"]
    curve = row["vanilla"]
    assert curve["episodes"] == 6 and curve["tasks"] == 2
    # each task weighted equally: Iron Armor k/4, Diamond j/2
    expected = {100: (1 / 4, 1 / 2), 150: (2 / 4, 1 / 2), 200: (3 / 4, 1 / 2)}
    for c, (iron, diamond) in expected.items():
        assert curve["sr"][str(c)] == pytest.approx(100 * (iron + diamond) / 2)
        var = 1e4 * (iron * (1 - iron) / 4 + diamond * (1 - diamond) / 2) / 4
        assert curve["ci"][str(c)]["half_width"] == pytest.approx(Z * math.sqrt(var))
    values = [curve["sr"][str(c)] for c in h["checkpoints"]]
    assert values == sorted(values)  # the same trajectories: never down
    (short,) = h["short_budgets"]
    assert short["budget"] == 150 and short["checkpoints"] == [100, 150]
    assert short["vanilla"]["sr"] == {"100": pytest.approx(100 / 3), "150": pytest.approx(200 / 3)}
    assert short["vanilla"]["episodes"] == 3


def test_horizon_tables_print_intervals_and_short_budgets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "h.jsonl", _horizon_records())
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    header = next(x for x in out.splitlines() if "Vanilla @100" in x)
    assert header.split()[2:6] == ["Vanilla", "@100", "95%", "Mirror"]
    line = next(x for x in out.splitlines() if x.startswith("react ") and "±" in x)
    assert line.split()[2:4] == ["37.5", f"±{Z * math.sqrt(1e4 * (3 / 64 + 1 / 8) / 4):.1f}"]
    assert "whose budget stops before 200 actions" in out


# --- paired columns, unpaired episodes, exact variances, degenerate cells ------------------------


def _unpaired_records() -> list[EpisodeRecord]:
    return [
        make_record(world="plains-1", task="iron_armor", score=100),
        make_record(world="plains-1", task="iron_armor", score=35, repetition=1),
        make_record(world="plains-1", task="iron_armor", rules="M01", score=100),
        make_record(world="plains-2", task="iron_armor", score=100),  # no Mirror twin
        make_record(world="plains-3", task="iron_armor", rules="M01", score=35),  # no Vanilla
        make_record(world="plains-3", task="iron_armor", rules="M01", score=15, repetition=1),
    ]


def test_columns_use_the_same_pairs_as_the_rie() -> None:
    doc = summarize(_unpaired_records())
    (row,) = doc["configurations"]
    assert row["paired"] is True and row["comparisons"] == 1
    assert row["vanilla"] == {"episodes": 2, "score": 67.5, "sr": 50.0}
    assert row["mirror"] == {"episodes": 1, "score": 100.0, "sr": 100.0}
    assert row["rie_sr"] == pytest.approx(row["vanilla"]["sr"] - row["mirror"]["sr"])
    assert row["rie_sc"] == pytest.approx(row["vanilla"]["score"] - row["mirror"]["score"])
    assert row["unpaired"] == {"vanilla": 1, "mirror": 2}
    suite = doc["suites"][0]
    assert suite["mirror"]["sr"] == 100.0 and suite["unpaired"]["mirror"] == 2


def test_unpaired_episodes_are_named_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_jsonl(tmp_path / "u.jsonl", _unpaired_records())
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert "react (m1): 1 Vanilla without a Mirror twin, 2 Mirror without a Vanilla twin" in out


def test_unbalanced_design_uses_the_exact_variance() -> None:
    records = [
        *_cell(2, 1),  # plains-0: Vanilla 1/2
        *_cell(1, 1, rules="M01"),  # plains-0: M01 1/1
        *[
            make_record(world="plains-7", repetition=i, score=100 if i == 0 else 25)
            for i in range(4)
        ],  # plains-7: Vanilla 1/4
        *[make_record(world="plains-7", rules="M01", repetition=i, score=25) for i in range(2)],
    ]
    est = rie(PairIndex(records), SR)
    assert est is not None
    assert est.value == pytest.approx(100 * ((0.5 - 1) + (0.25 - 0)) / 2)
    # each episode weighs coef/n_cell; Var = sum of weight² x the stratum's p(1-p)
    pv, pm = 2 / 6, 1 / 3
    vanilla = 2 * (0.5 / 2) ** 2 + 4 * (0.5 / 4) ** 2
    mirror = 1 * (0.5 / 1) ** 2 + 2 * (0.5 / 2) ** 2
    exact = 1e4 * (vanilla * pv * (1 - pv) + mirror * pm * (1 - pm))
    assert est.variance == pytest.approx(exact, rel=1e-12)
    # the pooled-stratum shortcut (coefficients summed per stratum) would be narrower
    shortcut = 1e4 * (pv * (1 - pv) / 6 + pm * (1 - pm) / 3)
    assert shortcut < 0.9 * exact


def test_balanced_design_keeps_the_papers_stratified_variance() -> None:
    records = _cell(6, 4) + _cell(6, 1, rules="M01")  # three worlds, two repetitions each
    est = rie(PairIndex(records), SR)
    assert est is not None
    expected = 1e4 * ((4 / 6) * (2 / 6) / 6 + (1 / 6) * (5 / 6) / 6)
    assert est.variance == pytest.approx(expected, rel=1e-12)
    assert est.degenerate is None


def test_a_single_pair_has_a_marked_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = [
        make_record(task="iron_armor", score=100),
        make_record(task="iron_armor", rules="M01", score=35),
    ]
    index = PairIndex(records)
    sr, sc = rie(index, SR), rie(index, SCORE)
    assert sr is not None and sc is not None
    assert (sr.value, sr.variance, sr.comparisons) == (100.0, 0.0, 1)
    assert sr.degenerate == sc.degenerate == "a cell with one episode"
    ac = 1e4 * 2 * (0.6 * 0.4 / 5)  # p~ = 3/5 and 2/5, n~ = 5 on each side
    assert sr.variance_ac == pytest.approx(ac)
    path = write_jsonl(tmp_path / "one.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert f"±0.0 (AC ±{Z * math.sqrt(ac):.1f})" in out
    assert "±0.0 (n too small)" in out
    assert "±0.0 " not in out.replace("±0.0 (AC", "").replace("±0.0 (n too", "")


def test_sr_of_zero_or_one_hundred_in_a_cell_is_marked() -> None:
    records = _cell(4, 4) + _cell(4, 1, rules="M01")
    est = rie(PairIndex(records), SR)
    assert est is not None and est.degenerate == "a cell with SR 0% or 100%"
    assert est.variance == pytest.approx(1e4 * 0.25 * 0.75 / 4)  # the Vanilla side adds 0
    doc = summarize(records)
    assert doc["suites"][0]["rie_sr_ci"]["degenerate"] == "a cell with SR 0% or 100%"


# --- IRR and RL intervals -------------------------------------------------------------------------


def test_irr_and_rl_intervals_by_hand() -> None:
    a, b = ["mine", "iron_ore"], ["smelt", "raw_iron"]
    records = [
        make_record(  # encounters at 1 (repeated, recovers at 2) and 3 (not repeated, at 3)
            rules="M01", trace=[0, 10, 25, 25], signatures=[a, a, a, b],
            encounters=[(1, "r1"), (3, "r2")],
        ),
        make_record(  # encounter at 2 (repeated), Score rises at 4: latency 2
            rules="M01", repetition=1, trace=[10, 10, 10, 25], signatures=[a, b, b, b],
            encounters=[(2, "r1")],
        ),
    ]  # fmt: skip
    d = summarize(records)["diagnostics"]
    (row,) = d["rows"]
    cell = row["suites"]["M01"]
    p = 2 / 3
    assert cell["irr"] == pytest.approx(100 * p) and cell["irr_n"] == 3
    assert cell["irr_ci"]["half_width"] == pytest.approx(Z * math.sqrt(1e4 * p * (1 - p) / 3))
    latencies = [1, 0, 2]
    mean = sum(latencies) / 3
    var = sum((x - mean) ** 2 for x in latencies) / 2 / 3
    assert cell["rl"] == pytest.approx(mean)
    assert cell["rl_ci"]["half_width"] == pytest.approx(Z * math.sqrt(var))
    assert row["rl_mean_ci"]["half_width"] == pytest.approx(Z * math.sqrt(var))  # one suite


# --- the oracle is a control -------------------------------------------------------------------


def _with_oracle() -> list[EpisodeRecord]:
    out: list[EpisodeRecord] = []
    for task in ("iron_armor", "diamond"):
        for agent in ("react", "xenon", "oracle"):
            out += _cell(4, 3, agent=agent, task=task)
            out += _cell(4, 4 if agent == "oracle" else 1, agent=agent, task=task, rules="M01")
    return out


def test_the_oracle_is_only_in_the_controls_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = summarize(_with_oracle())
    assert doc["episodes"]["controls"] == 16 and doc["episodes"]["total"] == 32
    assert "oracle" not in json.dumps({k: v for k, v in doc.items() if k != "controls"})
    assert doc["within_suite"]["compared"] == {"m1": ["react", "xenon"]}
    assert doc["within_suite"]["tests"][0]["agents"] == ["react", "xenon"]
    # pooled suite RIE over react and xenon only: (3/4 - 1/4) for each
    assert doc["suites"][-1]["rie_sr"] == pytest.approx(50.0)
    controls = {(r["agent"], r["rules"]): r for r in doc["controls"]}
    assert (
        controls[("oracle", "M01")]["sr"] == 100.0 and controls[("oracle", "vanilla")]["sr"] == 75.0
    )
    path = write_jsonl(tmp_path / "o.jsonl", _with_oracle())
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    before, _, after = out.partition("Controls (not benchmark results)")
    assert "oracle" not in before.split("\n", 1)[1] and after.count("oracle") >= 2
    assert "+ 16 control episode(s)" in out


def test_disclosure_split_counts_what_it_leaves_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = _split_records()
    # a world run hidden only (no disclosed twin) and one Vanilla world without Mirror runs
    records += [make_record(world="taiga-1", rules="M01", score=25, repetition=i) for i in range(3)]
    records += [make_record(world="taiga-1", score=100), make_record(world="taiga-2", score=100)]
    doc = summarize(records)
    row = next(r for r in doc["disclosure"] if r["suite"] == "M01" and r["model"] == "all")
    assert row["unpaired"] == {"vanilla": 2, "hidden": 3, "disclosed": 0}
    assert row["hidden_sr"] == pytest.approx(10.0)  # only the complete pairs: 1/10
    path = write_jsonl(tmp_path / "d.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert (
        "Left out (their pair was not run in all three conditions): M01: 2 vanilla, 3 hidden" in out
    )


def test_rows_without_any_pair_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [
        make_record(world="plains-1", task="iron_armor", score=100),
        make_record(world="plains-2", task="iron_armor", rules="M04", score=35),
    ]
    doc = summarize(records)
    (row,) = doc["configurations"]
    assert row["paired"] is False and row["rie_sr"] is None
    assert row["vanilla"]["sr"] == 100.0 and row["mirror"]["sr"] == 0.0
    assert doc["suites"][0]["paired"] is False
    path = write_jsonl(tmp_path / "n.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert "No Vanilla–Mirror pair (columns over all episodes, no RIE): react (m1)." in out
    assert "No Vanilla–Mirror pair (columns over all episodes, no RIE): M04." in out
    code, _, _ = run_cli(["report", str(path), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0
