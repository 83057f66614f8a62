"""The body and task fingerprints: every record says what the body behaved by (the simulator's
behaviour version, ``body.yaml``, ``skills.yaml``) and what the task was, and a results
folder refuses to resume over episodes of another body or task definition, as it does for
rule sets and worlds. Run as a user meets it: ``mirrorcraft run`` in subprocesses, with the
stored episodes made to look like those of another software version."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.agents.llm.templates import PROMPT_VERSION
from mirrorcraft.body import config
from mirrorcraft.body.config import SIMULATOR_VERSION, body_fingerprint
from mirrorcraft.evaluator.tasks import get_task, task_fingerprint
from tests.runcli import cli, ok_records, rows, write_spec

SMALL: dict[str, Any] = {
    "schema_version": 1,
    "name": "fingerprints",
    "worlds": ["plains-1"],
    "rules": ["vanilla", "M04"],
    "tasks": ["iron_armor"],
    "agents": ["vanilla-planner"],
    "budget": 12,
}


def _restamp(db: Path, field: str, value: str) -> None:
    """Make the stored episodes look as if another version had run them."""
    con = sqlite3.connect(db)
    with con:
        for episode_id, text in con.execute("SELECT episode_id, record FROM episodes").fetchall():
            doc = json.loads(text)
            doc[field] = value
            con.execute(
                "UPDATE episodes SET record = ? WHERE episode_id = ?",
                (json.dumps(doc, sort_keys=True), episode_id),
            )
    con.close()


def test_records_carry_the_body_and_task_fingerprints(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli(write_spec(tmp_path / "spec.yaml", SMALL), out, "--workers", "1")
    assert done.returncode == 0, done.stderr
    records = ok_records(out / "results.sqlite")
    assert len(records) == 2
    task = task_fingerprint(get_task("iron_armor"))
    for r in records.values():
        assert r["body_fingerprint"] == body_fingerprint("sim")
        assert r["task_fingerprint"] == task


@pytest.mark.parametrize(
    ("field", "message"),
    [
        (
            "body_fingerprint",
            "the body differs from that of 2 stored episode(s) (fingerprint 0123456789abcdef",
        ),
        (
            "task_fingerprint",
            "task 'iron_armor' is defined differently from when its 2 stored episode(s) ran",
        ),
    ],
)
def test_a_folder_of_another_body_or_task_refuses_to_resume(
    tmp_path: Path, field: str, message: str
) -> None:
    spec = write_spec(tmp_path / "spec.yaml", SMALL)
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    assert cli(spec, out, "--workers", "1").returncode == 0
    _restamp(db, field, "0123456789abcdef")
    before = ok_records(db)

    refused = cli(spec, out, "--workers", "1")
    assert refused.returncode == 2
    line = refused.stderr.strip()
    assert message in line and "--allow-changed-spec" in line and "\n" not in line
    assert ok_records(db) == before  # nothing touched

    allowed = cli(spec, out, "--workers", "1", "--allow-changed-spec")
    assert allowed.returncode == 0, allowed.stderr
    after = ok_records(db)
    assert all(r[field] != "0123456789abcdef" for r in after.values())  # run again, stamped now
    assert len(rows(db, "SELECT record FROM superseded")) == 2  # the old ones are kept
    again = cli(spec, out, "--workers", "1")
    assert again.returncode == 0 and "2 already done, running 0" in again.stderr


def test_records_without_fingerprints_still_resume(tmp_path: Path) -> None:
    """Folders written before the fingerprints were stamped resume as they always did."""
    spec = write_spec(tmp_path / "spec.yaml", SMALL)
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    assert cli(spec, out, "--workers", "1").returncode == 0
    _restamp(db, "body_fingerprint", "")
    _restamp(db, "task_fingerprint", "")
    again = cli(spec, out, "--workers", "1")
    assert again.returncode == 0 and "2 already done, running 0" in again.stderr


def test_the_body_fingerprint_follows_the_version_and_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = body_fingerprint("sim")
    assert body_fingerprint("mineflayer") != now  # a real server's body is another body
    body_fingerprint.cache_clear()
    monkeypatch.setattr(config, "SIMULATOR_VERSION", SIMULATOR_VERSION + 1)
    try:
        assert body_fingerprint("sim") != now
        body_fingerprint.cache_clear()
        monkeypatch.setattr(config, "SIMULATOR_VERSION", SIMULATOR_VERSION)
        wider = config.default_body_config().model_copy(update={"reach": 5.0})
        monkeypatch.setattr(config, "default_body_config", lambda: wider)
        assert body_fingerprint("sim") != now
    finally:
        body_fingerprint.cache_clear()


def test_the_body_fingerprint_is_the_same_in_every_process() -> None:
    """``body.yaml`` holds sets, whose order varies with the hash seed between processes."""
    code = "from mirrorcraft.body.config import body_fingerprint; print(body_fingerprint())"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert seen == {body_fingerprint("sim")}


def test_the_task_fingerprint_follows_milestones_not_the_budget() -> None:
    task = get_task("diamond")
    assert task_fingerprint(task.with_budget(7)) == task_fingerprint(task)
    first, *rest = task.milestones
    cheaper = type(task)(
        task.id, task.title, task.budget, (first.model_copy(update={"value": 5}), *rest)
    )
    assert task_fingerprint(cheaper) != task_fingerprint(task)
    assert task_fingerprint(get_task("iron_armor")) != task_fingerprint(task)


LLM_SMALL: dict[str, Any] = {**SMALL, "agents": ["react"], "models": [{"name": "mock-planner"}]}


def _retemplate(db: Path, key: str, value: str) -> None:
    """Make the stored episodes look as if another version had prompted them."""
    con = sqlite3.connect(db)
    with con:
        for episode_id, text in con.execute("SELECT episode_id, record FROM episodes").fetchall():
            doc = json.loads(text)
            doc["template_hashes"][key] = value
            con.execute(
                "UPDATE episodes SET record = ? WHERE episode_id = ?",
                (json.dumps(doc, sort_keys=True), episode_id),
            )
    con.close()


@pytest.mark.parametrize(
    ("key", "shown"),
    [("prompt_version", "prompt_version 0"), ("react", "react 0123456789abcdef")],
)
def test_a_folder_prompted_another_way_refuses_to_resume(
    tmp_path: Path, key: str, shown: str
) -> None:
    """Episodes of an LLM configuration whose prompts were built another way (another
    software version changed a template or the prompt-building code) are not resumed over."""
    spec = write_spec(tmp_path / "spec.yaml", LLM_SMALL)
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    first = cli(spec, out, "--workers", "1")
    assert first.returncode == 0, first.stderr
    stored = next(iter(ok_records(db).values()))["template_hashes"]
    assert stored["prompt_version"] == str(PROMPT_VERSION)
    assert {"common", "react", "observation"} <= set(stored)
    _retemplate(db, key, "0" if key == "prompt_version" else "0123456789abcdef")
    before = ok_records(db)

    refused = cli(spec, out, "--workers", "1")
    assert refused.returncode == 2
    line = refused.stderr.strip()
    assert "agent 'react' was prompted differently when its 2 stored episode(s) ran" in line
    assert f"(then: {shown}; now: " in line and "--allow-changed-spec" in line
    assert "\n" not in line
    assert ok_records(db) == before  # nothing touched

    # A record written before the version was kept names none: it was prompted the first way
    # (version 1), which this one is not, so the folder is refused as well.
    _retemplate(db, key, stored[key])
    _strip_prompt_version(db)
    old = cli(spec, out, "--workers", "1")
    assert old.returncode == 2 and "(then: prompt_version 1; now: prompt_version " in old.stderr
    # With the records as this version wrote them, the folder resumes.
    _retemplate(db, "prompt_version", stored["prompt_version"])
    again = cli(spec, out, "--workers", "1")
    assert again.returncode == 0 and "2 already done, running 0" in again.stderr


def _strip_prompt_version(db: Path) -> None:
    con = sqlite3.connect(db)
    with con:
        for episode_id, text in con.execute("SELECT episode_id, record FROM episodes").fetchall():
            doc = json.loads(text)
            del doc["template_hashes"]["prompt_version"]
            con.execute(
                "UPDATE episodes SET record = ? WHERE episode_id = ?",
                (json.dumps(doc, sort_keys=True), episode_id),
            )
    con.close()
