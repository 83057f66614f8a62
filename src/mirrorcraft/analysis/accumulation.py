"""Knowledge-accumulation figures from MineEvolve episode records (the ``memory`` field).

- ``growth``: success rate per task group at each checkpoint of each variant, with
  the hard-group average and the overall rate (task-weighted), as in MineEvolve's
  knowledge-accumulation table;
- ``overhead``: the store each checkpoint evaluated with (skills, remedies), mean
  retrieved tokens and retrieval latency per retrieval, and model calls per episode;
- ``regimes``: success per rule set at each checkpoint: with a store trained in
  Vanilla worlds, the Mirror rows are the transfer case;
- ``strategies``: per variant, the success averaged over checkpoints and at the
  last checkpoint (for curriculum comparisons, restricted to a group if asked);
- ``training``: per variant, success over consecutive tenths of its training stream
  and the store size reached.

Records without a ``memory.phase`` are ignored. Group names come from the task table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from mirrorcraft.evaluator.tasks import UnknownTaskError, get_task
from mirrorcraft.runner.records import EpisodeRecord

HARD_GROUPS = ("iron", "redstone", "diamond", "armour")


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


def _phase(records: Iterable[EpisodeRecord], phase: str) -> list[EpisodeRecord]:
    return [r for r in records if r.memory.get("phase") == phase]


def _key(r: EpisodeRecord) -> tuple[str, int]:
    return str(r.memory.get("variant", r.agent)), int(r.memory.get("checkpoint") or 0)


def growth(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    evals = _phase(records, "eval")
    groups = sorted({group_of(r.task) for r in evals})
    hard = [g for g in HARD_GROUPS if g in groups]
    cells: dict[tuple[str, int], list[EpisodeRecord]] = defaultdict(list)
    for r in evals:
        cells[_key(r)].append(r)
    rows = []
    for (variant, cp), rs in sorted(cells.items()):
        by_group = {g: _rate([r for r in rs if group_of(r.task) == g]) for g in groups}
        hard_rs = [r for r in rs if group_of(r.task) in hard]
        rows.append(
            {
                "variant": variant,
                "checkpoint": cp,
                "episodes": len(rs),
                "groups": by_group,
                "hard": _rate(hard_rs),
                "overall": _rate(rs),
            }
        )
    return {"groups": groups, "hard_groups": hard, "rows": rows}


def overhead(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    cells: dict[tuple[str, int], list[EpisodeRecord]] = defaultdict(list)
    for r in _phase(records, "eval"):
        cells[_key(r)].append(r)
    rows = []
    for (variant, cp), rs in sorted(cells.items()):
        start = [r.memory.get("store_at_start", {}) for r in rs]
        rows.append(
            {
                "variant": variant,
                "checkpoint": cp,
                "episodes": len(rs),
                "skills": _mean(s.get("skill", 0) for s in start),
                "remedies": _mean(s.get("remedy", 0) + s.get("reflection", 0) for s in start),
                "retrieved_tokens": _mean(
                    float(r.memory.get("retrieved_tokens_mean", 0.0)) for r in rs
                ),
                "retrieval_ms": _mean(float(r.memory.get("retrieval_ms_mean", 0.0)) for r in rs),
                "calls": _mean(float(r.model_calls) for r in rs),
                "tokens": _mean(float(r.prompt_tokens + r.completion_tokens) for r in rs),
            }
        )
    return rows


def regimes(records: Iterable[EpisodeRecord]) -> list[dict[str, Any]]:
    cells: dict[tuple[str, int, str], list[EpisodeRecord]] = defaultdict(list)
    for r in _phase(records, "eval"):
        variant, cp = _key(r)
        cells[(variant, cp, r.rules)].append(r)
    return [
        {"variant": v, "checkpoint": cp, "rules": rules, "episodes": len(rs), "sr": _rate(rs)}
        for (v, cp, rules), rs in sorted(cells.items())
    ]


def strategies(records: Iterable[EpisodeRecord], group: str | None = None) -> list[dict[str, Any]]:
    rows = growth(r for r in records if group is None or tech_group(r.task) == group)["rows"]
    by_variant: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_variant[row["variant"]].append(row)
    out = []
    for variant, vs in sorted(by_variant.items()):
        vs.sort(key=lambda x: x["checkpoint"])
        rates = [x["overall"] for x in vs if x["overall"] is not None]
        out.append(
            {
                "variant": variant,
                "checkpoints": [x["checkpoint"] for x in vs],
                "by_checkpoint": [x["overall"] for x in vs],
                "mean": _mean(rates),
                "final": vs[-1]["overall"] if vs else None,
            }
        )
    return out


def training(records: Iterable[EpisodeRecord], bins: int = 10) -> list[dict[str, Any]]:
    streams: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in _phase(records, "train"):
        streams[str(r.memory.get("variant", r.agent))].append(r)
    out = []
    for variant, rs in sorted(streams.items()):
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
                "episodes": n,
                "success": _rate(rs),
                "curve": curve,
                "skills": end.get("skill", 0),
                "remedies": end.get("remedy", 0) + end.get("reflection", 0),
            }
        )
    return out


def accumulation_summary(
    eval_records: Sequence[EpisodeRecord], train_records: Sequence[EpisodeRecord] = ()
) -> dict[str, Any]:
    """Everything above in one JSON-able document (empty when no record has a phase)."""
    if not _phase(eval_records, "eval") and not _phase(train_records, "train"):
        return {}
    diamond = any(tech_group(r.task) == "diamond" for r in eval_records)
    return {
        "growth": growth(eval_records),
        "overhead": overhead(eval_records),
        "regimes": regimes(eval_records),
        "strategies": strategies(eval_records),
        "strategies_diamond": strategies(eval_records, "diamond") if diamond else [],
        "training": training(train_records),
    }
