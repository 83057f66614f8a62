"""What a run spent on its model: calls, failed attempts, tokens and cost, summed over episodes.

``usage_section(records)`` is the ``usage`` key of the summary (``mirrorcraft analyze``):
one row for the whole run and one per agent and model, over every evaluation episode
(Vanilla, Mirror, disclosed and control episodes alike; infrastructure records are not
episodes and are not in it) and, for an accumulation run, every training episode. Sums, not means: the per-episode means of the paper's
Table 2 are in the ``configurations`` rows.

Failure counts (``failed_attempts`` by kind, ``unusable_replies``) exist only in records
written since they were counted. An episode that made model calls but whose record lacks
them is counted in ``failures_not_recorded``; its failures are not taken as 0, and the
row's failure totals then cover only the other episodes (``failures_complete`` says
whether they cover all).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mirrorcraft.analysis.loading import RecordsError, connect_readonly
from mirrorcraft.runner.records import EpisodeRecord

POSSIBLY_BILLED = ("timeout", "malformed_response")
"""Failed attempts the provider may have processed, and billed, although no usable answer
came back (ours ran past ``timeout_s``, or its body could not be read). Their tokens are not
known, so they are not in ``cost_usd``; they are counted apart so the bill can be bounded."""

FAILURE_ORDER = (
    "rate_limit",
    "server_error",
    "timeout",
    "connection",
    "malformed_response",
    "auth",
    "not_found",
    "client_error",
)


def _kind_order(kind: str) -> tuple[int, str]:
    return (FAILURE_ORDER.index(kind) if kind in FAILURE_ORDER else len(FAILURE_ORDER), kind)


def usage_row(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """The summed usage of ``records`` (see the module docstring for the failure counts)."""
    failed: dict[str, int] = defaultdict(int)
    unusable = 0
    not_recorded = 0
    for r in records:
        if r.failed_attempts is None or r.unusable_replies is None:
            if r.model_calls:
                not_recorded += 1
            continue
        for kind, n in r.failed_attempts.items():
            failed[kind] += n
        unusable += r.unusable_replies
    costs = [r.cost_usd for r in records]
    unknown = sum(1 for c in costs if c is None)
    calls = sum(r.model_calls for r in records)
    cached = sum(r.cached_calls for r in records)
    return {
        "episodes": len(records),
        "episodes_with_calls": sum(1 for r in records if r.model_calls),
        "model_calls": calls,
        "paid_calls": calls - cached,
        "cached_calls": cached,
        "estimated_calls": sum(r.estimated_calls for r in records),
        "prompt_tokens": sum(r.prompt_tokens for r in records),
        "completion_tokens": sum(r.completion_tokens for r in records),
        "cost_usd": None if unknown else math.fsum(c for c in costs if c is not None),
        "cost_unknown": unknown,
        "failed_attempts": {k: failed[k] for k in sorted(failed, key=_kind_order)},
        "failed_attempts_total": sum(failed.values()),
        "possibly_billed_attempts": sum(failed.get(k, 0) for k in POSSIBLY_BILLED),
        "unusable_replies": unusable,
        "failures_not_recorded": not_recorded,
        "failures_complete": not_recorded == 0,
    }


EVALUATION = "evaluation"
TRAINING = "training"


def usage_section(
    records: Sequence[EpisodeRecord], train_records: Sequence[EpisodeRecord] = ()
) -> dict[str, Any]:
    """``{"total": row, "by_agent_model": [row + agent, model, phase, ...], "training": row
    or None}``; rows only for agent and model pairs with at least one model call.

    ``train_records`` are an accumulation run's training episodes (its ``train.sqlite``):
    the run paid for them too, so ``total`` sums them with the evaluation episodes, their
    rows have ``phase`` "training", and ``training`` is their own total (None without any).
    """
    groups: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    for phase, chosen in ((EVALUATION, records), (TRAINING, train_records)):
        for r in chosen:
            groups[(r.agent, r.model, phase)].append(r)
    rows = [
        {"agent": agent, "model": model, "phase": phase, **usage_row(rs)}
        for (agent, model, phase), rs in sorted(
            groups.items(), key=lambda item: (item[0][2] == TRAINING, item[0])
        )
        if any(r.model_calls for r in rs)
    ]
    return {
        "total": usage_row([*records, *train_records]),
        "by_agent_model": rows,
        "training": usage_row(train_records) if train_records else None,
    }


def fault_attempts(path: Path) -> dict[str, Any] | None:
    """What the ``faults`` table of a results database says about failed model calls: every
    infrastructure fault of every run into the folder (of episodes finished since too),
    ``faults`` and ``by_kind`` (fault kind -> count), the model-call attempts that failed in
    those episode attempts by kind (``failed_attempts``: ``auth``, ``not_found`` and
    ``client_error`` show only here, as they are never retried) and ``not_recorded`` (faults
    without such counts: written by an older version, or not from model calls, e.g. a dead
    worker). None when the database has no faults table."""
    con = connect_readonly(path)
    try:
        columns = {row[1] for row in con.execute("PRAGMA table_info(faults)")}
        if not columns:
            return None
        counted = "failed_attempts" if "failed_attempts" in columns else "''"
        rows = con.execute(f"SELECT kind, {counted} FROM faults").fetchall()
    except sqlite3.Error as exc:
        raise RecordsError(f"{path}: cannot read its faults table ({exc})") from None
    finally:
        con.close()
    by_kind: dict[str, int] = defaultdict(int)
    failed: dict[str, int] = defaultdict(int)
    not_recorded = 0
    for kind, text in rows:
        by_kind[str(kind)] += 1
        try:
            doc = json.loads(text) if isinstance(text, str) and text else None
        except (ValueError, RecursionError):  # a damaged cell: counted as not recorded
            doc = None
        if not isinstance(doc, dict):
            not_recorded += 1
            continue
        for name, n in doc.items():
            if isinstance(n, int) and not isinstance(n, bool) and n > 0:
                failed[str(name)] += n
    return {
        "faults": len(rows),
        "by_kind": dict(sorted(by_kind.items())),
        "failed_attempts": {k: failed[k] for k in sorted(failed, key=_kind_order)},
        "failed_attempts_total": sum(failed.values()),
        "not_recorded": not_recorded,
    }


def note_fault_attempts(
    summary: dict[str, Any], path: Path, kind: str, training: Path | None = None
) -> None:
    """Set ``summary["usage"]["faults"]`` (``fault_attempts``; None for JSONL input), with
    the faults of an accumulation run's training database ``training`` added in."""
    if kind != "sqlite":
        summary["usage"]["faults"] = None
        return
    found = [f for f in (fault_attempts(p) for p in (path, training) if p is not None) if f]
    summary["usage"]["faults"] = _merge_faults(found) if found else None


def _merge_faults(found: list[dict[str, Any]]) -> dict[str, Any]:
    by_kind: dict[str, int] = defaultdict(int)
    failed: dict[str, int] = defaultdict(int)
    for doc in found:
        for kind, n in doc["by_kind"].items():
            by_kind[kind] += n
        for kind, n in doc["failed_attempts"].items():
            failed[kind] += n
    return {
        "faults": sum(d["faults"] for d in found),
        "by_kind": dict(sorted(by_kind.items())),
        "failed_attempts": {k: failed[k] for k in sorted(failed, key=_kind_order)},
        "failed_attempts_total": sum(failed.values()),
        "not_recorded": sum(d["not_recorded"] for d in found),
    }
