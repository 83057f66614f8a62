"""Faults that repeat in every rerun: an episode past its time limit every time is given up
like one whose worker dies every time; the advice for a worker fault fits what happened
(a Python exception is not memory); an agent raising a ``BaseException`` of its own (an
``asyncio.CancelledError``) is its outcome, not a dead worker or a crashed run.
``mirrorcraft run`` in a subprocess, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mirrorcraft.runner.fault_report import advice, fault_table, group_faults
from mirrorcraft.runner.store import ResultStore
from tests.runcli import command, env, faults, ok_records, rows, write_spec

AGENTS = """
import asyncio
import time

from mirrorcraft.agents.base import Decision


class _Base:
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


class StuckAgent(_Base):
    # Its own computation never ends: every attempt meets the episode's time limit.
    name = "stuck"

    def act(self, obs):
        time.sleep(600)


class CancelledAgent(_Base):
    # A library it calls cancels a task of its own: CancelledError is a BaseException.
    name = "cancelled"

    def act(self, obs):
        if obs.step >= 1:
            raise asyncio.CancelledError("its own task was cancelled")
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="once")


class CancelledLoopAgent(CancelledAgent):
    name = "cancelled-loop"
    run_in_event_loop = True


class OddAgent(_Base):
    name = "odd"

    def act(self, obs):
        class Odd(BaseException):
            pass

        raise Odd("not an Exception")


class BreaksHarnessAgent(_Base):
    # Makes the simulator raise, as a bug in the harness would (outside the agent's code).
    name = "breaks-harness"

    def act(self, obs):
        from mirrorcraft.backends import sim

        def broken(self, action):
            raise ValueError("simulated harness bug\\nwith a second line")

        sim.SimEpisode.step = broken
        return Decision({"skill": "wait", "args": {"ticks": 1}}, thought="once")


class KilledAgent(_Base):
    name = "killed"

    def act(self, obs):
        import os
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
"""

BASE: dict[str, Any] = {
    "schema_version": 1,
    "name": "repeated",
    "worlds": ["plains-1"],
    "rules": ["vanilla"],
    "tasks": ["diamond"],
    "repetitions": 1,
    "budget": 5,
}


def _run(tmp_path: Path, spec: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    cmd = command(write_spec(tmp_path / "spec.yaml", spec), tmp_path / "out", "--no-report")
    (tmp_path / "repeated_agents.py").write_text(AGENTS)
    environ = env()
    environ["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(tmp_path), environ.get("PYTHONPATH")])
    )
    return subprocess.run(cmd, capture_output=True, text=True, env=environ, timeout=600)


def test_an_episode_past_its_time_limit_every_time_is_given_up_across_reruns(
    tmp_path: Path,
) -> None:
    """An episode that ran past ``execution.episode_timeout_s`` every time was retried in
    every rerun, forever: rerunning the same command, as told, never converged. Its
    time-outs now count over all runs: at ``execution.max_timeouts`` it is given up,
    the run's closing lines say so and what to raise, and raising it tries it again."""
    spec = {
        **BASE,
        "agents": ["repeated_agents:StuckAgent", "vanilla-planner"],
        "execution": {"episode_timeout_s": 1, "max_attempts": 1, "max_timeouts": 2},
    }
    db = tmp_path / "out" / "results.sqlite"
    first = _run(tmp_path, spec)
    assert first.returncode == 1, first.stderr
    assert [k for _, k, _ in faults(db)] == ["timeout"]
    assert "raise execution.episode_timeout_s" in first.stdout
    assert "until execution.max_timeouts" in first.stdout

    second = _run(tmp_path, spec)  # the second time-out reaches the cap
    assert second.returncode == 1, second.stderr
    assert len(faults(db)) == 2
    assert "1 given up after they ran past their time limit on every attempt" in second.stdout
    assert "execution.max_timeouts is raised" in second.stdout
    (row,) = rows(db, "SELECT record FROM episodes WHERE status = 'given_up'")
    assert "given up after 2 time-out(s)" in json.loads(row[0])["given_up"]

    third = _run(tmp_path, spec)  # not run again: the rerun loop ends
    assert third.returncode == 0, third.stderr
    assert "running 0" in third.stderr and len(faults(db)) == 2
    assert "because they ran past their time limit" in third.stderr
    assert "raise execution.episode_timeout_s or execution.max_timeouts" in third.stderr

    raised = {**spec, "execution": {**spec["execution"], "max_timeouts": 3}}
    fourth = _run(tmp_path, raised)
    assert fourth.returncode == 1, fourth.stderr
    assert "running 1" in fourth.stderr and len(faults(db)) == 3

    # Raising the limit, as the run advises, gives it a fresh count: time-outs at a
    # shorter limit do not count against the longer one.
    longer = {**spec, "execution": {**spec["execution"], "episode_timeout_s": 2}}
    fifth = _run(tmp_path, longer)
    assert fifth.returncode == 1, fifth.stderr
    assert "running 1" in fifth.stderr and len(faults(db)) == 4


def test_time_outs_of_a_folder_written_before_the_cap_count_and_model_calls_do_not(
    tmp_path: Path,
) -> None:
    """Faults stored before the cap existed (no component) count by their message; a model
    call that timed out is the endpoint's, never counted towards ``max_timeouts``."""
    with ResultStore(tmp_path / "r.sqlite") as store:
        for _ in range(3):
            store.write_fault("old", "timeout", "the episode ran past its limit of 5 s", {})
            store.write_fault("call", "timeout", "'m' at h:1: no answer in 10 s", {}, "", "'m'")
        gave_up = store.give_up_faulty({"worker": 3, "timeout": 3}, {"old", "call"})
        assert gave_up == {"old": ("timeout", 3)}
        assert store.counts() == {"given_up": 1, "infra_fault": 1}
        assert store.give_up_faulty({"worker": 3, "timeout": 4}, {"old", "call"}) == {}
        assert store.counts() == {"infra_fault": 2}  # pending again under a higher cap
        # Time-outs at a shorter limit than the episode has now do not count.
        caps = {"worker": 3, "timeout": 3}
        assert store.give_up_faulty(caps, {"old"}, {"old": 5.0}) == {"old": ("timeout", 3)}
        assert store.give_up_faulty(caps, {"old"}, {"old": 6.0}) == {}
        assert store.capped_count("old", "timeout", 6.0) == 0
        assert store.capped_count("old", "timeout", 4.0) == 3


def test_an_exception_is_not_called_out_of_memory_and_a_killed_worker_is() -> None:
    """Every worker fault was advised "a worker process died (out of memory?)", a Python
    exception in the harness too. The advice now names the exception (its first line)."""
    text = fault_table(
        group_faults(
            [
                ("worker", "harness or agent", "internal error: ValueError: bad pack\nmore", "a"),
                ("worker", "worker process", "the worker ... was killed by SIGKILL (...)", "b"),
            ]
        )
    )
    assert "worker: a Python exception, not a dead process (ValueError: bad pack)" in text
    assert "worker: a worker process was killed (out of memory, or killed by hand?)" in text
    assert "out of memory" not in advice("worker", "internal error: KeyError: 'x'")


def test_a_harness_exception_and_a_killed_worker_get_their_own_advice(tmp_path: Path) -> None:
    spec = {
        **BASE,
        "agents": ["repeated_agents:BreaksHarnessAgent", "repeated_agents:KilledAgent"],
        "execution": {"max_attempts": 1},
    }
    result = _run(tmp_path, spec)
    assert result.returncode == 1, result.stderr
    todo = result.stdout[result.stdout.index("What to do:") :]
    assert "a Python exception, not a dead process (ValueError: simulated harness bug)" in todo
    assert "killed (out of memory, or killed by hand?)" in todo
    assert "harness or agent" in result.stdout


def test_an_agent_raising_a_base_exception_of_its_own_is_its_outcome(tmp_path: Path) -> None:
    """``asyncio.CancelledError`` (or any ``BaseException`` subclass) out of a user's ``act``
    ended its worker ("exited with status 1", a retried ``worker`` fault) and, on the event
    loop, ended the whole run with a traceback. Each is now the agent's ``agent_error``."""
    spec = {
        **BASE,
        "agents": [
            "repeated_agents:CancelledAgent",
            "repeated_agents:CancelledLoopAgent",
            "repeated_agents:OddAgent",
        ],
        "execution": {"max_attempts": 1},
    }
    result = _run(tmp_path, spec)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    db = tmp_path / "out" / "results.sqlite"
    assert faults(db) == []
    errors = sorted((r["agent"].split(":")[1], r["agent_error"]) for r in ok_records(db).values())
    assert errors == [
        ("CancelledAgent", "CancelledError: its own task was cancelled"),
        ("CancelledLoopAgent", "CancelledError: its own task was cancelled"),
        ("OddAgent", "Odd: not an Exception"),
    ]


MEMORY_AGENT = """
from mirrorcraft.agents.base import Decision


class KilledSecond:
    # Learns across episodes; its worker is killed in the second training episode, always.
    cross_episode_memory = True

    @classmethod
    def validate_options(cls, options):
        return dict(options)

    def __init__(self, options):
        self.seen, self.writable = 0, False

    def load_knowledge(self, records, *, writable):
        self.seen = records.get("count", {}).get("n", 0)
        self.writable = writable

    def start(self, ctx):
        pass

    async def act(self, obs):
        if self.seen == 1 and self.writable:
            import os
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        return Decision({"skill": "wait", "args": {"ticks": 1}})

    def finish(self, obs):
        pass

    def knowledge_delta(self):
        if not self.writable:
            return []
        return [{"op": "put", "id": "count", "record": {"kind": "count", "n": self.seen + 1}}]


class Stuck(KilledSecond):
    def act(self, obs):
        import time

        time.sleep(600)
"""


def test_a_stream_episode_that_blocks_meets_its_time_limit_with_one_worker(
    tmp_path: Path,
) -> None:
    """With ``--workers 1`` an accumulation run played each episode on its own event loop:
    an agent whose ``act`` blocked (a stuck computation) held the loop, its time limit never
    fired and the run hung with no fault. It now runs in a worker process, stopped at the
    limit and recorded as a timeout fault, like a grid run's."""
    doc = {
        "schema_version": 1,
        "kind": "accumulation",
        "name": "stream-stuck",
        "variants": [{"name": "k", "agent": "stream_agents:Stuck"}],
        "train": {"worlds": ["plains-1"], "rules": ["vanilla"], "tasks": ["iron_armor"],
                  "episodes": 2},
        "checkpoints": [2],
        "eval": {"worlds": ["plains-1"], "rules": ["vanilla"], "tasks": ["diamond"]},
        "budget": 3,
        "execution": {"max_attempts": 1, "episode_timeout_s": 1},
    }  # fmt: skip
    (tmp_path / "stream_agents.py").write_text(MEMORY_AGENT)
    cmd = command(write_spec(tmp_path / "spec.yaml", doc), tmp_path / "out", "--workers", "1")
    environ = {**env(), "PYTHONPATH": os.pathsep.join([str(tmp_path), env().get("PYTHONPATH", "")])}
    done = subprocess.run(
        [*cmd, "--no-report"], capture_output=True, text=True, env=environ, timeout=300
    )
    assert done.returncode == 1, done.stderr
    assert "stopped at episode 1: 1 fault(s) in this run, the last: timeout" in done.stdout
    ((_, kind, message),) = faults(tmp_path / "out" / "train.sqlite")
    assert kind == "timeout" and "wall-clock limit of 1 s" in message


def test_a_stream_episode_whose_worker_dies_every_time_stops_its_stream_for_good(
    tmp_path: Path,
) -> None:
    """An accumulation stream cannot skip an episode: one whose worker died every time
    stopped its stream with "rerun the same command to continue" in every rerun, forever.
    At ``execution.max_worker_faults`` over all runs it is now given up: the rerun runs
    nothing more of the stream and says which setting to raise once the cause is fixed."""
    doc = {
        "schema_version": 1,
        "kind": "accumulation",
        "name": "stream-faults",
        "variants": [{"name": "k", "agent": "stream_agents:KilledSecond"}],
        "train": {"worlds": ["plains-1"], "rules": ["vanilla"], "tasks": ["iron_armor"],
                  "episodes": 3},
        "checkpoints": [0, 3],
        "eval": {"worlds": ["plains-1"], "rules": ["vanilla"], "tasks": ["diamond"]},
        "budget": 3,
        "execution": {"max_attempts": 2, "retry_delay_s": 0, "max_worker_faults": 3},
    }  # fmt: skip
    (tmp_path / "stream_agents.py").write_text(MEMORY_AGENT)
    cmd = command(write_spec(tmp_path / "spec.yaml", doc), tmp_path / "out", "--workers", "2")
    environ = {**env(), "PYTHONPATH": os.pathsep.join([str(tmp_path), env().get("PYTHONPATH", "")])}
    db = tmp_path / "out" / "train.sqlite"

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cmd, "--no-report"], capture_output=True, text=True, env=environ, timeout=600
        )

    first = run()
    assert first.returncode == 1, first.stderr
    assert len(faults(db)) == 2 and "rerun the same command to continue" in first.stdout

    second = run()  # the third worker fault reaches the cap
    assert second.returncode == 1, second.stderr
    assert len(faults(db)) == 3
    assert "stopped at episode 2: given up after 3 worker fault(s)" in second.stdout
    assert "raise execution.max_worker_faults and rerun" in second.stdout
    assert "rerun the same command" not in second.stdout
    assert rows(db, "SELECT COUNT(*) FROM episodes WHERE status = 'given_up'") == [(1,)]

    third = run()  # nothing of the stream runs again: no endless loop, no hole
    assert third.returncode == 1, third.stderr
    assert len(faults(db)) == 3
    assert "1 episode(s) given up over all runs" in third.stdout
    assert "training of k stopped before 3 episodes (at an episode given up)" in third.stdout
    assert rows(db, "SELECT COUNT(*) FROM episodes WHERE status = 'ok'") == [(1,)]
    analysis = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(db)],
        capture_output=True, text=True, env=environ, timeout=300,
    )  # fmt: skip
    assert analysis.returncode == 0, analysis.stderr
    assert "left out: 1 episode(s) given up" in analysis.stdout
    assert "in an accumulation stream the episodes after them" in analysis.stdout
