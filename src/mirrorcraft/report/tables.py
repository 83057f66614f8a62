"""The paper's tables, built from the summary document of ``mirrorcraft.analysis.summarize``.

Each builder returns ``None`` when the records hold nothing for its table, so
``build_tables`` yields only the tables that can be computed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mirrorcraft.report.accumulation_tables import accumulation_tables
from mirrorcraft.report.render import (
    DEGENERATE_NOTE,
    Cell,
    Table,
    any_degenerate,
    count,
    interval,
    num,
    signed,
)
from mirrorcraft.report.stat_tables import (
    cochran,
    controls,
    disclosure_tests,
    excluded_notes,
    horizon,
    horizon_short,
    irr,
    rl,
    skipped,
    unfinished_note,
    within_suite,
)
from mirrorcraft.report.usage_tables import run_usage

Summary = dict[str, Any]
Row = dict[str, Any]


__all__ = ["build_tables", "excluded_notes", "skipped", "unfinished_note"]


def _ci(row: Row, key: str) -> Cell:
    return interval(row.get(f"{key}_ci"))


def _unpaired_note(rows: list[Row], label: Callable[[Row], str]) -> list[str]:
    """Notes naming the episodes each row left out as unpaired, and why."""
    parts, apart = [], []
    for r in rows:
        left = r.get("unpaired") or {}
        if not r.get("paired", True):
            if left.get("vanilla") and left.get("mirror"):
                apart.append(label(r))
            continue
        why = []
        if left.get("vanilla"):
            why.append(f"{left['vanilla']} Vanilla without a Mirror twin")
        if left.get("mirror"):
            why.append(f"{left['mirror']} Mirror without a Vanilla twin")
        if why:
            parts.append(f"{label(r)}: {', '.join(why)}")
    notes = []
    if parts:
        notes.append(
            "Vanilla and Mirror columns and RIE use the same paired episodes; left out as "
            "unpaired (no twin in the other condition) — " + "; ".join(parts) + "."
        )
    if apart:
        notes.append(
            "No Vanilla–Mirror pair (columns over all episodes, no RIE): " + ", ".join(apart) + "."
        )
    return notes


def _cost(row: Row) -> Cell:
    if row["cost_unknown"]:
        return "unknown"
    text = num(row["cost_usd"], 3)
    return f"{text} est." if text is not None and row.get("cost_estimated") else text


_ESTIMATED_NOTE = (
    "est.: some episodes' token counts were estimated from text length (the endpoint "
    "reported no usable token counts), so their cost is an estimate."
)


def calls(s: Summary) -> Table | None:
    rows_in = [r for r in s["configurations"] if r["mirror"]["episodes"] and r.get("paid_calls")
               is not None and (r["paid_calls"] or r["cached_calls"])]  # fmt: skip
    if not rows_in:
        return None
    rows = [
        [
            r["configuration"],
            r["model"],
            count(r["mirror"]["episodes"]),
            num(r["paid_calls"]),
            num(r["cached_calls"]),
            num(r["prompt_tokens"], 0),
            num(r["completion_tokens"], 0),
            _cost(r),
            count(r["cost_estimated"]),
        ]
        for r in rows_in
    ]
    return Table(
        "calls",
        "Model calls, tokens and cost per Mirror episode",
        [
            "Configuration",
            "Model",
            "Episodes",
            "Paid calls",
            "Cached calls",
            "Prompt tokens",
            "Completion tokens",
            "Cost ($)",
            "Estimated",
        ],
        rows,
        left=2,
        notes=[
            "Cached calls were answered from the response cache (not paid again in this run; "
            "their recorded cost is what they cost when first made). Estimated: episodes whose "
            "token counts were partly estimated. " + _ESTIMATED_NOTE
        ],
    )


def configurations(s: Summary) -> Table | None:
    rows = [
        [
            r["configuration"],
            r["model"],
            num(r["vanilla"]["score"]),
            num(r["vanilla"]["sr"]),
            num(r["mirror"]["score"]),
            num(r["mirror"]["sr"]),
            signed(r["rie_sc"]),
            signed(r["rie_sr"]),
            num(r["actions"]),
            _cost(r) if r["mirror"]["episodes"] else None,
        ]
        for r in s["configurations"]
    ]
    if not rows:
        return None
    cols = ["Configuration", "Model", "Vanilla Score", "Vanilla SR", "Mirror Score", "Mirror SR"]
    notes = [
        "SR in percent, RIE_SR in percentage points; Actions and Cost are means over all "
        "Mirror episodes. Configurations told the rules have no Vanilla runs of their own.",
    ]
    notes += _unpaired_note(s["configurations"], lambda r: f"{r['configuration']} ({r['model']})")
    if any(r.get("cost_estimated") for r in s["configurations"]):
        notes.append(_ESTIMATED_NOTE)
    return Table(
        "configurations",
        "Results by configuration and model (Mirror pools all suites)",
        [*cols, "RIE_SC", "RIE_SR", "Actions", "Cost ($)"],
        rows,
        left=2,
        notes=notes,
    )


def suites(s: Summary) -> Table | None:
    rows = [
        [
            r["suite"] if r["suite"] != "pooled" else "Pooled",
            r["title"] or None,
            count(r["mirror"]["episodes"]),
            num(r["mirror"]["score"]),
            num(r["mirror"]["sr"]),
            signed(r["rie_sc"]),
            signed(r["rie_sr"]),
        ]
        for r in s["suites"]
    ]
    if not rows:
        return None
    return Table(
        "suites",
        "Mirror performance and RIE by rule suite (configurations without rule descriptions)",
        ["Suite", "Rule change", "Episodes", "Score", "SR", "RIE_SC", "RIE_SR"],
        rows,
        left=2,
        notes=_unpaired_note([r for r in s["suites"] if r["suite"] != "pooled"], _suite_label),
    )


def _suite_label(r: Row) -> str:
    return str(r["suite"])


def _vanilla_sr(rows: list[Row]) -> float | None:
    pooled = [r for r in rows if r["suite"] == "pooled"]
    return pooled[0]["vanilla_sr"] if pooled else None


_CONDITIONS = {"vanilla": "Vanilla", "hidden": "hidden-rule", "disclosed": "disclosed-rule"}


def _split_vanilla(agent: str, rows: list[Row]) -> str:
    """The split table's title note: the Vanilla SR of its pairs, or why there is none."""
    vsr = num(_vanilla_sr(rows))
    if vsr is not None:
        return f"Vanilla SR {vsr}%"
    pooled = next((r for r in rows if r["suite"] == "pooled"), None)
    left = (pooled or {}).get("unpaired") or {}
    absent = [name for key, name in _CONDITIONS.items() if not left.get(key)]
    if absent:
        return f"no Vanilla SR: {agent} has no {' or '.join(absent)} episodes"
    return "no Vanilla SR: no pair was run in all three conditions"


_SPLIT_COLUMNS = [
    "Suite",
    "Hidden SR",
    "Disclosed SR",
    "RIE_SR",
    "Gap",
    "ΔSR",
    "RIE_SC",
    "Gap_SC",
    "ΔScore",
    "Pairs",
]


def _split_left_out(rows: list[Row]) -> list[str]:
    parts = []
    for r in rows:
        left = r.get("unpaired") or {}
        counts = [f"{n} {c}" for c, n in left.items() if n]
        if counts and r["suite"] != "pooled":
            parts.append(f"{r['suite']}: {', '.join(counts)}")
    if not parts:
        return []
    return ["Left out (their pair was not run in all three conditions): " + "; ".join(parts) + "."]


def disclosure(s: Summary) -> list[Table]:
    tables: list[Table] = []
    for agent in dict.fromkeys(r["agent"] for r in s["disclosure"]):
        rows = [r for r in s["disclosure"] if r["agent"] == agent and r["model"] == "all"]
        body = [
            [
                "Pooled" if r["suite"] == "pooled" else r["suite"],
                num(r["hidden_sr"]),
                num(r["disclosed_sr"]),
                signed(r["rie_sr"]),
                signed(r["gap_sr"]),
                signed(r["delta_sr"]),
                signed(r["rie_sc"]),
                signed(r["gap_sc"]),
                signed(r["delta_sc"]),
                count(r["comparisons"]),
            ]
            for r in rows
        ]
        tables.append(
            Table(
                f"disclosure_{agent}",
                f"Disclosure split for {agent}, pooled over models and tasks "
                f"({_split_vanilla(agent, rows)})",
                _SPLIT_COLUMNS,
                body,
                notes=[
                    "RIE = Gap + Δ; Gap = Vanilla - disclosed, Δ = disclosed - hidden, "
                    "over pairs run in all three conditions.",
                    *_split_left_out(rows),
                ],
            )
        )
    return tables


def disclosure_by_model(s: Summary) -> list[Table]:
    tables: list[Table] = []
    for agent in dict.fromkeys(r["agent"] for r in s["disclosure"]):
        rows = [r for r in s["disclosure"] if r["agent"] == agent and r["model"] != "all"]
        models = list(dict.fromkeys(r["model"] for r in rows))
        if not models:
            continue
        suites = list(dict.fromkeys(r["suite"] for r in rows))
        cell = {(r["suite"], r["model"]): r for r in rows}
        body: list[list[Cell]] = []
        for suite in suites:
            line: list[Cell] = ["Pooled" if suite == "pooled" else suite]
            for m in models:
                r = cell.get((suite, m))
                line += [signed(r[k]) if r else None for k in ("rie_sr", "gap_sr", "delta_sr")]
            body.append(line)
        cols = ["Suite"] + [f"{m} {k}" for m in models for k in ("RIE_SR", "Gap", "ΔSR")]
        tables.append(
            Table(
                f"disclosure_{agent}_by_model", f"Disclosure split for {agent} by model", cols, body
            )
        )
    return tables


def _breakdown(s: Summary, by: str, title: str) -> Table | None:
    rows = [
        [
            r["group"],
            num(r["vanilla"]["score"]),
            num(r["vanilla"]["sr"]),
            num(r["mirror"]["score"]),
            num(r["mirror"]["sr"]),
            signed(r["rie_sc"]),
            signed(r["rie_sr"]),
        ]
        for r in s["breakdowns"][by]
    ]
    if not rows:
        return None
    cols = [by.capitalize(), "Vanilla Score", "Vanilla SR", "Mirror Score", "Mirror SR"]
    notes = _unpaired_note(s["breakdowns"][by], lambda r: str(r["group"]))
    return Table(f"by_{by}", title, [*cols, "RIE_SC", "RIE_SR"], rows, notes=notes)


def by_biome(s: Summary) -> Table | None:
    return _breakdown(s, "biome", "Vanilla and paired Mirror results by biome")


def by_task(s: Summary) -> Table | None:
    return _breakdown(s, "task", "Vanilla and paired Mirror results by task")


def by_model(s: Summary) -> Table | None:
    return _breakdown(s, "model", "Vanilla and paired Mirror results by model")


def intervals(s: Summary) -> Table | None:
    agents = list(dict.fromkeys(r["agent"] for r in s["disclosure"]))
    split = {(r["agent"], r["suite"]): r for r in s["disclosure"] if r["model"] == "all"}
    rows: list[list[Cell]] = []
    for r in s["suites"]:
        line: list[Cell] = [
            "Pooled" if r["suite"] == "pooled" else r["suite"],
            signed(r["rie_sr"]),
            _ci(r, "rie_sr"),
        ]
        for agent in agents:
            d = split.get((agent, r["suite"]))
            for key in ("rie_sr", "gap_sr", "delta_sr"):
                line += [signed(d[key]), _ci(d, key)] if d else [None, None]
        rows.append(line)
    if not rows:
        return None
    cols = ["Suite", "RIE_SR (all)", "95%"]
    for agent in agents:
        cols += [
            f"{agent} {k}" if i == 0 else "95%" for k in ("RIE_SR", "Gap", "ΔSR") for i in (0, 1)
        ]
    notes = ["Intervals treat episodes within a world as independent."]
    cis = [r.get("rie_sr_ci") for r in s["suites"]]
    cis += [d.get(f"{k}_ci") for d in split.values() for k in ("rie_sr", "gap_sr", "delta_sr")]
    if any_degenerate(cis):
        notes.append(DEGENERATE_NOTE)
    return Table(
        "intervals",
        "Estimates with 95% intervals (binomial, stratified by "
        + (
            "model and task, configurations pooled"
            if s.get("strata") == "model-task"
            else "model, task and configuration"
        )
        + ")",
        cols,
        rows,
        notes=notes,
    )


def configuration_intervals(s: Summary) -> Table | None:
    rows = [
        [
            r["configuration"],
            r["model"],
            signed(r["rie_sc"]),
            _ci(r, "rie_sc"),
            signed(r["rie_sr"]),
            _ci(r, "rie_sr"),
            count(r["comparisons"]),
        ]
        for r in s["configurations"]
        if r["comparisons"] and (r["model"] == "all" or len(s["episodes"]["models"]) == 1)
    ]
    if not rows:
        return None
    cis = [r.get(k) for r in s["configurations"] for k in ("rie_sc_ci", "rie_sr_ci")]
    return Table(
        "configuration_intervals",
        "RIE of each configuration pooled over models and suites, with 95% intervals",
        ["Configuration", "Model", "RIE_SC", "95%", "RIE_SR", "95%", "Pairs"],
        rows,
        left=2,
        notes=[DEGENERATE_NOTE] if any_degenerate(cis) else [],
    )


_BUILDERS: list[Callable[[Summary], Table | list[Table] | None]] = [
    configurations,
    suites,
    disclosure,
    disclosure_by_model,
    by_task,
    by_biome,
    by_model,
    intervals,
    configuration_intervals,
    calls,
    run_usage,
    horizon,
    horizon_short,
    irr,
    rl,
    within_suite,
    cochran,
    disclosure_tests,
    controls,
    accumulation_tables,
]


def build_tables(summary: Summary) -> list[Table]:
    """Every table the summary can fill, in report order."""
    out: list[Table] = []
    for build in _BUILDERS:
        made = build(summary)
        if isinstance(made, list):
            out += made
        elif made is not None:
            out.append(made)
    return out
