"""The run-total table: model calls, failed attempts, tokens and cost summed over a run.

Built from the summary's ``usage`` section (``mirrorcraft.analysis.usage``); ``None`` when
no episode made a model call.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.report.render import Cell, Table, count, num

NOT_RECORDED = "not recorded"


def _cost(row: dict[str, Any]) -> Cell:
    if row["cost_unknown"]:
        return "unknown"
    text = num(row["cost_usd"], 4)
    return f"{text} est." if text is not None and row["estimated_calls"] else text


def _failures(row: dict[str, Any], key: str) -> Cell:
    """A failure count; "not recorded" when no episode with calls recorded it."""
    if row["failures_not_recorded"] and row["failures_not_recorded"] >= row["episodes_with_calls"]:
        return NOT_RECORDED
    value = row[key]
    return count(value) if not row["failures_not_recorded"] else f"{value}+"


def _kinds(row: dict[str, Any]) -> Cell:
    kinds = row["failed_attempts"]
    return ", ".join(f"{k} {n}" for k, n in kinds.items()) if kinds else None


def _cells(label: list[Cell], row: dict[str, Any]) -> list[Cell]:
    return [
        *label,
        count(row["episodes"]),
        count(row["paid_calls"]),
        count(row["cached_calls"]),
        count(row["prompt_tokens"]),
        count(row["completion_tokens"]),
        _cost(row),
        _failures(row, "failed_attempts_total"),
        _kinds(row),
        _failures(row, "unusable_replies"),
        count(row["failures_not_recorded"]),
    ]


def _fault_note(faults: dict[str, Any] | None) -> list[str]:
    if not faults or not faults["faults"]:
        return []
    kinds = ", ".join(f"{k} {n}" for k, n in faults["by_kind"].items())
    text = (
        f"Infrastructure faults (every run into this folder, episodes finished since "
        f"included): {faults['faults']} ({kinds}); not in the rows above. "
    )
    if faults["failed_attempts"]:
        failed = ", ".join(f"{k} {n}" for k, n in faults["failed_attempts"].items())
        text += f"Model-call attempts that failed in them: {failed}. "
    if faults["not_recorded"]:
        text += (
            f"{faults['not_recorded']} fault(s) without such counts (older, or not a model call's)."
        )
    return [text.strip()]


def run_usage(s: dict[str, Any]) -> Table | None:
    usage = s.get("usage")
    if not usage or not usage["total"]["model_calls"]:
        return None
    training = usage.get("training")
    phases = ["Phase"] if training else []
    rows = [
        _cells([r["agent"], r["model"], *([r.get("phase")] if training else [])], r)
        for r in usage["by_agent_model"]
    ]
    if len(rows) > 1:
        rows.append(_cells(["all", "all", *(["all"] if training else [])], usage["total"]))
    total = usage["total"]
    episodes = (
        f"every evaluation episode of the run (Vanilla, Mirror, disclosed) and its "
        f"{training['episodes']} training episode(s) (train.sqlite)"
        if training
        else "every evaluation episode of the run (Vanilla, Mirror, disclosed)"
    )
    notes = [
        f"Sums over {episodes}. Paid "
        "and cached calls are calls that got a reply; failed attempts are retried requests "
        "that got none (not calls, not in the tokens or the cost); unusable replies are "
        "calls whose reply the agent could not use. Not recorded: episodes with calls whose "
        "records predate these counts (their failures are unknown, not 0; a count marked + "
        "covers only the other episodes)."
    ]
    if total["possibly_billed_attempts"]:
        notes.append(
            f"{total['possibly_billed_attempts']} failed attempt(s) timed out or returned an "
            "unreadable body: the provider may have billed them, at a cost not in Cost ($)."
        )
    notes += _fault_note(usage.get("faults"))
    if total["estimated_calls"]:
        notes.append(
            "est.: some calls' token counts were estimated from text length, so the cost is "
            "partly an estimate."
        )
    return Table(
        "run_usage",
        "Model calls, failed attempts, tokens and cost for the whole run",
        [
            "Agent",
            "Model",
            *phases,
            "Episodes",
            "Paid calls",
            "Cached calls",
            "Prompt tokens",
            "Completion tokens",
            "Cost ($)",
            "Failed attempts",
            "By kind",
            "Unusable replies",
            "Not recorded",
        ],
        rows,
        left=2 + len(phases),
        notes=notes,
    )
