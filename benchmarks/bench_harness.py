"""Harness throughput with the reference agents: episodes per second on 1 and 2 workers,
and the wall time of the paper's main-grid shape (10 worlds x 7 rule sets x 3 tasks x 3 reps).

Run: .venv/bin/python benchmarks/bench_harness.py            (sample, a few minutes)
     .venv/bin/python benchmarks/bench_harness.py --quick    (one agent, one world)
     .venv/bin/python benchmarks/bench_harness.py --full     (the whole grid per agent)
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

from mirrorcraft.runner.executor import plan_jobs, run_job
from mirrorcraft.runner.loops import run_local
from mirrorcraft.runner.progress import Progress
from mirrorcraft.runner.spec import ExperimentSpec, expand, parse_spec
from mirrorcraft.runner.store import ResultStore

WORLDS = [
    "plains-1",
    "plains-2",
    "taiga-1",
    "taiga-2",
    "snowy_plains-1",
    "snowy_plains-2",
    "jungle-1",
    "jungle-2",
    "savanna-1",
    "savanna-2",
]
RULES = ["vanilla", "M01", "M02", "M03", "M04", "M05", "M06"]
TASKS = ["iron_armor", "diamond", "enchantment"]


def _spec(agent: str, worlds: list[str], reps: int) -> ExperimentSpec:
    return parse_spec(
        {
            "schema_version": 1,
            "name": f"bench-{agent}",
            "worlds": worlds,
            "rules": RULES,
            "tasks": TASKS,
            "agents": [agent],
            "repetitions": reps,
        },
        "bench",
    )


def warm_up(agent: str, worlds: list[str]) -> None:
    """Run the sample's episodes in this process (the workers run theirs in forked copies)."""
    spec = _spec(agent, worlds, 1)
    for job in plan_jobs(spec, expand(spec), set()):
        run_job(job)


def timed_run(agent: str, worlds: list[str], reps: int, workers: int) -> tuple[int, float]:
    spec = _spec(agent, worlds, reps)
    with tempfile.TemporaryDirectory() as tmp, ResultStore(Path(tmp) / "r.sqlite") as store:
        jobs = plan_jobs(spec, expand(spec), set())
        start = time.perf_counter()
        run_local(jobs, store, workers, Progress(len(jobs), io.StringIO()))
        elapsed = time.perf_counter() - start
        assert len(list(store.records())) == len(jobs)
        return len(jobs), elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--full", action="store_true", help="run the whole main-grid shape for each agent"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one agent on one world (21 episodes per figure): a check that it runs",
    )
    args = parser.parse_args()
    agents = ["vanilla-planner", "adaptive-planner", "oracle", "random"]
    worlds = WORLDS[:2]
    if args.quick:
        agents, worlds = ["adaptive-planner"], WORLDS[:1]
    # Warm this process's caches (worlds, rule sets, beliefs) by running the sample here once,
    # so both worker counts start equal: every run's workers are forked copies of it.
    for agent in agents:
        warm_up(agent, worlds)
    for agent in agents:
        for workers in (1, 2):
            n, secs = timed_run(agent, worlds, 1, workers)
            print(
                f"{agent:<17} {workers} worker(s): {n} episodes in {secs:6.1f} s = {n / secs:5.2f} episodes/s"
            )
    if args.full:
        total = 0.0
        for agent in agents:
            n, secs = timed_run(agent, WORLDS, 3, 2)
            total += secs
            print(f"main-grid shape, {agent}: {n} episodes in {secs / 60:.1f} min on 2 workers")
        print(f"main-grid shape, all four reference agents: {total / 60:.1f} min on 2 workers")


if __name__ == "__main__":
    main()
