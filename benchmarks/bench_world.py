"""Embedded-world throughput: realistic episodes first, then mining, skills, reset and memory.

Run: .venv/bin/python benchmarks/bench_world.py           (about two minutes on 2 cores)
     .venv/bin/python benchmarks/bench_world.py --quick   (fewer episodes and rounds)

Figures are CPU time (``time.process_time``) in this one process, observation building
included in every step, each as the median over rounds with the min and max. The
headline is realistic play: the reference planners' recorded actions and the oracle's
full scripted episodes replayed through ``mirrorcraft.env``; the per-skill figures below
repeat one action in place.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from typing import Any

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.native import core_summary
from mirrorcraft.rules.game import load_game_data
from mirrorcraft.world.generate import generate
from mirrorcraft.world.registry import biome_spec, load_world, palette_for, world_table
from workloads import interleaved, planner_actions, random_actions, record_agent, replay, spread

SKILL_CASES: dict[str, tuple[dict[str, int], list[dict[str, Any]]]] = {
    "mine": ({"iron_pickaxe": 2}, [{"skill": "mine", "args": {"block": "stone", "count": 1}}]),
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


def skill_rate(name: str, n: int = 300) -> tuple[int, float]:
    inv, actions = SKILL_CASES[name]
    loaded, rules = load_world("plains-1"), vanilla_rules()
    task = get_task("iron_armor").with_budget(10**9)
    ep = SimEpisode(loaded, rules, rules, task, seed=1, start_inventory=inv)
    for a in SETUP.get(name, []):
        ep.step(a)
    start = time.process_time()
    for i in range(n):
        ep.step(actions[i % len(actions)])
    return n, time.process_time() - start


LONG_MINING = [
    {"skill": "mine", "args": {"block": b, "count": 1}}
    for b in ("stone", "log", "coal_ore", "stone", "iron_ore", "dirt", "stone", "sand")
]


def long_mining(steps: int = 2000, segment: int = 500) -> list[tuple[float, float]]:
    """A long mining episode: per segment, CPU ms per action and blocks dug per action."""
    loaded, rules = load_world("plains-1"), vanilla_rules()
    task = get_task("iron_armor").with_budget(10**9)
    ep = SimEpisode(
        loaded, rules, rules, task, seed=1, start_inventory={"iron_pickaxe": 64, "iron_axe": 8}
    )
    out = []
    for s in range(0, steps, segment):
        dug = 0
        start = time.process_time()
        for i in range(s, s + segment):
            out_step = ep.step(LONG_MINING[i % len(LONG_MINING)])
            dug += ep.body.dug + len(out_step.result.details.get("blocks", ()))
        out.append(((time.process_time() - start) * 1000 / segment, dug / segment))
    return out


def generation_and_reset() -> None:
    game = load_game_data()
    palette = palette_for(game)
    gens = []
    for wid, entry in world_table().items():
        start = time.process_time()
        generate(wid, biome_spec(entry.biome), entry.seed, palette)
        gens.append((wid, time.process_time() - start))
    print(
        f"world generation: max {max(t for _, t in gens):.2f} s, "
        f"mean {statistics.mean(t for _, t in gens):.2f} s (CPU, per world)"
    )
    loaded, rules = load_world("plains-1"), vanilla_rules()
    task = get_task("diamond")
    times = []
    for _ in range(50):
        start = time.process_time()
        ep = SimEpisode(loaded, rules, rules, task, seed=1)
        ep.observe()
        times.append(time.process_time() - start)
    print(
        "reset (fresh world + body + evaluator + first observation): "
        f"median {statistics.median(times) * 1000:.2f} ms"
    )
    gc.collect()
    dirty = private_dirty()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    live = [SimEpisode(loaded, rules, rules, task, seed=i) for i in range(20)]
    for ep in live:
        ep.step({"skill": "mine", "args": {"block": "log", "count": 2}})
        ep.step({"skill": "mine", "args": {"block": "dirt", "count": 2}})
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    per = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(live)
    grown = private_dirty()
    note = (
        f"; private memory the process gained: {(grown - dirty) / len(live) / 2**20:.2f} MiB"
        if dirty is not None and grown is not None
        else ""
    )
    print(
        f"memory per live episode (after a few digs): Python allocations {per / 2**20:.2f} MiB"
        f"{note}"
    )


def private_dirty() -> int | None:
    """Bytes of memory private to this process (Linux: /proc/self/smaps_rollup), or None.

    Counts the pages an episode's copy-on-write grid has copied, which Python's allocation
    tracing does not see.
    """
    try:
        with open("/proc/self/smaps_rollup") as f:
            text = f.read()
    except OSError:
        return None
    total = 0
    for line in text.splitlines():
        if line.startswith(("Private_Dirty:", "Private_Clean:")):
            total += int(line.split()[1]) * 1024
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer episodes and rounds")
    parser.add_argument("--rounds", type=int, default=None, help="timing rounds (default 5)")
    args = parser.parse_args()
    rounds = args.rounds or (2 if args.quick else 5)
    print(core_summary())

    planned = planner_actions(quick=args.quick)
    worlds = ("plains-1",) if args.quick else ("plains-1", "taiga-2", "jungle-1")
    scripted = [
        record_agent("oracle", w, r, t)
        for w in worlds
        for r in ("vanilla", "M04")
        for t in ("iron_armor", "diamond", "enchantment")
    ]
    randoms = random_actions(episodes=2 if args.quick else 6)
    rates = interleaved(
        {
            "planners": lambda: replay(planned),
            "scripted": lambda: replay(scripted),
            "random": lambda: replay(randoms),
        },
        rounds,
    )
    n_planned = sum(len(r.actions) for r in planned)
    n_scripted = sum(len(r.actions) for r in scripted)
    n_random = sum(len(r.actions) for r in randoms)
    print(f"== realistic episodes (actions/s per core, CPU time, {rounds} rounds)")
    print(
        f"planners' recorded actions replayed ({len(planned)} episodes, {n_planned} actions): "
        f"{spread(rates['planners'])}"
    )
    print(
        f"oracle's scripted full episodes ({len(scripted)} episodes, {n_scripted} actions): "
        f"{spread(rates['scripted'])}"
    )
    print(
        f"random well-formed actions ({len(randoms)} episodes, {n_random} actions): "
        f"{spread(rates['random'])}"
    )

    print("== mining")
    mine = [n / s for n, s in (skill_rate("mine") for _ in range(rounds))]
    print(f"mine (stone, one block a call, in place): {spread(mine)} actions/s")
    segments = long_mining(800 if args.quick else 2000, 200 if args.quick else 500)
    print(
        "long mining episode, per segment (CPU ms/action, blocks dug/action): "
        + ", ".join(f"{ms:.2f} ms {dug:.1f}" for ms, dug in segments)
    )
    first, last = segments[0], segments[-1]
    print(
        f"slowdown last/first segment: {last[0] / first[0]:.2f}x time per action, "
        f"{last[1] / max(first[1], 1e-9):.2f}x blocks dug per action"
    )

    print("== per skill (one action repeated in place)")
    skills = {name: skill_rate(name) for name in SKILL_CASES}
    print("actions/s by skill: " + ", ".join(f"{k} {n / s:,.0f}" for k, (n, s) in skills.items()))
    print("== generation, reset, memory")
    generation_and_reset()


if __name__ == "__main__":
    main()
