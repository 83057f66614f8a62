"""Reference planners' decision time: CPU milliseconds per decision, each planner.

Run: .venv/bin/python benchmarks/bench_planners.py           (63 episodes per round, 3 rounds)
     .venv/bin/python benchmarks/bench_planners.py --quick   (9 episodes, 1 round)

Each planner (vanilla-planner, adaptive-planner, oracle) plays every rule set x task
(worlds rotating, as in ``workloads.planner_conditions``) through the episode loop; only
the time spent inside the agent's ``act`` is counted (CPU time, ``time.process_time``),
so the simulator's share of the episode is left out. Figures are the median over rounds
with the min and max.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import defaultdict
from typing import Any

from mirrorcraft.agents.registry import make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.native import core_summary
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world
from workloads import SEED, planner_conditions


def timed_episode(agent_name: str, world: str, rules_name: str, task_id: str) -> tuple[int, float]:
    """(decisions, CPU seconds inside the agent) for one episode."""
    vanilla = vanilla_rules()
    rules = resolve_rules(rules_name)
    agent = make_agent(agent_name, active=rules, vanilla=vanilla, model="none")
    inner = agent.act
    spent = [0, 0.0]

    async def act(obs: Any) -> Any:
        start = time.process_time()
        out = await inner(obs)
        spent[1] += time.process_time() - start
        spent[0] += 1
        return out

    agent.act = act  # type: ignore[method-assign]
    spec = EpisodeSpec(
        "b", "bench", world, rules_name, get_task(task_id), agent_name, "none", "hidden", 0, SEED
    )
    asyncio.run(run_episode(spec, agent, load_world(world), rules, vanilla))
    return spent[0], spent[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="9 episodes, one round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    conditions = planner_conditions(quick=args.quick)
    rounds = 1 if args.quick else max(args.rounds, 1)
    print(core_summary())
    for c in conditions:  # load worlds and rule sets, and fill first-use caches, untimed
        load_world(c[1])
        resolve_rules(c[2])
    per: dict[str, list[float]] = defaultdict(list)
    decisions: dict[str, int] = defaultdict(int)
    for _ in range(rounds):
        totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        for agent, world, rules, task in conditions:
            n, secs = timed_episode(agent, world, rules, task)
            totals[agent][0] += n
            totals[agent][1] += secs
        for agent, (n, secs) in totals.items():
            per[agent].append(1000 * secs / max(n, 1))
            decisions[agent] = int(n)
    for agent, values in per.items():
        print(
            f"{agent:<17} {decisions[agent]:5d} decisions: {statistics.median(values):.3f} ms "
            f"per decision (min {min(values):.3f}, max {max(values):.3f})"
        )


if __name__ == "__main__":
    main()
