"""Workloads shared by the benchmarks: realistic action streams, and replaying them.

"Realistic" actions are the ones the reference planners actually issue: each planner
plays its episodes once (planning time is not measured), the chosen actions are kept,
and a benchmark replays them through ``mirrorcraft.env`` (reset, every step, every
observation), timing CPU time (``time.process_time``) so other load on a shared
machine counts less than wall time would.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mirrorcraft.agents.registry import make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.env import make
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world, world_ids

PLANNERS = ("vanilla-planner", "adaptive-planner", "oracle")
RULES = ("vanilla", "M01", "M02", "M03", "M04", "M05", "M06")
TASKS = ("iron_armor", "diamond", "enchantment")
SEED = 11


@dataclass(frozen=True)
class Recorded:
    env_id: str
    seed: int
    actions: list[dict[str, Any]]


def env_id(world: str, rules: str, task: str) -> str:
    return f"{world}{'' if rules == 'vanilla' else '@' + rules}/{task}"


def planner_conditions(quick: bool = False) -> list[tuple[str, str, str, str]]:
    """(agent, world, rules, task): each planner x rule set x task, worlds rotating."""
    worlds = world_ids()
    out = []
    i = 0
    for agent in PLANNERS:
        for rules in RULES:
            for task in TASKS:
                out.append((agent, worlds[i % len(worlds)], rules, task))
                i += 1
    return out[::7] if quick else out


def record_agent(agent_name: str, world: str, rules_name: str, task_id: str) -> Recorded:
    vanilla = vanilla_rules()
    rules = resolve_rules(rules_name)
    agent = make_agent(agent_name, active=rules, vanilla=vanilla, model="none")
    spec = EpisodeSpec(
        "b", "bench", world, rules_name, get_task(task_id), agent_name, "none", "hidden", 0, SEED
    )
    _rec, steps = asyncio.run(run_episode(spec, agent, load_world(world), rules, vanilla))
    return Recorded(env_id(world, rules_name, task_id), SEED, [s.action for s in steps])


def planner_actions(quick: bool = False) -> list[Recorded]:
    return [record_agent(*c) for c in planner_conditions(quick)]


def random_actions(episodes: int = 6, steps: int = 300) -> list[Recorded]:
    """Uniformly random well-formed actions (the ``random`` reference agent's), long episodes."""
    worlds = world_ids()
    out = []
    for i in range(episodes):
        world, rules, task = worlds[i % len(worlds)], RULES[i % len(RULES)], TASKS[i % 3]
        vanilla = vanilla_rules()
        agent = make_agent("random", active=resolve_rules(rules), vanilla=vanilla, model="none")
        spec = EpisodeSpec(
            "b",
            "bench",
            world,
            rules,
            get_task(task).with_budget(steps),
            "random",
            "none",
            "hidden",
            0,
            SEED + i,
        )
        loaded = load_world(world)
        _rec, trace = asyncio.run(run_episode(spec, agent, loaded, resolve_rules(rules), vanilla))
        out.append(Recorded(env_id(world, rules, task), SEED + i, [s.action for s in trace]))
    return out


def replay(recorded: Sequence[Recorded]) -> tuple[int, float]:
    """Replay every recorded episode through ``mirrorcraft.env``: (actions, CPU seconds).

    Environments are made (worlds loaded, rule sets compiled) before timing; the timed part
    is each episode's reset and all its steps, observations included.
    """
    envs = {r.env_id: make(r.env_id, budget=max(len(r.actions), 1)) for r in recorded}
    n = 0
    start = time.process_time()
    for r in recorded:
        env = envs[r.env_id]
        env.reset(seed=r.seed)
        for action in r.actions:
            env.step(action)
            n += 1
    return n, time.process_time() - start


def spread(values: Sequence[float]) -> str:
    """``median (min-max)`` of a figure over rounds."""
    return f"{statistics.median(values):,.0f} (min {min(values):,.0f}, max {max(values):,.0f})"


def interleaved(
    tasks: dict[str, Callable[[], tuple[int, float]]], rounds: int, seed: int = 0
) -> dict[str, list[float]]:
    """Run each task once per round, in a shuffled order each round: name -> rates."""
    rates: dict[str, list[float]] = {k: [] for k in tasks}
    order = list(tasks)
    rng = random.Random(seed)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            n, secs = tasks[name]()
            rates[name].append(n / secs if secs > 0 else float("inf"))
    return rates
