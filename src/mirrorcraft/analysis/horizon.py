"""Cumulative SR at action checkpoints of the same trajectories (the paper's Table 5).

At a checkpoint *c* an episode counts as a success when its final milestone was
reached at action <= *c*. The paper reads these checkpoints off trajectories
with one budget (200) and averages the SR over tasks; here:

- the main curve of a configuration uses exactly the episodes whose budget
  reaches the largest checkpoint shown, so every point of the curve counts the
  same trajectories and the curve can never go down;
- SR at a checkpoint is the mean over tasks of each task's SR (each task weighted
  equally, whatever its number of episodes), with a 95% interval from the
  binomial variances stratified by task: ``sum_t p_t(1-p_t)/n_t / T**2``;
- episodes with a smaller budget are reported apart, one row per budget, at the
  checkpoints that budget reaches.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from mirrorcraft.analysis.diagnostics import success_step
from mirrorcraft.analysis.estimates import BOUNDARY, ONE_EPISODE, SR, CellStats, Estimate
from mirrorcraft.analysis.metrics import (
    HIDDEN,
    VANILLA,
    configuration_label,
    configuration_order,
    distinct,
)
from mirrorcraft.runner.records import EpisodeRecord

Row = dict[str, Any]


def task_averaged_sr(records: Sequence[EpisodeRecord], checkpoint: int) -> Estimate | None:
    """SR (%) after ``checkpoint`` actions, averaged over tasks, with its stratified variance."""
    by_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        step = success_step(r)
        cell = by_task[r.task]
        cell[0] += 1 if step is not None and step <= checkpoint else 0
        cell[1] += 1
    if not by_task:
        return None
    k = len(by_task)
    cells = [CellStats(n=n, successes=x) for x, n in by_task.values()]
    value = math.fsum(c.mean(SR) for c in cells) / k
    variance = math.fsum(c.mean_variance(SR) for c in cells) / (k * k)
    variance_ac = math.fsum(c.mean_variance(SR, corrected=True) for c in cells) / (k * k)
    degenerate = None
    if any(c.n < 2 for c in cells):
        degenerate = ONE_EPISODE
    elif any(c.successes in (0, c.n) for c in cells):
        degenerate = BOUNDARY
    return Estimate(value, variance, variance_ac, len(records), {}, degenerate)


def _curve(records: Sequence[EpisodeRecord], checkpoints: Sequence[int]) -> Row:
    points = {str(c): task_averaged_sr(records, c) for c in checkpoints}
    return {
        "episodes": len(records),
        "tasks": len({r.task for r in records}),
        "sr": {c: None if e is None else e.value for c, e in points.items()},
        "ci": {c: None if e is None else e.interval_json() for c, e in points.items()},
    }


def horizon_section(records: Sequence[EpisodeRecord], checkpoints: Sequence[int]) -> Row:
    """Cumulative SR at each checkpoint that some episode's budget reaches."""
    present = sorted({c for c in checkpoints if any(r.budget >= c for r in records)})
    rows: list[Row] = []
    short: list[Row] = []
    if present:
        top = present[-1]
        groups: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
        for r in records:
            if r.rules == VANILLA and r.disclosure != HIDDEN:
                continue
            groups[(r.agent, r.disclosure, r.model)].append(r)
        configs = sorted({(a, d) for a, d, _ in groups}, key=configuration_order)
        for agent, disclosure in configs:
            for model in distinct(m for a, d, m in groups if (a, d) == (agent, disclosure)):
                mine = groups[(agent, disclosure, model)]
                label = {
                    "configuration": configuration_label(agent, disclosure),
                    "agent": agent,
                    "disclosure": disclosure,
                    "model": model,
                }
                sides = {
                    "vanilla": [r for r in mine if r.rules == VANILLA],
                    "mirror": [r for r in mine if r.rules != VANILLA],
                }
                full = {k: [r for r in v if r.budget >= top] for k, v in sides.items()}
                if any(full.values()):
                    rows.append({**label, **{k: _curve(v, present) for k, v in full.items()}})
                for budget in sorted({r.budget for r in mine if r.budget < top}):
                    reached = [c for c in present if c <= budget]
                    short.append(
                        {
                            **label,
                            "budget": budget,
                            "checkpoints": reached,
                            **{
                                k: _curve([r for r in v if r.budget == budget], reached)
                                for k, v in sides.items()
                            },
                        }
                    )
    return {
        "checkpoints": present,
        "requested": sorted(set(checkpoints)),
        "budget_at_least": present[-1] if present else None,
        "rows": rows,
        "short_budgets": short,
    }
