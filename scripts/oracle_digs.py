"""How many blocks the oracle's routes dig in one skill call, per task.

Runs the ``oracle`` (given the active rules) on every selected world under every
selected rule set for each task, and counts for every skill call the blocks the
body broke on its way (the path digs that ``max_path_digs`` in ``data/body.yaml``
bounds) and all blocks it broke (path digs plus the targets themselves). Prints per
task the distribution of path digs over the calls that dug at all (percentiles,
largest, and a histogram), which skills dug, the largest single calls, and the tools that
broke.

The counts come from wrapping ``Body.walk`` and ``Body.break_block`` in this process;
nothing in the package changes.

Usage: .venv/bin/python scripts/oracle_digs.py [--world W ...] [--rules R ...]
       [--task T ...] [--seed 1] [--workers 2]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Any, ClassVar

from mirrorcraft.agents.reference import OracleAgent
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.body import Body
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.episode import EpisodeSpec, run_episode
from mirrorcraft.world.registry import load_world, world_ids

RULES = ("vanilla", "M01", "M02", "M03", "M04", "M05", "M06")
TASKS = ("iron_armor", "diamond", "enchantment")
BINS = (0, 1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 1000)


class _Count:
    path = 0
    broken = 0
    walking = 0
    depth = 0
    installed = False
    calls: ClassVar[list[dict[str, Any]]] = []
    episode: ClassVar[tuple[str, str, str]] = ("", "", "")


def _instrument() -> None:
    """Wrap the body's digging and the episode's skill calls (once per process)."""
    if _Count.installed:
        return
    _Count.installed = True
    walk, breaks, run = Body.walk, Body.break_block, SimEpisode._run

    def counted_walk(self: Body, plan: Any, sub: str) -> Any:
        _Count.walking += 1
        try:
            return walk(self, plan, sub)
        finally:
            _Count.walking -= 1

    def counted_break(self: Body, pos: Any, **kwargs: Any) -> Any:
        if _Count.depth == 0:  # blocks that fall with it are not dug
            _Count.broken += 1
            if _Count.walking:
                _Count.path += 1
        _Count.depth += 1
        try:
            return breaks(self, pos, **kwargs)
        finally:
            _Count.depth -= 1

    def counted_run(self: SimEpisode, action: Any) -> Any:
        _Count.path = _Count.broken = 0
        result = run(self, action)
        world, rules_name, task_id = _Count.episode
        _Count.calls.append(
            {
                "world": world,
                "rules": rules_name,
                "task": task_id,
                "skill": action.skill,
                "ok": result.ok,
                "path": _Count.path,
                "broken": _Count.broken,
                "tools_broken": list(result.details.get("tools_broken", [])),
                "step": self.used,
            }
        )
        return result

    Body.walk = counted_walk  # type: ignore[method-assign]
    Body.break_block = counted_break  # type: ignore[method-assign]
    SimEpisode._run = counted_run  # type: ignore[method-assign]


def run_one(job: tuple[str, str, str, int]) -> list[dict[str, Any]]:
    world, rules_name, task_id, seed = job
    _instrument()
    _Count.calls, _Count.episode = [], (world, rules_name, task_id)
    calls = _Count.calls
    loaded = load_world(world)
    rules, vanilla = resolve_rules(rules_name), vanilla_rules()
    spec = EpisodeSpec(
        f"digs-{world}-{rules_name}-{task_id}",
        "oracle-digs",
        world,
        rules_name,
        get_task(task_id),
        "oracle",
        "none",
        "hidden",
        0,
        seed,
    )
    record, _ = asyncio.run(run_episode(spec, OracleAgent(rules), loaded, rules, vanilla))
    for c in calls:
        c["success"], c["actions"] = record.success, record.actions_used
    return calls


def _pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def report(calls: list[dict[str, Any]], tasks: list[str]) -> str:
    out: list[str] = []
    head = (
        f"{'task':<13}{'calls':>7}{'digging':>9}{'mean':>7}{'p50':>5}{'p90':>5}{'p99':>5}"
        f"{'max':>5}{'>16':>6}{'>24':>6}{'>32':>6}{'>64':>6}   digging calls by skill"
    )
    out += [head, "-" * len(head)]
    for task in tasks:
        mine = [c for c in calls if c["task"] == task]
        dig = [c["path"] for c in mine if c["path"] > 0]
        if not dig:
            out.append(f"{task:<13}{len(mine):>7}{0:>9}")
            continue
        skills = Counter(c["skill"] for c in mine if c["path"] > 0)
        out.append(
            f"{task:<13}{len(mine):>7}{len(dig):>9}{statistics.fmean(dig):>7.1f}"
            f"{_pct(dig, 0.5):>5}{_pct(dig, 0.9):>5}{_pct(dig, 0.99):>5}{max(dig):>5}"
            + "".join(f"{sum(1 for d in dig if d > b):>6}" for b in (16, 24, 32, 64))
            + "   "
            + ", ".join(f"{s} {n}" for s, n in skills.most_common())
        )
    out.append("")
    out.append("histogram of path digs per digging call (all tasks), bins [lo, hi):")
    dig_all = [c["path"] for c in calls if c["path"] > 0]
    for lo, hi in itertools.pairwise(BINS[1:]):
        n = sum(1 for d in dig_all if lo <= d < hi)
        out.append(f"  {lo:>4}-{hi - 1:<4} {n:>6}  {'#' * min(60, (n + 9) // 10)}")
    out.append("")
    out.append("largest calls:")
    for c in sorted(calls, key=lambda c: -c["path"])[:8]:
        out.append(
            f"  {c['path']:>4} path digs ({c['broken']} broken) {c['skill']:<15}"
            f"{c['world']} {c['rules']} {c['task']} step {c['step']}"
        )
    worn = Counter(t for c in calls for t in c["tools_broken"])
    out.append(
        "\ntools broken in oracle calls: "
        + (", ".join(f"{t} {n}" for t, n in worn.most_common()) or "none")
    )
    ok = sum(1 for c in calls if c["step"] == c["actions"] and c["success"])
    runs = sum(1 for c in calls if c["step"] == c["actions"])
    out.append(f"\n{len(calls)} calls in {runs} oracle episodes ({ok} successful)")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", action="append", default=None, help="worlds (default: all)")
    parser.add_argument("--rules", action="append", default=None, help="rule sets")
    parser.add_argument("--task", action="append", default=None, help="tasks")
    parser.add_argument("--seed", type=int, default=1, help="episode seed")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    args = parser.parse_args(argv)
    worlds = args.world or world_ids()
    rules = args.rules or list(RULES)
    tasks = args.task or list(TASKS)
    jobs = [(w, r, t, args.seed) for w in worlds for r in rules for t in tasks]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            per_episode = list(pool.map(run_one, jobs, chunksize=2))
    else:
        per_episode = [run_one(j) for j in jobs]
    print(report([c for calls in per_episode for c in calls], tasks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
