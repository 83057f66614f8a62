"""What a reader of the report sees: the Vanilla/Mirror figure's numbers, folded encounters,
titles that say what they mean, and the same checkpoints in analyze, report and run."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from mirrorcraft.analysis.summary import summarize
from mirrorcraft.report.plots import sides_by_suite_png
from mirrorcraft.report.stat_tables import cochran
from mirrorcraft.report.viewer import _encounters
from mirrorcraft.runner.records import EncounterRecord
from tests.test_analysis_helpers import make_record


def _cell(rules: str, world: str, scores: list[int], task: str = "diamond") -> list:
    return [
        make_record(rules=rules, world=world, task=task, score=s, repetition=i)
        for i, s in enumerate(scores)
    ]


def test_the_figure_shows_both_sides_of_each_rie_with_their_intervals() -> None:
    # Two worlds; Vanilla 2/2 and 1/2 successes, M04 1/2 and 0/2.
    records = [
        *_cell("vanilla", "plains-1", [100, 100]),
        *_cell("vanilla", "taiga-1", [100, 0]),
        *_cell("M04", "plains-1", [100, 0]),
        *_cell("M04", "taiga-1", [0, 0]),
    ]
    row = next(r for r in summarize(records)["configuration_suites"] if r["suite"] == "M04")
    # Mean over the two comparisons of each side's cell mean.
    assert row["vanilla_sr"] == pytest.approx(75.0) and row["mirror_sr"] == pytest.approx(25.0)
    assert row["rie_sr"] == pytest.approx(row["vanilla_sr"] - row["mirror_sr"])
    # One stratum (model, task, agent, budget) per side: binomial p(1-p) of the pooled side,
    # times sum over cells of (1/2)^2 / 2 = 1/4.
    for side, p in (("vanilla", 0.75), ("mirror", 0.25)):
        half = 1.959964 * math.sqrt(1e4 * p * (1 - p) / 4)
        assert row[f"{side}_sr_ci"]["half_width"] == pytest.approx(half, rel=1e-4)
    assert row["vanilla_score"] == pytest.approx(75.0)
    png = sides_by_suite_png(summarize(records))
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"


def test_no_figure_without_mirror_runs() -> None:
    assert sides_by_suite_png(summarize(_cell("vanilla", "plains-1", [100]))) is None


def test_repeated_encounters_fold_into_one_row() -> None:
    record = make_record(rules="M04", score=0, trace=[0] * 130)
    record.encounters = [
        EncounterRecord(i, "minecraft:blocks/iron_ore", "loot", ["mine", "iron_ore"], 1, 9)
        for i in range(1, 126)
    ] + [
        EncounterRecord(126, "minecraft:blocks/coal_ore", "loot", ["mine", "coal_ore"], 1, 9),
        EncounterRecord(127, "minecraft:blocks/iron_ore", "loot", ["mine", "iron_ore"], 1, 9),
    ]
    html = _encounters(record)
    assert "1–125 (×125)" in html
    assert html.count("<tr") == 1 + 3  # header, the folded run, coal, iron again
    assert "127 encounters in 3 rows" in html


def test_the_q_table_never_claims_a_family_of_zero_tests() -> None:
    # No suite has Mirror runs: the family is empty, and the table says why.
    table = cochran(summarize(_cell("vanilla", "plains-1", [100, 100])))
    assert table is not None
    assert "Bonferroni over" not in table.title
    assert any("No Q test is defined" in n for n in table.notes)
    # One suite and one model with a compared configuration: a family of one test, singular.
    vanilla = [
        *_cell("vanilla", "plains-1", [100]),
        *_cell("vanilla", "plains-1", [100], "iron_armor"),
    ]
    one = cochran(summarize([*vanilla, *_cell("M04", "plains-1", [0])]))
    assert one is not None and one.title.endswith("(Bonferroni over 1 test)")
    # Without a compared configuration (Vanilla SR 0%) no test is planned: no family at all.
    none = cochran(summarize([*_cell("vanilla", "plains-1", [0]), *_cell("M04", "plains-1", [0])]))
    assert none is not None and "Bonferroni over" not in none.title


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_analyze_and_report_use_the_runs_own_checkpoints(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "name": "cp",
                "worlds": ["plains-1"],
                "rules": ["vanilla", "M04"],
                "tasks": ["diamond"],
                "agents": ["vanilla-planner"],
                "checkpoints": [10, 20],
            }
        )
    )
    out = tmp_path / "out"
    assert _cli("run", str(spec), "--out", str(out)).returncode == 0
    db = str(out / "results.sqlite")
    analyzed = json.loads(_cli("analyze", db, "--json").stdout)
    assert analyzed["horizon"]["requested"] == [10, 20]
    report = _cli("report", db, "--out", str(tmp_path / "rep"), "--no-viewer")
    assert report.returncode == 0, report.stderr
    for html in (tmp_path / "rep" / "index.html", out / "report" / "index.html"):
        text = html.read_text()
        assert "@10" in text and "@20" in text and "@100" not in text
    given = json.loads(_cli("analyze", db, "--json", "--checkpoints", "5").stdout)
    assert given["horizon"]["requested"] == [5]
