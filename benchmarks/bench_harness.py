"""Harness throughput with the reference agents: episodes per second on 1 and 2 workers,
and the wall time of the paper's main-grid shape (10 worlds x 7 rule sets x 3 tasks x 3 reps).

Run: .venv/bin/python benchmarks/bench_harness.py            (sample and a ~300-episode
                                                                mixed grid, a few minutes)
     .venv/bin/python benchmarks/bench_harness.py --quick    (one agent, one world)
     .venv/bin/python benchmarks/bench_harness.py --full     (the whole grid per agent)
     .venv/bin/python benchmarks/bench_harness.py --paper    (8,400 episodes through
                                                                `mirrorcraft run`, ~2 min)
"""

from __future__ import annotations

import argparse
import io
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from mirrorcraft.native import core_summary
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
PAPER_EPISODES = 8640
"""The paper's main study: 10 worlds x 7 rule sets x 3 tasks x 2 models x 3 repetitions x
6 configurations, plus the disclosed ReAct's Mirror episodes."""


def _spec_doc(agents: list[str], worlds: list[str], reps: int) -> dict[str, object]:
    return {
        "schema_version": 1,
        "name": f"bench-{'-'.join(agents)}",
        "worlds": worlds,
        "rules": RULES,
        "tasks": TASKS,
        "agents": agents,
        "repetitions": reps,
    }


def _spec(agent: str | list[str], worlds: list[str], reps: int) -> ExperimentSpec:
    agents = [agent] if isinstance(agent, str) else agent
    return parse_spec(_spec_doc(agents, worlds, reps), "bench")


def warm_up(agent: str, worlds: list[str]) -> None:
    """Run the sample's episodes in this process (the workers run theirs in forked copies)."""
    spec = _spec(agent, worlds, 1)
    for job in plan_jobs(spec, expand(spec), set()):
        run_job(job)


def timed_run(
    agent: str | list[str], worlds: list[str], reps: int, workers: int
) -> tuple[int, float]:
    spec = _spec(agent, worlds, reps)
    with tempfile.TemporaryDirectory() as tmp, ResultStore(Path(tmp) / "r.sqlite") as store:
        jobs = plan_jobs(spec, expand(spec), set())
        start = time.perf_counter()
        run_local(jobs, store, workers, Progress(len(jobs), io.StringIO()))
        elapsed = time.perf_counter() - start
        assert len(list(store.records())) == len(jobs)
        return len(jobs), elapsed


PAPER_REPETITIONS = 10
"""The reference grid (four agents, 10 worlds, 7 rule sets, 3 tasks) with 10 repetitions
is 8,400 episodes: the paper's 8,640 is not a whole number of grids over 7 rule sets."""


def paper_size_run(workers: int, quick: bool) -> None:
    """The reference grid at the paper's size through ``mirrorcraft run``, as a user runs
    it (a fresh process, its start, the report and its end included)."""
    reps, worlds = (1, WORLDS[:1]) if quick else (PAPER_REPETITIONS, WORLDS)
    agents = ["vanilla-planner", "adaptive-planner", "oracle", "random"]
    spec = _spec_doc(agents, worlds, reps)
    episodes = len(worlds) * len(RULES) * len(TASKS) * len(agents) * reps
    script = Path(sys.executable).with_name("mirrorcraft")  # the installed command
    command = [str(script)] if script.exists() else [sys.executable, "-m", "mirrorcraft.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spec.yaml"
        path.write_text(yaml.safe_dump(spec))
        argv = [*command, "run", str(path), "--workers", str(workers), "--out", tmp + "/out"]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"mirrorcraft run failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    print(
        f"reference grid x {reps} repetitions through `mirrorcraft run --workers {workers}`: "
        f"{episodes} episodes in {wall:.1f} s ({cpu:.1f} s CPU of all processes)"
    )
    if not quick:
        print(
            f"the paper's {PAPER_EPISODES:,} episodes at that rate: "
            f"{wall * PAPER_EPISODES / episodes / 60:.2f} min"
        )


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
    parser.add_argument(
        "--paper",
        action="store_true",
        help="only time the reference grid at the paper's size (8,400 episodes) through "
        "`mirrorcraft run --workers 2` (with --quick: 84 episodes, a check that it runs)",
    )
    args = parser.parse_args()
    print(core_summary())
    if args.paper:
        paper_size_run(2, args.quick)
        return
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
    if not args.quick:
        # A mixed grid of about 300 episodes (the four agents, two worlds, two repetitions).
        n1, s1 = timed_run(agents, worlds, 2, 1)
        n2, s2 = timed_run(agents, worlds, 2, 2)
        print(
            f"mixed grid, {n1} episodes: 1 worker {s1:.1f} s ({n1 / s1:.1f}/s), 2 workers "
            f"{s2:.1f} s ({n2 / s2:.1f}/s): 2 workers = {s1 / s2:.2f}x of 1"
        )
        print(
            f"paper's 8,640-episode shape with these agents, at the 2-worker rate: "
            f"about {PAPER_EPISODES / (n2 / s2) / 60:.1f} min (estimated)"
        )
    if args.full:
        total = 0.0
        episodes = 0
        for agent in agents:
            n, secs = timed_run(agent, WORLDS, 3, 2)
            total += secs
            episodes += n
            print(f"main-grid shape, {agent}: {n} episodes in {secs / 60:.1f} min on 2 workers")
        print(
            f"main-grid shape, all four reference agents: {episodes} episodes in "
            f"{total / 60:.1f} min on 2 workers; the paper's 8,640 episodes at that rate: "
            f"{PAPER_EPISODES / (episodes / total) / 60:.1f} min"
        )


if __name__ == "__main__":
    main()
