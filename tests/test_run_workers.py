"""Workers that fail alone and die with their parent, and runaway episodes that meet their time
limit: ``mirrorcraft run`` in a subprocess, its processes killed as a user or the OOM killer
would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.runcli import command, env, faults, ok_records, rows, step_counts, write_spec

PLANNERS: dict[str, Any] = {
    "schema_version": 1,
    "name": "workers",
    "worlds": ["plains-1", "taiga-1"],
    "rules": ["vanilla", "M01", "M04"],
    "tasks": ["diamond"],
    "agents": ["vanilla-planner"],
    "repetitions": 2,
}


AGENTS = """
import time

from mirrorcraft.agents.base import Decision


class _Waiting:
    cross_episode_memory = False

    @classmethod
    def validate_options(cls, options):
        return dict(options)

    def __init__(self, options):
        pass

    def start(self, ctx):
        pass

    def finish(self, obs):
        pass


class SpinAgent(_Waiting):
    name = "spin"

    async def act(self, obs):
        end = time.perf_counter() + 0.02  # 20 ms of computation per action
        while time.perf_counter() < end:
            pass
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="thinking")


class BlockingLoopAgent(_Waiting):
    # On the runner's event loop, with a plain act that blocks (a stuck network call).
    name = "blocking"
    run_in_event_loop = True

    def act(self, obs):
        if obs.step >= 2:
            time.sleep(600)
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="calling out")


class ExitingAgent(_Waiting):
    # Ends its own process at its second action, as a library calling os._exit does.
    name = "exiting"

    def act(self, obs):
        if obs.step >= 1:
            import os

            os._exit(3)
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="once")


class KillingAgent(_Waiting):
    # Its worker is killed at its second action, every time: as the OOM killer would.
    name = "killing"

    def act(self, obs):
        if obs.step >= 1:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="once")


class InterruptedAgent(_Waiting):
    name = "interrupted"

    def act(self, obs):
        if obs.step >= 1:
            raise KeyboardInterrupt
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="once")


class InterruptedLoopAgent(InterruptedAgent):
    name = "interrupted-loop"
    run_in_event_loop = True


class SlowAgent(_Waiting):
    name = "slow"

    async def act(self, obs):
        time.sleep(0.05)  # blocks its worker, as an agent stuck in its own computation does
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="waiting")
"""
SPIN: dict[str, Any] = {**PLANNERS, "agents": ["test_agents:SpinAgent"], "budget": 30}
"""12 episodes of 30 actions at 20 ms each: as long on any machine, however fast the simulator
(the planners finish so quickly that a test could miss its moment)."""


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            info = _stat(int(entry.name))
            if info is not None and info[1] == pid:
                out.append(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    info = _stat(pid)
    return info is not None and info[0] not in ("Z", "X")


def _start(tmp_path: Path, spec: dict[str, Any]) -> tuple[subprocess.Popen[str], Path, list[str]]:
    out = tmp_path / "out"
    cmd = command(write_spec(tmp_path / "spec.yaml", spec), out, "--workers", "2")
    (tmp_path / "test_agents.py").write_text(AGENTS)
    environ = env()
    environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(tmp_path), environ.get("PYTHONPATH")])
    )
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ
    )
    return proc, out / "results.sqlite", cmd


def _wait_for(condition: Any, proc: subprocess.Popen[str], limit: float = 240) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert proc.poll() is None, "the run ended before the test could act"
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def _busy_worker(proc: subprocess.Popen[str], db: Path) -> int | None:
    if not ok_records(db):
        return None
    for pid in _children(proc.pid):
        info = _stat(pid)
        if info is not None and info[0] == "R":  # computing an episode, not waiting for one
            return pid
    return None


def test_a_killed_worker_costs_only_its_own_episode_one_retry(tmp_path: Path) -> None:
    proc, db, _cmd = _start(tmp_path, SPIN)
    victim: list[int] = []

    def found() -> bool:
        pid = _busy_worker(proc, db)
        if pid is not None:
            victim.append(pid)
        return pid is not None

    _wait_for(found, proc)
    os.kill(victim[0], signal.SIGKILL)
    _stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "BrokenProcessPool" not in stderr
    ((episode, kind, message),) = faults(db)
    assert kind == "worker" and "SIGKILL" in message
    records = ok_records(db)
    assert len(records) == 12 and episode in records  # retried, and the run went on
    counts = step_counts(db)
    assert all(counts.get(e, 0) == r["actions_used"] for e, r in records.items())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGHUP])
def test_workers_die_with_their_parent(tmp_path: Path, sig: signal.Signals) -> None:
    proc, db, _cmd = _start(tmp_path, {**SPIN, "repetitions": 6})
    _wait_for(lambda: len(_children(proc.pid)) == 2 and bool(ok_records(db)), proc)
    workers = _children(proc.pid)
    os.kill(proc.pid, sig)
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [w for w in workers if _alive(w)]


def test_a_runaway_episode_becomes_a_timeout_fault_and_the_run_goes_on(tmp_path: Path) -> None:
    # The slow agent needs 100,000 x 50 ms, far past the limit however fast the simulator
    # becomes; the planner succeeds in 20 actions.
    spec = {
        **PLANNERS,
        "worlds": ["plains-1"],
        "rules": ["vanilla"],
        "agents": ["test_agents:SlowAgent", "vanilla-planner"],
        "repetitions": 1,
        "budget": 100_000,
        "execution": {"episode_timeout_s": 10, "max_attempts": 2, "retry_delay_s": 0.1},
    }
    proc, db, _cmd = _start(tmp_path, spec)
    _stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1, stderr
    (planner,) = ok_records(db).values()
    assert planner["agent"] == "vanilla-planner"
    stored = faults(db)
    assert [k for _, k, _ in stored] == ["timeout", "timeout"]  # two attempts in this run
    assert "wall-clock limit of 10 s" in stored[0][2]
    (row,) = rows(db, "SELECT record FROM episodes WHERE status = 'infra_fault'")
    assert '"fault": "timeout"' in row[0]


def test_a_blocking_act_on_the_event_loop_still_meets_its_time_limit(tmp_path: Path) -> None:
    """A plain ``act`` of an event-loop agent runs in a thread of its own: while it blocks,
    the other episodes go on and its time limit fires. It used to block the loop itself, so
    the run hung for as long as the call did."""
    spec = {
        **PLANNERS,
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M04"],
        "agents": ["test_agents:BlockingLoopAgent"],
        "repetitions": 1,
        "budget": 5,
        "execution": {"episode_timeout_s": 3, "max_attempts": 1},
    }
    proc, db, _cmd = _start(tmp_path, spec)
    try:
        _stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1, stderr
    stored = faults(db)
    assert [k for _, k, _ in stored] == ["timeout", "timeout"], stored  # both episodes, alike
    assert "wall-clock limit of 3 s" in stored[0][2]


def test_an_agent_ending_its_worker_or_raising_an_interrupt_is_its_own_error(
    tmp_path: Path,
) -> None:
    """``os._exit`` or ``raise KeyboardInterrupt`` in a user's ``act`` was a ``worker`` fault
    ("out of memory?"), retried ``max_attempts`` times in every run and never recorded; on
    the event loop the interrupt ended the whole run ("interrupted"). Each is now the
    agent's outcome, ``agent_error`` with what it did, and the run goes on."""
    spec = {
        **PLANNERS,
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M04"],
        "agents": [
            "test_agents:ExitingAgent",
            "test_agents:InterruptedAgent",
            "test_agents:InterruptedLoopAgent",
        ],
        "repetitions": 1,
        "budget": 5,
        "execution": {"max_attempts": 1},
    }
    proc, db, _cmd = _start(tmp_path, spec)
    try:
        _stdout, stderr = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    assert faults(db) == []
    records = ok_records(db).values()
    errors = sorted((r["agent"].split(":")[1], r["agent_error"]) for r in records)
    assert errors == [
        ("ExitingAgent", "AgentExit: the agent called os._exit(3)"),
        ("ExitingAgent", "AgentExit: the agent called os._exit(3)"),
        ("InterruptedAgent", "KeyboardInterrupt: "),
        ("InterruptedAgent", "KeyboardInterrupt: "),
        ("InterruptedLoopAgent", "KeyboardInterrupt: "),
        ("InterruptedLoopAgent", "KeyboardInterrupt: "),
    ]
    assert {(r["termination"], r["actions_used"]) for r in records} == {("agent_error", 1)}


def _rerun(cmd: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    environ = env()
    environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(tmp_path), environ.get("PYTHONPATH")])
    )
    return subprocess.run(cmd, capture_output=True, text=True, env=environ, timeout=600)


def test_an_episode_whose_worker_dies_every_time_is_given_up_across_reruns(
    tmp_path: Path,
) -> None:
    """An episode whose worker died every time (the OOM killer, a crash in native code) was
    retried ``max_attempts`` times in every rerun, forever. Its worker faults now count
    over all runs: at ``execution.max_worker_faults`` it is stored as given up, not run
    again, and analyze says so; raising the setting tries it again."""
    spec = {
        **PLANNERS,
        "worlds": ["plains-1"],
        "rules": ["vanilla"],
        "agents": ["test_agents:KillingAgent", "vanilla-planner"],
        "repetitions": 1,
        "budget": 20,
        "execution": {"max_attempts": 2, "retry_delay_s": 0, "max_worker_faults": 3},
    }
    proc, db, cmd = _start(tmp_path, spec)
    _stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1, stderr
    assert [k for _, k, _ in faults(db)] == ["worker", "worker"]  # two attempts in this run

    second = _rerun(cmd, tmp_path)  # one attempt left before the cap
    assert second.returncode == 1, second.stderr
    assert len(faults(db)) == 3
    assert "1 given up after their worker died on every attempt" in second.stdout
    (row,) = rows(db, "SELECT record FROM episodes WHERE status = 'given_up'")
    assert "given up after 3 worker fault(s) over all runs" in row[0]

    third = _rerun(cmd, tmp_path)  # not run again: the loop ends
    assert third.returncode == 0, third.stderr
    assert "1 episode(s) given up" in third.stderr and "running 0" in third.stderr
    assert len(faults(db)) == 3
    analysis = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(db)],
        capture_output=True, text=True, env=env(), timeout=300,
    )  # fmt: skip
    assert analysis.returncode == 0, analysis.stderr
    assert "left out: 1 episode(s) given up: the worker process running each died" in (
        analysis.stdout
    )
    assert "finishes them (all but the 1 given up" in analysis.stdout

    raised = {**spec, "execution": {**spec["execution"], "max_worker_faults": 4}}
    write_spec(tmp_path / "spec.yaml", raised)
    fourth = _rerun(cmd, tmp_path)
    assert fourth.returncode == 1, fourth.stderr
    assert "running 1" in fourth.stderr and len(faults(db)) == 4
    assert rows(db, "SELECT COUNT(*) FROM episodes WHERE status = 'given_up'") == [(1,)]
