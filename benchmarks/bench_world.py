"""Embedded-world throughput: actions per second, generation, reset and memory per episode.

Run: .venv/bin/python benchmarks/bench_world.py
Timings are wall-clock on one core; observation building is included in every step.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc
from typing import Any

from mirrorcraft.agents.reference import OracleAgent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.game import load_game_data
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.generate import generate
from mirrorcraft.world.registry import biome_spec, load_world, palette_for, world_table

SKILL_CASES: dict[str, tuple[dict[str, int], list[dict[str, Any]]]] = {
    "mine": ({"iron_pickaxe": 1}, [{"skill": "mine", "args": {"block": "stone", "count": 1}}]),
    "explore": ({"iron_pickaxe": 1}, [{"skill": "explore", "args": {"target": "cow"}}]),
    "prepare_access": ({}, [{"skill": "prepare_access", "args": {"target": "dirt"}}]),
    "craft_grid": (
        {"oak_log": 10_000},
        [
            {
                "skill": "craft_grid",
                "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
            }
        ],
    ),
    "smelt": (
        {"raw_iron": 10_000, "coal": 10_000, "furnace": 1},
        [{"skill": "smelt", "args": {"input": "raw_iron", "count": 6}}],
    ),
    "attack": ({}, [{"skill": "attack", "args": {"target": "cow", "count": 1}}]),
    "enchant": (
        {"book": 500, "lapis_lazuli": 2000, "enchanting_table": 1},
        [{"skill": "enchant", "args": {"item": "book"}}],
    ),
    "place": ({"dirt": 10_000}, [{"skill": "place", "args": {"block": "dirt"}}]),
    "equip": ({"stone_pickaxe": 1}, [{"skill": "equip", "args": {"item": "stone_pickaxe"}}]),
    "collect": ({}, [{"skill": "collect", "args": {"item": "apple"}}]),
    "ascend": ({"dirt": 10_000}, [{"skill": "ascend", "args": {"height": 1}}]),
    "trade": ({}, [{"skill": "trade", "args": {"give": "dirt", "get": "emerald"}}]),
    "wait": ({}, [{"skill": "wait", "args": {"ticks": 20}}]),
}
SETUP = {
    "smelt": [{"skill": "place", "args": {"block": "furnace"}}],
    "enchant": [{"skill": "place", "args": {"block": "enchanting_table"}}],
}


def skill_rate(name: str, n: int = 300) -> float:
    inv, actions = SKILL_CASES[name]
    loaded, rules = load_world("plains-1"), vanilla_rules()
    task = get_task("iron_armor").with_budget(10**9)
    ep = SimEpisode(loaded, rules, rules, task, seed=1, start_inventory=inv)
    for a in SETUP.get(name, []):
        ep.step(a)
    start = time.perf_counter()
    for i in range(n):
        ep.step(actions[i % len(actions)])
    return n / (time.perf_counter() - start)


def episode_rates() -> list[tuple[str, float, int]]:
    """Replay the oracle's routes (no planning time) through fresh episodes."""
    out = []
    vanilla = vanilla_rules()
    for world in ("plains-1", "taiga-2", "jungle-1"):
        loaded = load_world(world)
        for rules_name in ("vanilla", "M04"):
            rules = resolve_rules(rules_name)
            for task_id in ("iron_armor", "diamond", "enchantment"):
                task = get_task(task_id)
                spec = EpisodeSpec(
                    "b", "bench", world, rules_name, task, "oracle", "none", "hidden", 0, 1
                )
                _rec, steps = asyncio.run(
                    run_episode(spec, OracleAgent(rules), loaded, rules, vanilla)
                )
                actions = [s.action for s in steps]
                start = time.perf_counter()
                ep = SimEpisode(loaded, rules, vanilla, task, seed=1)
                for a in actions:
                    ep.step(a)
                elapsed = time.perf_counter() - start
                out.append(
                    (f"{world}@{rules_name}/{task_id}", len(actions) / elapsed, len(actions))
                )
    return out


def main() -> None:
    game = load_game_data()
    palette = palette_for(game)
    gens = []
    for wid, entry in world_table().items():
        start = time.perf_counter()
        generate(wid, biome_spec(entry.biome), entry.seed, palette)
        gens.append((wid, time.perf_counter() - start))
    print("world generation (s): " + ", ".join(f"{w} {t:.2f}" for w, t in gens))
    print(
        f"world generation: max {max(t for _, t in gens):.2f} s, mean {statistics.mean(t for _, t in gens):.2f} s"
    )
    for w in world_table():
        load_world(w)

    loaded, rules = load_world("plains-1"), vanilla_rules()
    task = get_task("diamond")
    times = []
    for _ in range(50):
        start = time.perf_counter()
        ep = SimEpisode(loaded, rules, rules, task, seed=1)
        ep.observe()
        times.append(time.perf_counter() - start)
    print(
        f"reset (fresh world copy + body + evaluator + first observation): median {statistics.median(times) * 1000:.2f} ms"
    )

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    live = [SimEpisode(loaded, rules, rules, task, seed=i) for i in range(20)]
    for ep in live:
        ep.step({"skill": "mine", "args": {"block": "log", "count": 2}})
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    per = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(live)
    print(f"memory per live episode: {per / 2**20:.2f} MiB")

    rates = {name: skill_rate(name) for name in SKILL_CASES}
    print("actions/s by skill: " + ", ".join(f"{k} {v:,.0f}" for k, v in rates.items()))
    print(f"actions/s, median over skills: {statistics.median(rates.values()):,.0f}")
    eps = episode_rates()
    print(
        "actions/s over scripted full episodes: "
        + ", ".join(f"{n} {r:,.0f}" for n, r, _ in eps[:6])
        + ", ..."
    )
    print(
        f"actions/s, median over {len(eps)} scripted episodes: {statistics.median(r for _, r, _ in eps):,.0f}"
    )
    total_actions = sum(a for *_, a in eps)
    total_time = sum(a / r for _, r, a in eps)
    print(f"actions/s, all scripted episodes together: {total_actions / total_time:,.0f}")


if __name__ == "__main__":
    main()
