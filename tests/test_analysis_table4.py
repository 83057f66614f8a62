"""Synthetic ReAct records with the paper's Table 4 cells give its printed RIE, Gap and ΔSR."""

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
