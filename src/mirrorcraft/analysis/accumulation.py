"""Tech-tree and knowledge figures of the MineEvolve paper, from episode records.

- ``methods``: the paper's main-table shape for every method that ran tech-tree
  tasks (grid runs and accumulation evaluations): success rate per task group,
  Easy Avg., Hard Avg. and Overall, all computed at the task level (each task's
  success rate, averaged over the tasks: a group weighs as many tasks as it has);
- ``growth``: the same per checkpoint of each accumulation variant, as in
  MineEvolve's knowledge-accumulation table;
- ``overhead``: for every method that keeps memory, the memory it started from
  (entries, by kind) and ended with, mean retrieved tokens and retrieval latency
  per retrieval, memory calls (calls spent building or consulting memory) and
  model calls per episode, per checkpoint (the paper's knowledge-size table);
- ``regimes``: success per rule set at each checkpoint: with a store trained in
  Vanilla worlds, the Mirror rows are the transfer case;
- ``strategies``: per variant, the success averaged over checkpoints and at the
  last checkpoint (for curriculum comparisons, restricted to a group if asked);
- ``training``: per variant, success over consecutive tenths of its training stream
  and the store size reached.

``growth``, ``regimes``, ``strategies`` and ``training`` read only records with a
``memory.phase``. Group names, and which groups are easy or hard, come from the
task table (``techtree.yaml``: ``hard_groups``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mirrorcraft.analysis.metrics import configuration_label
from mirrorcraft.evaluator.tasks import (
    UnknownTaskError,
    get_task,
    techtree_difficulty,
    techtree_groups,
)
from mirrorcraft.runner.records import EpisodeRecord

HARD_GROUPS = tuple(techtree_difficulty()["hard"])
EASY_GROUPS = tuple(techtree_difficulty()["easy"])


def tech_group(task: str) -> str | None:
    """The tech-tree group of a task (None for tasks outside the tech-tree suite)."""
    try:
        return get_task(task).group
    except UnknownTaskError:
        return None


def group_of(task: str) -> str:
    """The column a task is counted in: its tech-tree group, else the task itself."""
    return tech_group(task) or task


def _rate(records: Sequence[EpisodeRecord]) -> float | None:
    return 100.0 * sum(r.success for r in records) / len(records) if records else None


def _mean(values: Iterable[float]) -> float | None:
    vals = list(values)
    return sum(vals) / len(vals) if vals else None


def task_level(records: Sequence[EpisodeRecord]) -> float | None:
    """Each task's success rate, averaged over the tasks (None without records)."""
    by_task: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        by_task[r.task].append(r)
    return _mean(rate for rs in by_task.values() if (rate := _rate(rs)) is not None)


def _ordered_groups(records: Iterable[EpisodeRecord]) -> list[str]:
    present = {group_of(r.task) for r in records}
    known = [g for g in techtree_groups() if g in present]
    return known + sorted(present - set(known))


def _aggregates(rs: Sequence[EpisodeRecord], groups: Sequence[str]) -> dict[str, Any]:
    return {
        "episodes": len(rs),
        "tasks": len({r.task for r in rs}),
        "groups": {g: task_level([r for r in rs if group_of(r.task) == g]) for g in groups},
        "easy": task_level([r for r in rs if tech_group(r.task) in EASY_GROUPS]),
        "hard": task_level([r for r in rs if tech_group(r.task) in HARD_GROUPS]),
        "overall": task_level(rs),
    }


def _phase(records: Iterable[EpisodeRecord], phase: str) -> list[EpisodeRecord]:
    return [r for r in records if r.memory.get("phase") == phase]


def _key(r: EpisodeRecord) -> tuple[str, int]:
    return str(r.memory.get("variant", r.agent)), int(r.memory.get("checkpoint") or 0)


def growth(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    evals = _phase(records, "eval")
    groups = _ordered_groups(evals)
    cells: dict[tuple[str, str, int], list[EpisodeRecord]] = defaultdict(list)
    for r in evals:
        variant, cp = _key(r)
        cells[(variant, r.model, cp)].append(r)
    rows = [
        {"variant": variant, "model": model, "checkpoint": cp, **_aggregates(rs, groups)}
        for (variant, model, cp), rs in sorted(cells.items())
    ]
    return {
        "groups": groups,
        "easy_groups": [g for g in EASY_GROUPS if g in groups],
        "hard_groups": [g for g in HARD_GROUPS if g in groups],
        "rows": rows,
    }


def method_label(r: EpisodeRecord) -> str:
    """A method's row label: the configuration (told the rules: marked), or variant@checkpoint."""
    if r.memory.get("phase") == "eval":
        variant, cp = _key(r)
        return f"{variant}@{cp}"
    return configuration_label(r.agent, r.disclosure)


def methods(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    """Success by tech-tree group with Easy/Hard/Overall per method, model and rule set."""
    tech = [
        r for r in records if tech_group(r.task) is not None and r.memory.get("phase") != "train"
    ]
    if not tech:
        return {}
    groups = _ordered_groups(tech)
    cells: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    for r in tech:
        cells[(r.rules, r.model, method_label(r))].append(r)
    rows = []
    for (rules, model, label), rs in sorted(
        cells.items(), key=lambda kv: (kv[0][0] != "vanilla", kv[0][0], kv[0][1], kv[0][2])
    ):
        ended = sum(1 for r in rs if r.termination == "call_budget")
        caps = sorted({r.call_budget for r in rs if r.call_budget is not None})
        rows.append(
            {
                "method": label,
                "model": model,
                "rules": rules,
                **_aggregates(rs, groups),
                "call_budget": caps,
                "call_budget_ends": 100.0 * ended / len(rs) if caps else None,
            }
        )
    return {
        "groups": groups,
        "easy_groups": [g for g in EASY_GROUPS if g in groups],
        "hard_groups": [g for g in HARD_GROUPS if g in groups],
        "rows": rows,
    }


def _store_total(counts: Any) -> float:
    return float(sum(v for v in counts.values() if isinstance(v, int | float))) if counts else 0.0


def overhead(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    """Memory size and cost per method (and checkpoint) for every method that keeps memory."""
    cells: dict[tuple[str, str, int | None], list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        phase = r.memory.get("phase")
        if phase == "train" or not r.memory.get("store_at_start"):
            continue
        if phase == "eval":
            name, checkpoint = _key(r)
            cells[(name, r.model, checkpoint)].append(r)
        else:
            cells[(r.agent, r.model, None)].append(r)
    rows = []
    for (variant, model, cp), rs in sorted(
        cells.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)
    ):
        start = [r.memory.get("store_at_start", {}) for r in rs]
        end = [r.memory.get("store_at_end", {}) or {} for r in rs]
        kinds = sorted({k for s in start for k in s})
        rows.append(
            {
                "variant": variant,
                "model": model,
                "checkpoint": cp,
                "episodes": len(rs),
                "entries": _mean(_store_total(s) for s in start),
                "kinds": {k: _mean(float(s.get(k, 0)) for s in start) for k in kinds},
                "entries_at_end": _mean(_store_total(e) for e in end),
                "skills": _mean(s.get("skill", 0) for s in start),
                "remedies": _mean(s.get("remedy", 0) + s.get("reflection", 0) for s in start),
                "retrieved_tokens": _mean(
                    float(r.memory.get("retrieved_tokens_mean", 0.0)) for r in rs
                ),
                "retrieval_ms": _mean(float(r.memory.get("retrieval_ms_mean", 0.0)) for r in rs),
                "memory_calls": _mean(float(r.memory.get("memory_calls", 0)) for r in rs),
                "calls": _mean(float(r.model_calls) for r in rs),
                "tokens": _mean(float(r.prompt_tokens + r.completion_tokens) for r in rs),
            }
        )
    return rows


def regimes(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    cells: dict[tuple[str, str, int, str], list[EpisodeRecord]] = defaultdict(list)
    for r in _phase(records, "eval"):
        variant, cp = _key(r)
        cells[(variant, r.model, cp, r.rules)].append(r)
    return [
        {
            "variant": v,
            "model": model,
            "checkpoint": cp,
            "rules": rules,
            "episodes": len(rs),
            "sr": _rate(rs),
        }
        for (v, model, cp, rules), rs in sorted(cells.items())
    ]


def strategies(records: Iterable[EpisodeRecord], group: str | None = None) -> list[dict[str, Any]]:
    rows = growth(r for r in records if group is None or tech_group(r.task) == group)["rows"]
    by_variant: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_variant[(row["variant"], row["model"])].append(row)
    out = []
    for (variant, model), vs in sorted(by_variant.items()):
        vs.sort(key=lambda x: x["checkpoint"])
        rates = [x["overall"] for x in vs if x["overall"] is not None]
        out.append(
            {
                "variant": variant,
                "model": model,
                "checkpoints": [x["checkpoint"] for x in vs],
                "by_checkpoint": [x["overall"] for x in vs],
                "mean": _mean(rates),
                "final": vs[-1]["overall"] if vs else None,
            }
        )
    return out


def training(records: Iterable[EpisodeRecord], bins: int = 10) -> list[dict[str, Any]]:
    streams: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    for r in _phase(records, "train"):
        # One stream (and store) per variant and model: pooling models would interleave
        # two learning curves and report one model's store as the other's.
        streams[(str(r.memory.get("variant", r.agent)), r.model)].append(r)
    out = []
    for (variant, model), rs in sorted(streams.items()):
        rs.sort(key=lambda r: int(r.memory.get("position", 0)))
        n = len(rs)
        curve = []
        for b in range(min(bins, n)):
            part = rs[b * n // min(bins, n) : (b + 1) * n // min(bins, n)]
            curve.append(_rate(part))
        end = rs[-1].memory.get("store_at_end", {}) if rs else {}
        out.append(
            {
                "variant": variant,
                "model": model,
                "episodes": n,
                "success": _rate(rs),
                "curve": curve,
                "entries": int(_store_total(end)),
                "kinds": dict(sorted(end.items())),
                "skills": end.get("skill", 0),
                "remedies": end.get("remedy", 0) + end.get("reflection", 0),
            }
        )
    return out


def accumulation_summary(
    eval_records: Sequence[EpisodeRecord], train_records: Sequence[EpisodeRecord] = ()
) -> dict[str, Any]:
    """Everything above in one JSON-able document.

    ``methods`` and ``overhead`` are present whenever records allow them (grid runs
    included); the checkpoint tables only when some record has a ``memory.phase``.
    Empty when nothing applies.
    """
    out: dict[str, Any] = {}
    table = methods(eval_records)
    if table:
        out["methods"] = table
    cost = overhead(eval_records)
    if cost:
        out["overhead"] = cost
    if not _phase(eval_records, "eval") and not _phase(train_records, "train"):
        return out
    diamond = any(tech_group(r.task) == "diamond" for r in eval_records)
    return {
        **out,
        "growth": growth(eval_records),
        "overhead": cost,
        "regimes": regimes(eval_records),
        "strategies": strategies(eval_records),
        "strategies_diamond": strategies(eval_records, "diamond") if diamond else [],
        "training": training(train_records),
    }
