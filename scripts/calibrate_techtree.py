"""Calibrate the tech-tree task budgets from the oracle's action counts.

Runs the ``oracle`` reference agent (given the vanilla rules) on every packaged vanilla
world for every tech-tree task, with a generous cap, for each seed given. Prints per
task the most actions a successful run used (and where), failures, the budget in
``src/mirrorcraft/data/techtree.yaml`` and a suggested budget:

    suggested = max(floor, ceil(factor * worst / step) * step)

``--write`` puts the suggested budgets into techtree.yaml (only the ``budget:`` values
change), for the tasks whose every oracle run (each world and seed) succeeded: a task
with a failed run has no worst count to back a budget (the failure may be the longest
route of all), so its budget is left as it is and named. Exits non-zero when any
oracle run fails.

Usage: .venv/bin/python scripts/calibrate_techtree.py [--seeds 1,2,3] [--write]
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

from mirrorcraft.evaluator.tasks import (
    UnknownTaskError,
    expand_task_selectors,
    get_task,
    techtree_tasks,
)
from mirrorcraft.runner.techtree_controls import OracleRun, run_techtree_controls
from mirrorcraft.world.registry import UnknownWorldError, world_ids

TABLE = Path(__file__).resolve().parent.parent / "src" / "mirrorcraft" / "data" / "techtree.yaml"


def suggest(worst: int, factor: float, floor: int, step: int) -> int:
    return max(floor, math.ceil(factor * worst / step) * step)


def write_budgets(path: Path, budgets: dict[str, int]) -> int:
    """Rewrite ``budget: N`` on each listed task's line; returns how many lines changed."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = 0
    for i, line in enumerate(lines):
        m = re.search(r"\bid: ([a-z0-9_]+),", line)
        if m is None or m.group(1) not in budgets:
            continue
        new = re.sub(r"\bbudget: \d+", f"budget: {budgets[m.group(1)]}", line)
        if new != line:
            lines[i], changed = new, changed + 1
    path.write_text("".join(lines), encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3", help="episode seeds, comma-separated")
    parser.add_argument("--world", action="append", default=None, help="worlds (default: all)")
    parser.add_argument(
        "--task", action="append", default=None, help="tasks or selectors (default: techtree)"
    )
    parser.add_argument("--factor", type=float, default=2.5, help="budget / worst oracle count")
    parser.add_argument("--floor", type=int, default=10, help="smallest budget suggested")
    parser.add_argument("--step", type=int, default=5, help="round budgets up to a multiple")
    parser.add_argument("--cap", type=int, default=400, help="action cap for the oracle runs")
    parser.add_argument("--write", action="store_true", help="write the suggestions to the YAML")
    args = parser.parse_args(argv)
    try:
        tasks = list(expand_task_selectors(args.task)) if args.task else techtree_tasks()
    except UnknownTaskError as exc:
        parser.error(str(exc))
    worlds = args.world or world_ids()
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--seeds must be whole numbers, comma-separated (got {args.seeds!r})")
    if not seeds:
        parser.error("--seeds names no seed: no oracle run would back a budget")

    runs: list[OracleRun] = []
    for seed in seeds:
        try:
            report = run_techtree_controls(worlds, [], tasks, seed=seed, budget=args.cap)
        except UnknownWorldError as exc:
            parser.error(str(exc))
        runs += report.oracle

    head = f"{'task':<38}{'group':<10}{'worst':>6}  {'where':<16}{'budget':>7}{'suggest':>8}  note"
    print(head)
    print("-" * len(head))
    suggested: dict[str, int] = {}
    unbacked: dict[str, str] = {}
    failures = 0
    for task in tasks:
        mine = [r for r in runs if r.task == task]
        ok = [r for r in mine if r.success]
        failed = [f"{r.world}({r.termination})" for r in mine if not r.success]
        failures += len(failed)
        if failed:
            unbacked[task] = f"{task} ({len(failed)} of {len(mine)} runs failed)"
        t = get_task(task)
        if not ok:
            print(f"{task:<38}{t.group or '-':<10}{'-':>6}  {'-':<16}{t.budget:>7}{'-':>8}  FAILED")
            continue
        worst = max(ok, key=lambda r: r.actions)
        suggested[task] = suggest(worst.actions, args.factor, args.floor, args.step)
        note = "FAILED in " + ", ".join(failed) if failed else ""
        if t.budget < worst.actions:
            note = (note + "; " if note else "") + "budget below the oracle"
        print(
            f"{task:<38}{t.group or '-':<10}{worst.actions:>6}  {worst.world:<16}"
            f"{t.budget:>7}{suggested[task]:>8}  {note}"
        )
    print(
        f"\n{len(runs)} oracle runs ({len(worlds)} worlds x {len(tasks)} tasks x seeds {seeds}),"
        f" {failures} failed"
    )
    if args.write:
        backed = {t: b for t, b in suggested.items() if t not in unbacked}
        print(f"updated {write_budgets(TABLE, backed)} budget(s) in {TABLE}")
        if unbacked:
            print(
                f"not written, some oracle runs failed: {'; '.join(unbacked.values())}; their budgets"
                " stay as they are (a failed run backs no worst count)",
                file=sys.stderr,
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
