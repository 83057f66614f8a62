"""``mirrorcraft run --executor ray`` against a local Ray instance: the same records and traces
as a local run. Runs only where the optional ``ray`` extra is installed (``.ci/run`` installs
the dev extra only; ``pip install -e '.[ray]'`` makes this test run)."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.runcli import command, write_spec

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="the optional ray extra is not installed (pip install -e '.[ray]')",
)

SPEC: dict[str, Any] = {
    "schema_version": 1,
    "name": "ray",
    "worlds": ["plains-1"],
    "rules": ["vanilla", "M01", "M04"],
    "tasks": ["diamond", "iron_armor"],
    "agents": ["vanilla-planner", "adaptive-planner"],
}
WALL = ("ms", "seconds", "wall", "time", "run_id", "started", "finished")


def _clean(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items() if not any(t in k for t in WALL)}
    if isinstance(o, list):
        return [_clean(x) for x in o]
    return o


def _dump(db: Path) -> list[Any]:
    with sqlite3.connect(db) as con:
        records = con.execute("SELECT episode_id, record FROM episodes ORDER BY episode_id")
        out: list[Any] = [(e, _clean(json.loads(r))) for e, r in records]
        steps = con.execute("SELECT episode_id, step, record FROM steps ORDER BY episode_id, step")
        out += [(e, s, _clean(json.loads(r))) for e, s, r in steps]
    return out


def _run(spec: Path, out: Path, *extra: str, pythonpath: Path | None = None) -> Any:
    """``mirrorcraft run`` in a subprocess (Ray's own login check off, as on a laptop)."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    cmd = command(spec, out, *extra)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def test_a_ray_run_stores_what_a_local_run_stores(tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "spec.yaml", SPEC)
    on_ray = _run(spec, tmp_path / "ray", "--executor", "ray")
    assert on_ray.returncode == 0, on_ray.stderr
    assert "running 12 on a local Ray" in on_ray.stderr
    local = _run(spec, tmp_path / "local")
    assert local.returncode == 0, local.stderr
    ray_rows = _dump(tmp_path / "ray" / "results.sqlite")
    assert len(ray_rows) > 12 and ray_rows == _dump(tmp_path / "local" / "results.sqlite")
    again = _run(spec, tmp_path / "ray", "--executor", "ray")
    assert again.returncode == 0 and "12 already done, running 0" in again.stderr


SPIN = """
import time
from mirrorcraft.agents.base import Decision


class Spin:
    def start(self, ctx):
        pass

    async def act(self, obs):
        end = time.perf_counter() + 0.02
        while time.perf_counter() < end:
            pass
        return Decision({"skill": "wait", "args": {"ticks": 1}})

    def finish(self, obs):
        pass
"""


def test_a_task_waiting_for_a_free_cpu_is_not_charged_for_the_wait(tmp_path: Path) -> None:
    """Six 2-second episodes on a 2-CPU Ray with a 5 s limit: all were submitted at once
    before, so the last ones timed out while they waited in Ray's queue."""
    (tmp_path / "spin_agents.py").write_text(SPIN)
    doc = {
        **SPEC,
        "agents": ["spin_agents:Spin"],
        "budget": 100,
        "execution": {"episode_timeout_s": 5, "max_attempts": 1},
    }
    spec = write_spec(tmp_path / "spec.yaml", doc)
    done = _run(
        spec, tmp_path / "out", "--executor", "ray", "--address", "local", pythonpath=tmp_path
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as con:
        assert con.execute("SELECT COUNT(*) FROM faults").fetchone() == (0,)
        assert con.execute("SELECT COUNT(*) FROM episodes WHERE status = 'ok'").fetchone() == (6,)
