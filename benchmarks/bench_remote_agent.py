"""Overhead of the remote-agent path: steps per second with 16 episodes at once.

Run: .venv/bin/python benchmarks/bench_remote_agent.py [--quick]
The same greedy policy three ways, 16 concurrent episodes on one event loop (as
``mirrorcraft run`` runs agents that wait on the network), each ``--steps`` actions
on the embedded simulator:

(a) in process: the example plugin agent (examples/my_agent), no network;
(b) remote: the stdlib example server (examples/remote_agent/server.py) on loopback,
    with the shared observation block as text (the default, ``text: block``);
(c) remote with ``text: none`` (observation JSON only): what the block itself costs.

Figures are steps per second over the whole run (simulator, agent and HTTP included)
and the median time of one act call.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "my_agent"))

from mirrorcraft.agents.registry import make_agent  # noqa: E402
from mirrorcraft.backends.rulesets import vanilla_rules  # noqa: E402
from mirrorcraft.evaluator.tasks import get_task  # noqa: E402
from mirrorcraft.runner.episode import EpisodeSpec, run_episode  # noqa: E402
from mirrorcraft.world.registry import load_world  # noqa: E402

WORLDS = ("plains-1", "taiga-1", "savanna-1", "jungle-1")


class Timed:
    """Wraps an agent to time its act calls."""

    def __init__(self, inner: Any, times: list[float]) -> None:
        self.inner, self.times = inner, times
        self.name = inner.name
        self.cross_episode_memory = False

    def start(self, ctx: Any) -> None:
        self.inner.start(ctx)

    async def act(self, obs: Any) -> Any:
        t = time.perf_counter()
        out = await self.inner.act(obs)
        self.times.append(time.perf_counter() - t)
        return out

    def finish(self, obs: Any) -> Any:
        return self.inner.finish(obs)


async def grid(
    name: str, options: dict[str, Any] | None, episodes: int, steps: int
) -> tuple[float, float]:
    vanilla = vanilla_rules()
    task = get_task("diamond").with_budget(steps)
    loaded = {w: load_world(w) for w in WORLDS}
    times: list[float] = []

    async def one(i: int) -> int:
        world = WORLDS[i % len(WORLDS)]
        agent = make_agent(name, active=vanilla, vanilla=vanilla, options=options, label="bench")
        spec = EpisodeSpec(
            f"e{i}", "bench", world, "vanilla", task, "bench", "none", "hidden", i, i
        )
        try:
            record, _ = await run_episode(
                spec, Timed(agent, times), loaded[world], vanilla, vanilla
            )
        finally:
            closer = getattr(getattr(agent, "client", None), "aclose", None)
            if closer is not None:
                await closer()
        return record.actions_used

    start = time.perf_counter()
    done = await asyncio.gather(*(one(i) for i in range(episodes)))
    elapsed = time.perf_counter() - start
    return sum(done) / elapsed, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--steps", type=int, default=100, help="actions per episode")
    parser.add_argument("--quick", action="store_true", help="20 actions per episode")
    args = parser.parse_args()
    steps = 20 if args.quick else args.steps
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "remote_agent" / "server.py"), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().split()[-1]
        asyncio.run(grid("my_agent.greedy:GreedyAgent", None, 2, 5))  # warm up (imports, worlds)
        cases = [
            ("in process (plugin)", "my_agent.greedy:GreedyAgent", None),
            ("remote, text: block", url, {}),
            ("remote, text: none", url, {"text": "none"}),
        ]
        print(f"{args.episodes} concurrent episodes x {steps} actions, greedy policy")
        for label, name, options in cases:
            rate, act = asyncio.run(grid(name, options, args.episodes, steps))
            print(f"  {label:<22} {rate:8.0f} steps/s   median act {act * 1000:6.2f} ms")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
