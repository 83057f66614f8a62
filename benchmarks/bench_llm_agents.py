"""LLM-agent harness overhead per model call, and concurrency against a slow mock model.

Run: .venv/bin/python benchmarks/bench_llm_agents.py
(a) CPU time inside ``agent.act`` per call over a 200-call episode, with a zero-latency mock (observation block,
    prompt rendering, reply parsing, history bookkeeping; the mock itself is ~4 us);
(b) the same for every single-agent configuration (direct, react, tools, reflexion, voyager,
    xenon, adam) played by the mock planner policy that answers each call the way that
    configuration expects; the policy's own CPU time (it runs a planner) is measured and taken
    out, and an action's remaining time is divided by the model calls it made;
(c) 64 ReAct episodes at once, each 10 actions, against a mock answering in 1 s:
    achieved model calls per second against the ideal 64.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.llm.direct import DirectAgent
from mirrorcraft.agents.llm.react import ReActAgent
from mirrorcraft.agents.llm.reflexion import ReflexionAgent
from mirrorcraft.agents.mock_planner import PlannerPolicy
from mirrorcraft.agents.registry import make_agent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.mock import MockLLM
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world

ACTIONS = [
    {"thought": "get wood", "skill": "mine", "args": {"block": "log", "count": 1}},
    {
        "thought": "planks",
        "skill": "craft_grid",
        "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
    },
    {"thought": "look", "skill": "wait", "args": {"ticks": 20}},
]


def cycling() -> MockLLM:
    replies = [json.dumps(a) for a in ACTIONS]
    counter = {"n": 0}

    def policy(messages, meta):  # type: ignore[no-untyped-def]
        counter["n"] += 1
        return replies[counter["n"] % len(replies)]

    return MockLLM(policy)


async def overhead(agent_cls: type, steps: int = 200) -> list[float]:
    """CPU seconds inside ``agent.act`` for each of ``steps`` consecutive calls."""
    vanilla = vanilla_rules()
    loaded = load_world("plains-1")
    task = get_task("enchantment").with_budget(10_000)
    agent = agent_cls(agent_cls.__name__, cycling(), vanilla)
    agent.start(EpisodeContext("enchantment", "Enchantment", 10_000, 1))
    ep = SimEpisode(loaded, vanilla, vanilla, task, seed=1)
    obs = ep.observe()
    times = []
    for _ in range(steps):
        start = time.process_time()
        decision = await agent.act(obs)
        times.append(time.process_time() - start)
        assert decision is not None
        obs = ep.step(decision.action).observation
    return times


PLANNED = ("direct", "react", "tools", "reflexion", "voyager", "xenon", "adam")


class TimedPolicy:
    """The mock planner policy, with the CPU time it spends answering counted."""

    def __init__(self, inner: PlannerPolicy):
        self.inner = inner
        self.cpu = 0.0

    def __call__(self, messages, meta):  # type: ignore[no-untyped-def]
        start = time.process_time()
        try:
            return self.inner(messages, meta)
        finally:
            self.cpu += time.process_time() - start


async def planned_overhead(name: str, steps: int = 200) -> list[float]:
    """CPU seconds per model call inside ``agent.act``, the mock policy's time taken out
    (one whole episode under the Mirror suite M01, where the planner needs the most actions)."""
    vanilla, active = vanilla_rules(), resolve_rules("M01")
    loaded = load_world("plains-1")
    task = get_task("enchantment").with_budget(10_000)
    policy = TimedPolicy(PlannerPolicy(vanilla))
    agent = make_agent(name, active=active, vanilla=vanilla, client=MockLLM(policy))
    agent.start(EpisodeContext("enchantment", "Enchantment", 10_000, 1))
    ep = SimEpisode(loaded, active, vanilla, task, seed=1)
    obs = ep.observe()
    per_call = []
    for _ in range(steps):
        policy.cpu = 0.0
        start = time.process_time()
        decision = await agent.act(obs)
        spent = time.process_time() - start - policy.cpu
        if decision is None:
            break
        per_call.append(spent / max(1, decision.usage.calls))
        result = ep.step(decision.action)
        obs = result.observation
        if result.terminated or result.truncated:
            break
    return per_call


def summary(times: list[float]) -> str:
    return (
        f"median {statistics.median(times) * 1000:.2f} ms; calls 1-20 "
        f"{statistics.median(times[:20]) * 1000:.2f} ms, calls {len(times) - 19}-{len(times)} "
        f"{statistics.median(times[-20:]) * 1000:.2f} ms"
    )


async def concurrency(
    episodes: int = 64, budget: int = 10, latency: float = 1.0
) -> tuple[float, int]:
    vanilla = vanilla_rules()
    loaded = load_world("plains-1")
    task = get_task("diamond").with_budget(budget)

    async def one(i: int) -> int:
        client = MockLLM(lambda m, meta: json.dumps(ACTIONS[2]), latency_s=latency)
        agent = ReActAgent("react", client, vanilla)
        spec = EpisodeSpec(
            f"e{i}", "bench", "plains-1", "vanilla", task, "react", "mock", "hidden", i, i
        )
        record, _steps = await run_episode(spec, agent, loaded, vanilla, vanilla)
        return record.model_calls

    start = time.perf_counter()
    calls = await asyncio.gather(*(one(i) for i in range(episodes)))
    return time.perf_counter() - start, sum(calls)


def main() -> None:
    for cls in (DirectAgent, ReActAgent, ReflexionAgent):
        times = asyncio.run(overhead(cls))
        print(
            f"{cls.__name__:<15} overhead per model call (CPU in agent.act, 200 calls): "
            f"{summary(times)}"
        )
    print("played by the mock planner policy (its CPU taken out), per model call:")
    for name in PLANNED:
        times = asyncio.run(planned_overhead(name))
        print(f"  {name:<10} {len(times)} actions: {summary(times)}")
    wall, calls = asyncio.run(concurrency())
    ideal = 64 / 1.0
    print(
        f"64 concurrent ReAct episodes x 10 calls, 1 s per call: {calls} calls in {wall:.1f} s = "
        f"{calls / wall:.1f} calls/s vs ideal {ideal:.0f} ({100 * calls / wall / ideal:.0f}%)"
    )


if __name__ == "__main__":
    # It takes no options; --help (or anything else) prints what it measures instead of running.
    argparse.ArgumentParser(
        description=(__doc__ or "").strip(), formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
    main()
