"""One writer per results folder, and resumes that never mix specs, rule sets or worlds:
``mirrorcraft run`` in subprocesses on one folder, with the spec or a manifest edited between."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer
from mirrorcraft.runner.accumulation import AccumulationSpec
from mirrorcraft.runner.runlock import LOCK_NAME
from tests.runcli import (
    KEY_ENV,
    cli,
    command,
    env,
    faults,
    ok_records,
    rows,
    step_counts,
    write_spec,
)

SMALL: dict[str, Any] = {
    "schema_version": 1,
    "name": "resume",
    "worlds": ["plains-1"],
    "rules": ["vanilla", "M04"],
    "tasks": ["diamond"],
    "agents": ["vanilla-planner"],
    "budget": 30,
}
SUITES = Path(__file__).parents[1] / "src" / "mirrorcraft" / "data" / "suites"


def test_two_runs_on_one_folder_never_run_an_episode_twice(tmp_path: Path) -> None:
    spec = write_spec(
        tmp_path / "spec.yaml",
        {
            **SMALL,
            "worlds": ["plains-1", "taiga-1"],
            "rules": ["vanilla", "M01", "M04"],
            "tasks": ["diamond", "iron_armor", "enchantment"],
            "repetitions": 6,  # enough episodes that the first run is still going (~7 s)
        },
    )
    out = tmp_path / "out"
    first = subprocess.Popen(
        command(spec, out, "--workers", "1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    lock = out / LOCK_NAME
    deadline = time.monotonic() + 120
    while not (lock.exists() and lock.stat().st_size > 0):
        assert first.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    second = cli(spec, out, "--workers", "1")
    _out, err = first.communicate(timeout=600)
    assert first.returncode == 0, err
    assert second.returncode == 2
    line = second.stderr.strip()
    assert "in use by another run" in line and f"pid {first.pid} on " in line and "\n" not in line
    records = ok_records(out / "results.sqlite")
    counts = step_counts(out / "results.sqlite")
    assert len(records) == 108 and not faults(out / "results.sqlite")
    assert all(counts[e] == r["actions_used"] for e, r in records.items())
    again = cli(spec, out, "--workers", "1")  # the lock went with the first run
    assert again.returncode == 0 and "108 already done, running 0" in again.stderr


def test_an_edited_suite_manifest_refuses_to_resume(tmp_path: Path) -> None:
    manifest = tmp_path / "mine.yaml"
    doc = yaml.safe_load((SUITES / "M04.yaml").read_text())
    doc["id"] = "X04"
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = write_spec(tmp_path / "spec.yaml", {**SMALL, "rules": ["vanilla", str(manifest)]})
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    assert cli(spec, out, "--workers", "1").returncode == 0
    before = ok_records(db)

    doc["changes"][0]["drops"][0]["count"] = 2  # coal ore now drops two blocks of coal
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False))
    refused = cli(spec, out, "--workers", "1")
    assert refused.returncode == 2
    line = refused.stderr.strip()
    assert f"rule set {str(manifest)!r} changed since its 1 stored episode(s) ran" in line
    assert "--allow-changed-spec" in line and "\n" not in line
    assert ok_records(db) == before  # nothing touched

    allowed = cli(spec, out, "--workers", "1", "--allow-changed-spec")
    assert allowed.returncode == 0, allowed.stderr
    after = ok_records(db)
    changed = [e for e in after if after[e] != before[e]]
    assert len(changed) == 1 and after[changed[0]]["rules"] == str(manifest)
    assert after[changed[0]]["ruleset_fingerprint"] != before[changed[0]]["ruleset_fingerprint"]
    ((kept,),) = rows(db, "SELECT record FROM superseded")
    assert json.loads(kept) == before[changed[0]]  # the old record is kept, not lost


def test_a_changed_spec_refuses_to_resume_and_allowed_runs_stay_apart(tmp_path: Path) -> None:
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    path = tmp_path / "spec.yaml"
    assert cli(write_spec(path, SMALL), out, "--workers", "1").returncode == 0
    # Settings that change how episodes run, not what they measure, keep the spec hash.
    tuned = {**SMALL, "execution": {"retry_delay_s": 1, "episode_timeout_s": 900}}
    resumed = cli(write_spec(path, tuned), out, "--workers", "1")
    assert resumed.returncode == 0 and "2 already done, running 0" in resumed.stderr

    longer = {**SMALL, "budget": 40}
    refused = cli(write_spec(path, longer), out, "--workers", "1")
    assert refused.returncode == 2
    assert "holds 2 episode(s) of another version of this spec" in refused.stderr
    assert len(ok_records(db)) == 2

    allowed = cli(write_spec(path, longer), out, "--workers", "1", "--allow-changed-spec")
    assert allowed.returncode == 0, allowed.stderr
    assert len(ok_records(db)) == 4  # both versions stored ...
    analysis = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert analysis.returncode == 0, analysis.stderr
    assert ": 2 episodes" in analysis.stdout  # ... but never pooled
    assert "left out: 2 episode(s) of an earlier version of the spec" in analysis.stdout
    # The change was accepted once: the next resume of the same spec needs no flag again
    # (it refused every later resume, and the flag would then let any new change through).
    again = cli(path, out, "--workers", "1")
    assert again.returncode == 0, again.stderr
    assert "2 already done, running 0" in again.stderr
    assert "2 stored episode(s) belong to conditions this spec no longer lists" in again.stderr


def _analyze(db: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(db)],
        capture_output=True, text=True, env=env(), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_grown_or_reworded_spec_runs_only_its_new_episodes_and_pools_them(
    tmp_path: Path,
) -> None:
    """Editing the description (or the horizon checkpoints) refused the resume as a changed
    spec, and growing a run (more repetitions, another world) did too: --allow-changed-spec
    then ran every episode again. What an episode measures decides now (runner.versions)."""
    out, db = tmp_path / "out", tmp_path / "out" / "results.sqlite"
    path = tmp_path / "spec.yaml"
    labelled = {**SMALL, "agents": [{"name": "vanilla-planner", "label": "planner"}]}
    assert cli(write_spec(path, labelled), out, "--workers", "1").returncode == 0
    first = ok_records(db)
    steps = rows(db, "SELECT * FROM steps ORDER BY episode_id, step")

    prose = {**labelled, "description": "reworded", "checkpoints": [10, 20]}
    resumed = cli(write_spec(path, prose), out, "--workers", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert "2 episodes, 2 already done, running 0" in resumed.stderr

    grown = {**prose, "repetitions": 2, "worlds": ["plains-1", "taiga-1"]}
    more = cli(write_spec(path, grown), out, "--workers", "1")
    assert more.returncode == 0, more.stderr
    assert "8 episodes, 2 already done, running 6" in more.stderr
    records = ok_records(db)
    assert len(records) == 8 and len({r["spec_hash"] for r in records.values()}) == 1
    for eid, old in first.items():  # the first episodes are kept as they ran, newly stamped
        assert {**records[eid], "spec_hash": old["spec_hash"]} == old
    assert [
        r for r in rows(db, "SELECT * FROM steps ORDER BY episode_id, step") if r[0] in first
    ] == steps
    report = _analyze(db)
    assert ": 8 episodes (4 Vanilla, 4 Mirror" in report and "left out" not in report

    shrunk = {**grown, "worlds": ["plains-1"]}
    fewer = cli(write_spec(path, shrunk), out, "--workers", "1")
    assert fewer.returncode == 0, fewer.stderr
    assert "4 episodes, 4 already done, running 0" in fewer.stderr
    assert "4 stored episode(s) belong to conditions this spec no longer lists" in fewer.stderr
    assert len(ok_records(db)) == 8  # nothing deleted ...
    report = _analyze(db)  # ... and the analysis reads the spec's own episodes
    assert ": 4 episodes (2 Vanilla, 2 Mirror" in report
    assert "left out: 4 episode(s) of an earlier version of the spec" in report

    # What an existing episode measures still may not change under it.
    for changed in (
        {"seed": 1},
        {"budget": 31},
        {"agents": [{"name": "adaptive-planner", "label": "planner"}]},
    ):
        refused = cli(write_spec(path, {**shrunk, **changed}), out, "--workers", "1")
        assert refused.returncode == 2, (changed, refused.stderr)
        assert "holds 4 episode(s) of another version of this spec" in refused.stderr


ACCUMULATION: dict[str, Any] = {
    "schema_version": 1,
    "kind": "accumulation",
    "name": "acc",
    "models": [{"name": "mock-planner"}],
    "variants": [{"name": "cold_start", "train": "none"}],
    "checkpoints": [0],
    "eval": {"worlds": ["plains-1"], "rules": ["vanilla"], "tasks": ["iron_armor"]},
    "budget": 20,
}


def parse_accumulation(doc: dict[str, Any]) -> AccumulationSpec:
    return AccumulationSpec.model_validate(doc)


def test_accumulation_runs_share_the_lock_guards_and_preflight(tmp_path: Path) -> None:
    out = tmp_path / "out"
    path = tmp_path / "acc.yaml"
    assert cli(write_spec(path, ACCUMULATION), out, "--workers", "1").returncode == 0
    # Prose is not a change (it was refused, with no --allow-changed-spec to turn to); any
    # other edit of an accumulation spec is, as a stream's later episodes depend on it all.
    reworded = {**ACCUMULATION, "description": "cold start only"}
    resumed = cli(write_spec(path, reworded), out, "--workers", "1")
    assert resumed.returncode == 0, resumed.stderr
    assert "0 run now, 1 already done" in resumed.stderr
    (record,) = ok_records(out / "results.sqlite").values()
    assert record["spec_hash"] == parse_accumulation(reworded).hash
    changed = {**ACCUMULATION, "budget": 25}
    refused = cli(write_spec(path, changed), out, "--workers", "1")
    assert refused.returncode == 2 and "another version of this spec" in refused.stderr
    # It offered --allow-changed-spec, which the accumulation run then refused.
    assert "or pass --allow-changed-spec" not in refused.stderr
    assert "does not apply to accumulation runs" in refused.stderr
    allowed = cli(path, out, "--workers", "1", "--allow-changed-spec")
    assert allowed.returncode == 2 and "does not apply to accumulation runs" in allowed.stderr
    with FakeOpenAIServer(default=Fail(403, message="forbidden")) as server:
        model = {"name": "fake-model", "base_url": server.base_url, "api_key_env": KEY_ENV}
        paid = write_spec(path, {**ACCUMULATION, "models": [model]})
        stopped = cli(paid, tmp_path / "paid", "--workers", "1")
    assert stopped.returncode == 2 and "refused the credentials (HTTP 403)" in stopped.stderr
    assert rows(tmp_path / "paid" / "results.sqlite", "SELECT * FROM episodes") == []


def _as_written_before_endpoints_left_the_hash(db: Path, spec: dict[str, Any]) -> str:
    """Rewrite a folder as versions that hashed the models' base URLs left it: that hash in
    ``meta`` and on every record, and no ``spec_identity``. Returns the hash."""
    from mirrorcraft.runner.spec import parse_spec

    old = parse_spec(spec, "spec").hash_with_endpoints({})
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM meta WHERE key = 'spec_identity'")
        con.execute("UPDATE meta SET value = ? WHERE key = 'spec_hash'", (json.dumps(old),))
        for episode_id, text in con.execute("SELECT episode_id, record FROM episodes").fetchall():
            record = {**json.loads(text), "spec_hash": old}
            con.execute(
                "UPDATE episodes SET record = ? WHERE episode_id = ?",
                (json.dumps(record), episode_id),
            )
    return old


def test_a_moved_model_endpoint_keeps_the_folders_results(tmp_path: Path) -> None:
    """The base URL was part of the spec hash: a proxy moved to another host or port refused
    the resume ("another version of this spec"), and --allow-changed-spec ran every episode
    again while analysis left the old ones out. The model's name is what a run measures: the
    URL no longer enters the hash, and a folder written when it did still resumes."""
    model = {"name": "mock-planner", "base_url": "http://127.0.0.1:9/v1"}
    spec = {**SMALL, "agents": ["react"], "models": [model], "budget": 4}
    path = tmp_path / "spec.yaml"
    out = tmp_path / "out"
    db = out / "results.sqlite"
    assert cli(write_spec(path, spec), out, "--workers", "1").returncode == 0
    old = _as_written_before_endpoints_left_the_hash(db, spec)
    for host in ("10.0.0.7:8000", "10.0.0.8:8001"):  # moved, then moved again
        moved = {**spec, "models": [{**model, "base_url": f"http://{host}/v1"}]}
        again = cli(write_spec(path, moved), out, "--workers", "1")
        assert again.returncode == 0, again.stderr
        assert "2 already done, running 0" in again.stderr
    assert {r["spec_hash"] for r in ok_records(db).values()} == {old}
    analysis = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(db)],
        capture_output=True, text=True, env=env(), timeout=300,
    )  # fmt: skip
    assert analysis.returncode == 0, analysis.stderr
    assert ": 2 episodes" in analysis.stdout and "earlier version" not in analysis.stdout
    # Another model is another condition (runner.versions); another setting of this one is
    # a change of what its episodes measure.
    effort = {**spec, "models": [{**model, "client": {"reasoning_effort": "high"}}]}
    refused = cli(write_spec(path, effort), out, "--workers", "1")
    assert refused.returncode == 2 and "another version of this spec" in refused.stderr
