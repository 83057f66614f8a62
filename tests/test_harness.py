"""Experiment specs, stable episode ids, the results store, faults, and kill-and-resume."""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mirrorcraft.agents.base import Decision, EpisodeContext
from mirrorcraft.body.observation import Observation
from mirrorcraft.faults import InfrastructureFault
from mirrorcraft.runner import executor
from mirrorcraft.runner.execution_spec import ExecutionSpec
from mirrorcraft.runner.executor import plan_jobs
from mirrorcraft.runner.loops import run_local
from mirrorcraft.runner.progress import Progress
from mirrorcraft.runner.spec import SpecError, expand, parse_spec
from mirrorcraft.runner.store import ResultStore

SMALL = {
    "schema_version": 1,
    "name": "small",
    "worlds": ["plains-1", "taiga-1"],
    "rules": ["vanilla", "M01", "M04"],
    "tasks": ["iron_armor", "diamond", "enchantment"],
    "agents": ["vanilla-planner", "adaptive-planner", "random"],
    "repetitions": 1,
}


def test_spec_validation_rejects_unknown_keys_and_tasks() -> None:
    with pytest.raises(SpecError, match="speed"):
        parse_spec({**SMALL, "speed": "fast"}, "s.yaml")
    with pytest.raises(SpecError, match="unknown task"):
        parse_spec({**SMALL, "tasks": ["flying"]}, "s.yaml")
    with pytest.raises(SpecError, match="must be a mapping"):
        parse_spec(["x"], "s.yaml")


def test_episode_ids_are_stable_and_pairs_share_seeds() -> None:
    spec = parse_spec(SMALL, "s")
    a, b = expand(spec), expand(parse_spec(dict(SMALL), "s"))
    assert [c.episode_id for c in a] == [c.episode_id for c in b]
    assert len({c.episode_id for c in a}) == len(a) == 2 * 3 * 3 * 3
    by_pair: dict[tuple[str, str, str, str, int, int], set[int]] = {}
    for c in a:
        by_pair.setdefault((c.world, c.task, c.agent, c.model, c.budget, c.repetition), set()).add(
            c.seed
        )
    assert all(len(seeds) == 1 for seeds in by_pair.values())
    horizon = parse_spec({**SMALL, "budgets": {"diamond": 200}}, "s")
    assert {c.budget for c in expand(horizon) if c.task == "diamond"} == {200}


def test_disclosure_expands_only_mirror_episodes_of_disclosed_agents() -> None:
    spec = parse_spec(
        {
            **SMALL,
            "agents": ["vanilla-planner"],
            "disclosure": ["hidden", "disclosed"],
            "disclosed_agents": ["vanilla-planner"],
        },
        "s",
    )
    disclosed = [c for c in expand(spec) if c.disclosure == "disclosed"]
    assert disclosed and all(c.rules != "vanilla" for c in disclosed)


class FlakyAgent:
    """Fails with an infrastructure fault on its first episode, then plays one action."""

    name = "flaky"
    cross_episode_memory = False
    calls = 0

    def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, obs: Observation) -> Decision | None:
        FlakyAgent.calls += 1
        if FlakyAgent.calls == 1:
            raise InfrastructureFault("endpoint unreachable after retries")
        return None if obs.step else Decision({"skill": "wait", "args": {}})

    def finish(self, obs: Observation) -> None:
        return None


class BrokenAgent(FlakyAgent):
    async def act(self, obs: Observation) -> Decision | None:
        raise ValueError("the agent's own bug")


def test_faults_are_rerun_and_agent_errors_are_outcomes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = parse_spec(
        {
            **SMALL,
            "worlds": ["plains-1"],
            "rules": ["vanilla"],
            "tasks": ["diamond"],
            "agents": ["random"],
        },
        "s",
    )
    monkeypatch.setattr(executor, "make_agent", lambda *a, **k: FlakyAgent())
    quick = ExecutionSpec(retry_delay_s=0.01)
    with ResultStore(tmp_path / "r.sqlite") as store:
        jobs = plan_jobs(spec, expand(spec), set())
        run_local(jobs, store, 1, Progress(len(jobs), io.StringIO()), policy=quick)
        (record,) = list(store.records())
        assert record.termination == "no_action" and record.actions_used == 1
        assert store.fault_count(record.episode_id) == 1
    monkeypatch.setattr(executor, "make_agent", lambda *a, **k: BrokenAgent())
    with ResultStore(tmp_path / "r2.sqlite") as store:
        run_local(jobs, store, 1, Progress(len(jobs), io.StringIO()), policy=quick)
        (record,) = list(store.records())
        assert record.termination == "agent_error" and "own bug" in record.agent_error


def test_corrupt_database_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mirrorcraft.cli import main

    bad = tmp_path / "out"
    bad.mkdir()
    (bad / "results.sqlite").write_bytes(b"this is not sqlite" * 100)
    assert main(["run", "--out", str(bad), "--workers", "1", "--no-report"]) == 2
    assert "not a usable results database" in capsys.readouterr().err


def _count(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as con:
            return int(
                con.execute("SELECT COUNT(*) FROM episodes WHERE status = 'ok'").fetchone()[0]
            )
    except sqlite3.Error:
        return 0


def test_killed_midway_and_resumed_each_episode_exactly_once(tmp_path: Path) -> None:
    spec_path = tmp_path / "small.yaml"
    spec_path.write_text(yaml.safe_dump(SMALL))
    out = tmp_path / "run"
    db = out / "results.sqlite"
    cmd = [
        sys.executable,
        "-m",
        "mirrorcraft.cli",
        "run",
        str(spec_path),
        "--out",
        str(out),
        "--workers",
        "2",
        "--no-report",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 300
    while _count(db) < 8 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _count(db)
    assert 0 < partial < 54
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT episode_id, status, record FROM episodes").fetchall()
        steps = dict(
            con.execute("SELECT episode_id, COUNT(*) FROM steps GROUP BY episode_id").fetchall()
        )
    assert len(rows) == 54 and {r[1] for r in rows} == {"ok"}
    assert len({r[0] for r in rows}) == 54
    for eid, _status, text in rows:
        rec = json.loads(text)
        assert steps.get(eid, 0) == rec["actions_used"]  # no half-written traces
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "54 already done, running 0" in again.stderr
