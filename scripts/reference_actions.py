"""Action counts of the reference planners per task, over worlds x rule sets.

Runs the ``oracle`` (given the active rules), ``vanilla-planner`` and
``adaptive-planner`` on every selected world under every selected rule set for
each task (embedded backend, the tasks' budgets) and prints, per agent and task,
how many episodes succeeded and the mean, median and largest action count of the
successful ones, and the mean over all episodes. ``--json FILE`` also writes every
episode's (agent, world, rules, task, success, actions, termination) so that two
versions of the simulator can be compared run by run.

Usage: .venv/bin/python scripts/reference_actions.py [--world W ...] [--rules R ...]
       [--task T ...] [--agent A ...] [--seed 1] [--workers 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from mirrorcraft.agents.reference import make_reference_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world, world_ids

AGENTS = ("oracle", "vanilla-planner", "adaptive-planner")
RULES = ("vanilla", "M01", "M02", "M03", "M04", "M05", "M06")
TASKS = ("iron_armor", "diamond", "enchantment")


def run_one(job: tuple[str, str, str, str, int]) -> dict[str, Any]:
    agent_name, world, rules_name, task_id, seed = job
    loaded = load_world(world)
    rules, vanilla = resolve_rules(rules_name), vanilla_rules()
    task = get_task(task_id)
    spec = EpisodeSpec(
        f"actions-{agent_name}-{world}-{rules_name}-{task_id}",
        "reference-actions",
        world,
        rules_name,
        task,
        agent_name,
        "none",
        "hidden",
        0,
        seed,
    )
    agent = make_reference_agent(agent_name, rules, vanilla)
    record, _steps = asyncio.run(run_episode(spec, agent, loaded, rules, vanilla))
    return {
        "agent": agent_name,
        "world": world,
        "rules": rules_name,
        "task": task_id,
        "success": record.success,
        "score": record.score,
        "actions": record.actions_used,
        "termination": record.termination,
    }


def table(rows: list[dict[str, Any]], agents: list[str], tasks: list[str]) -> str:
    head = (
        f"{'agent':<18}{'task':<13}{'success':>9}{'mean ok':>9}{'median':>8}"
        f"{'max ok':>8}{'mean all':>10}{'score':>7}"
    )
    lines = [head, "-" * len(head)]
    for agent in agents:
        for task in tasks:
            mine = [r for r in rows if r["agent"] == agent and r["task"] == task]
            if not mine:
                continue
            ok = [r["actions"] for r in mine if r["success"]]
            allc = [r["actions"] for r in mine]
            score = statistics.fmean(r["score"] for r in mine)
            lines.append(
                f"{agent:<18}{task:<13}{f'{len(ok)}/{len(mine)}':>9}"
                f"{(statistics.fmean(ok) if ok else float('nan')):>9.1f}"
                f"{(statistics.median(ok) if ok else float('nan')):>8.1f}"
                f"{(max(ok) if ok else 0):>8}{statistics.fmean(allc):>10.1f}{score:>7.1f}"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", action="append", default=None, help="worlds (default: all)")
    parser.add_argument("--rules", action="append", default=None, help="rule sets")
    parser.add_argument("--task", action="append", default=None, help="tasks")
    parser.add_argument("--agent", action="append", default=None, help="reference agents")
    parser.add_argument("--seed", type=int, default=1, help="episode seed")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--json", type=Path, default=None, help="write every episode here")
    args = parser.parse_args(argv)
    worlds = args.world or world_ids()
    rules = args.rules or list(RULES)
    tasks = args.task or list(TASKS)
    agents = args.agent or list(AGENTS)
    jobs = [(a, w, r, t, args.seed) for a in agents for w in worlds for r in rules for t in tasks]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            rows = list(pool.map(run_one, jobs, chunksize=4))
    else:
        rows = [run_one(j) for j in jobs]
    print(table(rows, agents, tasks))
    print(
        f"\n{len(rows)} episodes: {len(worlds)} worlds x {len(rules)} rule sets, seed {args.seed}"
    )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
