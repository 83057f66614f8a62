"""``mirrorcraft export``: records round-trip through JSONL; CSV has one row per episode."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from mirrorcraft.cli import main
from tests.test_analysis_helpers import synthetic_study, write_db


def test_export_jsonl_and_csv(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records, steps)
    assert main(["export", str(db), "--out", str(tmp_path / "r.jsonl")]) == 0
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == len(records)
    assert {json.loads(line)["episode_id"] for line in lines} == {r.episode_id for r in records}
    assert main(["analyze", str(tmp_path / "r.jsonl")]) == 0  # the export reads back
    assert main(["export", str(db), "--format", "csv", "--out", str(tmp_path / "r.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert len(rows) == len(records) and json.loads(rows[0]["score_trace"]) is not None
    assert main(["export", str(tmp_path / "missing.db"), "--out", str(tmp_path / "x")]) == 2
    capsys.readouterr()


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_never_writes_over_a_results_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    """``--format jsonl --out results.sqlite`` used to replace the run's results (here the
    export's own input) with the export; it is refused and both databases are untouched."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records, steps)
    other = write_db(tmp_path / "other.sqlite", records, steps)
    before = db.read_bytes(), other.read_bytes()
    for out in (db, other):
        assert main(["export", str(db), "--format", fmt, "--out", str(out)]) == 2
        assert "is a SQLite database" in capsys.readouterr().err
    assert (db.read_bytes(), other.read_bytes()) == before
    assert main(["analyze", str(db)]) == 0
