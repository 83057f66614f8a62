"""Reading JSONL files and results databases, and refusing bad ones with a precise message."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.analysis.loading import (
    RecordsError,
    StepReader,
    load_records,
    load_results,
    load_steps,
    parse_episode,
)
from mirrorcraft.runner.records import EpisodeRecord, StepRecord
from tests.test_analysis_helpers import make_record, synthetic_study, write_db, write_jsonl


def _study() -> tuple[list[EpisodeRecord], dict[str, list[StepRecord]]]:
    return synthetic_study(
        seed=1, models=("m",), agents=("react",), worlds=("plains-1",), suites=("M01",), reps=1
    )


def test_jsonl_round_trip(tmp_path: Path) -> None:
    records, _ = _study()
    path = write_jsonl(tmp_path / "r.jsonl", records)
    loaded = load_results(path)
    assert loaded.kind == "jsonl" and not loaded.has_steps
    assert [r.to_json() for r in loaded.records] == [r.to_json() for r in records]


def test_database_leaves_out_infra_faults_and_reads_steps(tmp_path: Path) -> None:
    records, steps = _study()
    faulty = records[0].episode_id
    path = write_db(tmp_path / "r.db", records, steps, status={faulty: "infra_fault"})
    before = path.read_bytes()
    loaded = load_results(path)
    assert loaded.kind == "sqlite" and loaded.has_steps
    assert loaded.excluded == {"infra_fault": 1}
    assert [r.episode_id for r in loaded.records] == sorted(
        r.episode_id for r in records if r.episode_id != faulty
    )
    some = records[1].episode_id
    got = load_steps(path, some)
    assert [s.step for s in got] == list(range(1, len(steps[some]) + 1))
    assert got[0].thought == steps[some][0].thought
    assert load_steps(path, "no-such-episode") == []
    assert path.read_bytes() == before  # opened read-only
    assert not (tmp_path / "r.db-journal").exists()


def test_database_opened_read_only_refuses_writes(tmp_path: Path) -> None:
    records, _ = _study()
    path = write_db(tmp_path / "r.db", records)
    with StepReader(path) as reader, pytest.raises(sqlite3.OperationalError):
        reader._con.execute("DELETE FROM episodes")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json\n", "r.jsonl:2: unreadable episode record: not valid JSON"),
        ("[1, 2]\n", "r.jsonl:2: bad episode record: expected a JSON object"),
    ],
)
def test_malformed_jsonl_line_is_named(tmp_path: Path, content: str, message: str) -> None:
    good = json.dumps(make_record().to_json())
    path = tmp_path / "r.jsonl"
    path.write_text(good + "\n" + content, encoding="utf-8")
    with pytest.raises(RecordsError, match=message.replace("[", r"\[")):
        load_records(path)


def _bad(tmp_path: Path, change: dict[str, Any], drop: str | None = None) -> str:
    doc = make_record().to_json()
    doc.update(change)
    if drop:
        del doc[drop]
    path = tmp_path / "r.jsonl"
    path.write_text("\n" + json.dumps(doc) + "\n", encoding="utf-8")
    with pytest.raises(RecordsError) as info:
        load_records(path)
    return str(info.value)


def test_missing_unknown_and_mistyped_fields(tmp_path: Path) -> None:
    assert "r.jsonl:2: bad episode record: missing field(s) score_trace" in _bad(
        tmp_path, {}, drop="score_trace"
    )
    assert "unknown field(s) colour" in _bad(tmp_path, {"colour": "red"})
    assert "field 'score' must be an integer" in _bad(tmp_path, {"score": "high"})
    assert "field 'success' must be true or false" in _bad(tmp_path, {"success": 1})
    assert "disclosure must be 'hidden' or 'disclosed'" in _bad(tmp_path, {"disclosure": "yes"})
    assert "score must be between 0 and 100" in _bad(tmp_path, {"score": 150})
    assert "encounter 1: missing field(s) rule" in _bad(
        tmp_path, {"encounters": [{"step": 1, "kind": "craft", "signature": []}]}
    )
    assert "newer" in _bad(tmp_path, {"schema_version": 99})
    assert "must be a number or null" in _bad(tmp_path, {"cost_usd": "free"})


def test_defaults_may_be_omitted() -> None:
    doc = make_record().to_json()
    for key in ("encounters", "cost_usd", "model_calls", "template_hashes", "is_mirror"):
        doc.pop(key)
    record = parse_episode(doc)
    assert record.cost_usd == 0.0 and record.encounters == []


def test_duplicate_episode_id_in_jsonl(tmp_path: Path) -> None:
    line = json.dumps(make_record().to_json())
    path = tmp_path / "r.jsonl"
    path.write_text(f"{line}\n{line}\n", encoding="utf-8")
    with pytest.raises(
        RecordsError, match=r"r\.jsonl:2: episode_id .* already used on line 1"
    ) as e:
        load_records(path)
    assert "the same episode of experiment 'test' comes twice" in str(e.value)
    assert "keep one copy of each record" in str(e.value)


def test_two_experiments_exports_put_together_are_told_why_their_ids_collide(
    tmp_path: Path,
) -> None:
    """Two runs of the same conditions under different experiment names, exported and put in
    one file, were refused with only "episode_id ... already used on line 1": nothing said
    that ids name the condition, not the experiment, nor what to do instead."""
    first = make_record()
    again = dataclasses.replace(first, experiment="exp-b")
    path = tmp_path / "r.jsonl"
    path.write_text(
        "".join(json.dumps(r.to_json()) + "\n" for r in (first, again)), encoding="utf-8"
    )
    with pytest.raises(RecordsError) as e:
        load_records(path)
    why = str(e.value)
    assert why.startswith(f"{path}:2: episode_id {first.episode_id!r} already used on line 1;")
    assert "experiments 'test' and 'exp-b'" in why
    assert "an episode id names the condition, not the experiment" in why
    assert "Analyse each experiment's export apart" in why and "raise `repetitions`" in why


def test_empty_jsonl_is_refused_unless_allowed(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(RecordsError, match="nothing to analyse: it holds no episode records"):
        load_records(path)
    assert load_records(path, allow_empty=True) == []


def test_corrupt_unknown_and_missing_files(tmp_path: Path) -> None:
    corrupt = tmp_path / "r.db"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\xff" * 2000)
    with pytest.raises(RecordsError, match="not a readable MirrorCraft results database"):
        load_records(corrupt)
    other = tmp_path / "notes.txt"
    other.write_text("hello", encoding="utf-8")
    with pytest.raises(RecordsError, match="unknown results format"):
        load_records(other)
    with pytest.raises(RecordsError, match="no such results file"):
        load_records(tmp_path / "missing.db")
    with pytest.raises(RecordsError, match="is a directory"):
        load_records(tmp_path)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage\n")
    with pytest.raises(RecordsError, match=r"b\.jsonl:1: unreadable episode record: not UTF-8"):
        load_records(binary)


def test_database_without_the_tables(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE x (a)")
    con.commit()
    con.close()
    with pytest.raises(RecordsError, match="no such table: episodes"):
        load_records(path)


def test_bad_record_in_database_names_the_episode(tmp_path: Path) -> None:
    path = write_db(tmp_path / "r.db", [make_record()])
    con = sqlite3.connect(path)
    with con:
        con.execute("INSERT INTO episodes VALUES ('ep-7', 'ok', '{\"score\": 1}')")
        con.execute("INSERT INTO episodes VALUES ('ep-8', 'ok', 'nonsense')")
    con.close()
    with pytest.raises(RecordsError, match="episode 'ep-7': bad episode record: missing field"):
        load_records(path)
    con = sqlite3.connect(path)
    with con:
        con.execute("DELETE FROM episodes WHERE episode_id = 'ep-7'")
    con.close()
    with pytest.raises(
        RecordsError, match="episode 'ep-8': unreadable episode record: not valid JSON"
    ):
        load_records(path)


def test_mismatched_episode_id_and_bad_step(tmp_path: Path) -> None:
    record = make_record()
    path = write_db(tmp_path / "r.db", [record])
    con = sqlite3.connect(path)
    with con:
        con.execute("INSERT INTO steps VALUES (?, 1, ?)", (record.episode_id, '{"step": 1}'))
        doc = make_record(world="taiga-1").to_json()
        con.execute("INSERT INTO episodes VALUES ('zz', 'ok', ?)", (json.dumps(doc),))
    con.close()
    with pytest.raises(RecordsError, match="step 1: bad step record: missing field"):
        load_steps(path, record.episode_id)
    with pytest.raises(RecordsError, match="episode 'zz': record says episode_id"):
        load_records(path)
    jsonl = write_jsonl(tmp_path / "r.jsonl", [record])
    with pytest.raises(RecordsError, match="only stored in a results database"):
        load_steps(jsonl, record.episode_id)


def test_every_record_field_has_a_check() -> None:
    """The loader must know every field the runner writes (a new field needs a check here)."""
    from dataclasses import fields

    from mirrorcraft.analysis.loading import _EPISODE_CHECKS
    from mirrorcraft.runner.records import EpisodeRecord

    assert {f.name for f in fields(EpisodeRecord)} <= set(_EPISODE_CHECKS)
