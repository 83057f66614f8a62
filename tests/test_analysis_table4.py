"""Synthetic ReAct records with the paper's cells give its Tables 4, 10 and 11 (ReAct columns).

The records hold, per model, task and condition, the success counts of
``TABLE4_CELLS`` (their per-model sums are the paper's Table 10). The per-task split
is not printed in the paper; the one used is consistent with everything its text
states, and docs/analysis.md ("Reproducing Table 11") gives the range of Q over
every split that is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirrorcraft.analysis.summary import summarize
from tests.test_analysis_cli import run_cli
from tests.test_analysis_helpers import table4_records, write_jsonl

# Suite: (hidden SR, disclosed SR, RIE_SR, Gap, ΔSR) as printed in the paper's Table 4.
TABLE4 = {
    "M01": ("37.2", "42.8", "+26.7", "+21.1", "+5.6"),
    "M02": ("67.2", "70.0", "-3.3", "-6.1", "+2.8"),
    "M03": ("67.2", "73.3", "-3.3", "-9.4", "+6.1"),
    "M04": ("22.2", "31.7", "+41.7", "+32.2", "+9.4"),
    "M05": ("58.9", "64.4", "+5.0", "-0.6", "+5.6"),
    "M06": ("65.0", "68.9", "-1.1", "-5.0", "+3.9"),
    "Pooled": ("53.0", "58.5", "+10.9", "+5.4", "+5.6"),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("t4") / "react.jsonl", table4_records())


def _section(text: str, title_start: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title_start))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_printed_disclosure_table_matches_the_paper(
    results: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["analyze", str(results)], capsys)
    assert code == 0, err
    section = _section(out, "Disclosure split for react, pooled")
    assert "(Vanilla SR 63.9%)" in section[0]
    header = section[1].split()
    assert header[:7] == ["Suite", "Hidden", "SR", "Disclosed", "SR", "RIE_SR", "Gap"]
    rows = {line.split()[0]: line.split() for line in section[3:] if line and line[0] != " "}
    for suite, expected in TABLE4.items():
        assert tuple(rows[suite][1:6]) == expected, suite


def test_json_split_identity_and_values(results: Path) -> None:
    from mirrorcraft.analysis.loading import load_records

    doc = summarize(load_records(results))
    rows = {r["suite"]: r for r in doc["disclosure"] if r["model"] == "all"}
    for suite, (hidden, disclosed, rie_sr, gap, delta) in TABLE4.items():
        row = rows["pooled" if suite == "Pooled" else suite]
        assert row["rie_sr"] == row["gap_sr"] + row["delta_sr"]
        assert f"{row['hidden_sr']:.1f}" == hidden
        assert f"{row['disclosed_sr']:.1f}" == disclosed
        assert f"{row['rie_sr']:+.1f}" == rie_sr
        assert f"{row['gap_sr']:+.1f}" == gap
        assert f"{row['delta_sr']:+.1f}" == delta
        assert row["vanilla_sr"] == pytest.approx(100 * 115 / 180)
        assert row["comparisons"] == (360 if suite == "Pooled" else 60)
    assert json.dumps(doc, allow_nan=False)


def test_per_model_split_rows_exist(results: Path) -> None:
    from mirrorcraft.analysis.loading import load_records

    doc = summarize(load_records(results))
    models = {r["model"] for r in doc["disclosure"]}
    assert models == {"all", "gemini", "deepseek"}
    for r in doc["disclosure"]:
        if r["rie_sr"] is not None:
            assert r["rie_sr"] == r["gap_sr"] + r["delta_sr"]


# Table 10: (RIE_SR, Gap, ΔSR) per suite and model, as printed.
TABLE10 = {
    "gemini": {
        "M01": ("+33.3", "+21.1", "+12.2"),
        "M02": ("-8.9", "-6.7", "-2.2"),
        "M03": ("-2.2", "-6.7", "+4.4"),
        "M04": ("+35.6", "+27.8", "+7.8"),
        "M05": ("+10.0", "+1.1", "+8.9"),
        "M06": ("+3.3", "-6.7", "+10.0"),
        "pooled": ("+11.9", "+5.0", "+6.9"),
    },
    "deepseek": {
        "M01": ("+20.0", "+21.1", "-1.1"),
        "M02": ("+2.2", "-5.6", "+7.8"),
        "M03": ("-4.4", "-12.2", "+7.8"),
        "M04": ("+47.8", "+36.7", "+11.1"),
        "M05": ("0.0", "-2.2", "+2.2"),
        "M06": ("-5.6", "-3.3", "-2.2"),
        "pooled": ("+10.0", "+5.7", "+4.3"),
    },
}

# Table 11, ReAct columns: 95% half-widths of (RIE_SR, Gap, ΔSR) as printed.
TABLE11 = {
    "M01": (7.6, 7.5, 8.4),
    "M02": (6.3, 5.9, 5.6),
    "M03": (5.8, 6.5, 5.6),
    "M04": (7.1, 7.5, 8.0),
    "M05": (6.8, 6.4, 6.6),
    "M06": (6.7, 6.3, 6.5),
    "pooled": (5.1, 5.1, 2.8),
}
# No split of the cells over tasks reaches these printed half-widths with the paper's
# formula (docs/analysis.md); the nearest possible values are one unit lower or higher.
TABLE11_NEAREST = {("M03", 0): 5.7, ("M03", 2): 5.7, ("pooled", 0): 5.0, ("pooled", 1): 5.0}


def _f(x: float) -> str:
    text = f"{x:+.1f}"
    return "0.0" if text in ("+0.0", "-0.0") else text


def test_table10_per_model_split(results: Path) -> None:
    from mirrorcraft.analysis.loading import load_records

    doc = summarize(load_records(results))
    rows = {(r["model"], r["suite"]): r for r in doc["disclosure"]}
    for model, suites in TABLE10.items():
        for suite, expected in suites.items():
            r = rows[(model, suite)]
            assert (_f(r["rie_sr"]), _f(r["gap_sr"]), _f(r["delta_sr"])) == expected, (model, suite)


def test_table11_react_intervals(results: Path) -> None:
    from mirrorcraft.analysis.loading import load_records

    doc = summarize(load_records(results))
    rows = {r["suite"]: r for r in doc["disclosure"] if r["model"] == "all"}
    for suite, printed in TABLE11.items():
        r = rows[suite]
        for i, key in enumerate(("rie_sr_ci", "gap_sr_ci", "delta_sr_ci")):
            want = TABLE11_NEAREST.get((suite, i), printed[i])
            assert round(r[key]["half_width"], 1) == want, (suite, key)
            assert abs(want - printed[i]) <= 0.1 + 1e-9


def test_table11_cochran_q_of_the_disclosure_split(results: Path) -> None:
    """Q = 2.1 (p = 0.84, 0.87 corrected) for ΔSR and Q = 196 (p < 0.001) for the Gap."""
    from mirrorcraft.analysis.loading import load_records

    tests = {
        t["quantity"]: t
        for t in summarize(load_records(results))["disclosure_tests"]
        if t["model"] == "all"  # appendix C pools the two models
    }
    delta, gap = tests["delta_sr"], tests["gap_sr"]
    assert (delta["variance"], gap["variance"]) == ("disclosed + hidden", "disclosed")
    assert f"{delta['q']:.1f}" == "2.1" and delta["df"] == 5
    assert f"{delta['p']:.2f}" == "0.84" and f"{delta['p_ac']:.2f}" == "0.87"
    assert round(gap["q"]) == 196 and gap["df"] == 5 and gap["p"] < 0.001
    # the full pair variance (the Vanilla side counted in every suite) roughly halves it
    from mirrorcraft.analysis.paired import SR, PairIndex, disclosure_split
    from mirrorcraft.analysis.stats import cochran_q

    index = PairIndex(load_records(results))
    gaps = [disclosure_split(index, SR, suites=[s]) for s in TABLE4 if s != "Pooled"]
    full = cochran_q([g.gap.value for g in gaps if g], [g.gap.variance for g in gaps if g])
    assert full is not None and 105 < full.q < 115


def test_table11_q_by_hand_with_scipy(results: Path) -> None:
    """Q of the Gap from the cell counts alone: weights 1/var(disclosed SR), var stratified."""
    scipy_stats = pytest.importorskip("scipy.stats")
    from tests.test_analysis_helpers import TABLE4_CELLS, TABLE4_VANILLA

    vanilla = sum(sum(v) for v in TABLE4_VANILLA.values()) / 180
    gaps, variances = [], []
    for cells in TABLE4_CELLS.values():
        disclosed = [x for per_task in cells["disclosed"].values() for x in per_task]
        gaps.append(100 * (vanilla - sum(disclosed) / 180))
        variances.append(1e4 * sum((x / 30) * (1 - x / 30) / 30 for x in disclosed) / 36)
    w = [1 / v for v in variances]
    mean = sum(wi * g for wi, g in zip(w, gaps, strict=True)) / sum(w)
    q = sum(wi * (g - mean) ** 2 for wi, g in zip(w, gaps, strict=True))
    from mirrorcraft.analysis.loading import load_records

    tests = {
        t["quantity"]: t
        for t in summarize(load_records(results))["disclosure_tests"]
        if t["model"] == "all"  # appendix C pools the two models
    }
    assert tests["gap_sr"]["q"] == pytest.approx(q, rel=1e-9)
    assert tests["gap_sr"]["p"] == pytest.approx(float(scipy_stats.chi2.sf(q, 5)), rel=1e-6)
