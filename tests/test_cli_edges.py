"""What a researcher meets at the edges of the CLI: their own rule suites in the tables, a
progress reader that goes away, and options every parser has that the docs must name."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.runcli import env, ok_records

ROOT = Path(__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    """The fake key, and these sources first on the path from any working folder."""
    variables = env()
    paths = [str(ROOT / "src"), *filter(None, variables.get("PYTHONPATH", "").split(os.pathsep))]
    return {**variables, "PYTHONPATH": os.pathsep.join(paths)}


def _mc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(),
        cwd=cwd,
    )


def _gravel_pack(folder: Path, description: str) -> Path:
    (folder / "data/minecraft/loot_tables/blocks").mkdir(parents=True)
    meta = {"pack": {"pack_format": 10, "description": description}}
    (folder / "pack.mcmeta").write_text(json.dumps(meta))
    table = {
        "type": "minecraft:block",
        "pools": [{"rolls": 1, "entries": [{"type": "minecraft:item", "name": "minecraft:flint"}]}],
    }
    (folder / "data/minecraft/loot_tables/blocks/gravel.json").write_text(json.dumps(table))
    return folder


def _spec(folder: Path, rules: list[str], agents: list[str] | None = None) -> Path:
    spec = {
        "schema_version": 1,
        "name": "edges",
        "worlds": ["plains-1"],
        "rules": rules,
        "tasks": ["diamond"],
        "agents": agents or ["vanilla-planner"],
        "repetitions": 1,
        "seed": 0,
    }
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_users_own_suites_show_what_they_change(tmp_path: Path) -> None:
    """A user's suite (a manifest, or a datapack) showed "–" as its rule change in the tables
    and the report. Now a manifest shows its name, a datapack its pack.mcmeta description, and
    a datapack without one the resources it changes from vanilla; records carry it for the
    report only (the packaged suites' records are unchanged)."""
    shutil.copy(ROOT / "examples/my_suite.yaml", tmp_path / "mine.yaml")
    _gravel_pack(tmp_path / "bare", "")
    _gravel_pack(tmp_path / "told", "Gravel gives flint, every time")
    spec = _spec(tmp_path, ["vanilla", "M04", "mine.yaml", "bare", "told"])
    run = _mc("run", str(spec), "--out", "out", "--no-report", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    records = ok_records(tmp_path / "out/results.sqlite")
    titles = {r["rules"]: r.get("rules_title", "(absent)") for r in records.values()}
    assert titles == {
        "vanilla": "(absent)",
        "M04": "(absent)",
        "mine.yaml": "Gravel flint",
        "bare": "changes loot_tables: blocks/gravel",
        "told": "Gravel gives flint, every time",
    }
    analyzed = _mc("analyze", "out/results.sqlite", "--json", cwd=tmp_path)
    assert analyzed.returncode == 0, analyzed.stderr
    rows = {r["suite"]: r["title"] for r in json.loads(analyzed.stdout)["suites"]}
    assert rows == {
        "M04": "Compressed resource drops",
        "mine.yaml": "Gravel flint",
        "bare": "changes loot_tables: blocks/gravel",
        "told": "Gravel gives flint, every time",
        "pooled": "All suites",
    }
    text = _mc("analyze", "out/results.sqlite", cwd=tmp_path).stdout
    suites = text.split("by rule suite")[1].split("\n\n")[0]
    assert "–" not in suites and "Gravel flint" in suites
    report = _mc("report", "out/results.sqlite", "--out", "rep", "--no-viewer", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "changes loot_tables: blocks/gravel" in (tmp_path / "rep/index.html").read_text()


def test_a_run_outlives_the_reader_of_its_output(tmp_path: Path) -> None:
    """``mirrorcraft run ... 2>&1 | head -1``: once head exited, the run's next line met a
    closed pipe and the run ended there with status 0, its episodes unstored (or, later, its
    report unwritten). Now it goes on writing nowhere: every episode is stored, the report
    is written, and the status is the run's own."""
    spec = _spec(tmp_path, ["vanilla", "M04"], ["vanilla-planner", "adaptive-planner"])
    proc = subprocess.Popen(
        [sys.executable, "-m", "mirrorcraft.cli", "run", str(spec), "--out", "out"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=_env(),
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b"experiment edges: 4 episodes")
    proc.stdout.close()  # the reader goes away
    assert proc.wait(timeout=600) == 0
    records = ok_records(tmp_path / "out/results.sqlite")
    assert len(records) == 4
    assert (tmp_path / "out/report/index.html").is_file()


@pytest.mark.parametrize("command", ["analyze", "export"])
def test_reading_commands_end_quietly_when_their_reader_goes_away(
    tmp_path: Path, command: str
) -> None:
    """``analyze ... | head`` and ``export --out /dev/stdout | head`` end with status 0 and
    nothing on standard error. Export to /dev/stdout (or a named pipe) used to wait forever:
    it read the destination first, to refuse writing over a SQLite file."""
    spec = _spec(tmp_path, ["vanilla", "M04"])
    assert _mc("run", str(spec), "--out", "out", "--no-report", cwd=tmp_path).returncode == 0
    args = ["--out", "/dev/stdout"] if command == "export" else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "mirrorcraft.cli", command, "out/results.sqlite", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
        cwd=tmp_path,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(8)
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=600) == 0
    # Nothing but, for an export whose rows all fit in the pipe's buffer before the reader
    # went away, its closing line (which goes to standard error, never to the stream).
    assert err == b"" or (command == "export" and err.startswith(b"wrote ")), err
    assert b"Traceback" not in err and b"Error" not in err
    whole = _mc(command, "out/results.sqlite", *args, cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    if command == "export":
        assert sorted(json.loads(line)["rules"] for line in whole.stdout.splitlines()) == [
            "M04",
            "vanilla",
        ]
        assert whole.stderr == "wrote 2 episode records to /dev/stdout\n"


def test_a_record_cut_short_can_be_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A JSONL file whose last line was cut short (its writer killed), or a database row
    that is not JSON (NaN in it), stopped analyze, report and export even with
    --skip-invalid: the other records could not be read without editing the file. Such a
    record is now refused like an inconsistent one (with the hint), or left out and listed."""
    import sqlite3

    from tests.test_analysis_cli import run_cli
    from tests.test_analysis_helpers import synthetic_study, write_db, write_jsonl

    records, steps = synthetic_study(seed=5, worlds=("plains-1",), reps=1, models=("m",))
    jsonl = write_jsonl(tmp_path / "r.jsonl", records)
    text = jsonl.read_text(encoding="utf-8")
    jsonl.write_text(text[: len(text) - 40], encoding="utf-8")
    db = write_db(tmp_path / "r.db", records, steps)
    with sqlite3.connect(db) as con:
        con.execute(
            "UPDATE episodes SET record = replace(record, '\"wall_seconds\": 0.0', "
            "'\"wall_seconds\": NaN') WHERE episode_id = ?",
            (records[0].episode_id,),
        )
    last = len(text.splitlines())
    code, _, err = run_cli(["analyze", str(jsonl)], capsys)
    assert code == 2
    assert f"r.jsonl:{last}: unreadable episode record: not valid JSON" in err
    assert "--skip-invalid leaves such records out" in err
    code, _, err = run_cli(["analyze", str(db)], capsys)
    assert code == 2 and "NaN is not a number JSON allows" in err
    for source in (jsonl, db):
        code, out, err = run_cli(["analyze", str(source), "--skip-invalid", "--json"], capsys)
        assert code == 0, err
        doc = json.loads(out)
        assert doc["episodes"]["total"] == len(records) - 1
        assert len(doc["episodes"]["invalid"]) == 1
        report = tmp_path / f"rep-{source.suffix[1:]}"
        code, _, err = run_cli(
            ["report", str(source), "--skip-invalid", "--out", str(report)], capsys
        )
        assert code == 0 and (report / "index.html").is_file(), err
        out_file = tmp_path / f"e-{source.suffix[1:]}.jsonl"
        code, _, err = run_cli(
            ["export", str(source), "--skip-invalid", "--out", str(out_file)], capsys
        )
        assert code == 0, err
        assert len(out_file.read_text().splitlines()) == len(records) - 1


def test_a_run_folder_given_as_results_names_its_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``mirrorcraft analyze runs/default`` (the folder run wrote, not its database) said
    only "is a directory, not a results file"; it now names the file to give."""
    from tests.test_analysis_cli import run_cli
    from tests.test_analysis_helpers import synthetic_study, write_db

    records, steps = synthetic_study(seed=5, worlds=("plains-1",), reps=1, models=("m",))
    write_db(tmp_path / "results.sqlite", records, steps)
    code, _, err = run_cli(["analyze", str(tmp_path)], capsys)
    assert code == 2
    assert f"name its results database, {tmp_path / 'results.sqlite'}" in err


def test_progress_on_a_terminal_still_redraws_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress takes sys.stderr when it is made (so the run's reader-outliving stream is
    used), and must still see a terminal there: it asked the missing argument instead, so a
    run in a terminal printed a new line every 5 s instead of redrawing one."""
    from mirrorcraft.runner.progress import Progress

    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def isatty(self) -> bool:
            return True

        def write(self, s: str) -> int:
            self.text += s
            return len(s)

        def flush(self) -> None:
            pass

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    progress = Progress(10)
    assert progress.stream is term and progress.tty
    progress.note("an endpoint paused")
    assert term.text.startswith("\r")
