"""Tables of the knowledge-accumulation section (``summary["accumulation"]``)."""

from __future__ import annotations

from typing import Any

from mirrorcraft.report.render import Cell, Table, count, num

Summary = dict[str, Any]


def _acc(s: Summary) -> dict[str, Any]:
    return s.get("accumulation") or {}


def growth(s: Summary) -> Table | None:
    g = _acc(s).get("growth")
    if not g or not g["rows"]:
        return None
    groups = g["groups"]
    rows: list[list[Cell]] = [
        [
            r["variant"],
            count(r["checkpoint"]),
            *(num(r["groups"][x]) for x in groups),
            num(r["hard"]),
            num(r["overall"]),
            count(r["episodes"]),
        ]
        for r in g["rows"]
    ]
    return Table(
        "accumulation_growth",
        "Knowledge accumulation: success rate (%) by task group at each store checkpoint",
        ["Variant", "Episodes learned", *groups, "Hard avg.", "Overall", "Eval episodes"],
        rows,
        left=1,
        notes=[
            "The store is frozen after the given number of training episodes and read without "
            "updates during evaluation (unless the spec sets eval.updates).",
            f"Hard avg. pools the groups {', '.join(g['hard_groups']) or '(none present)'}; "
            "averages weight tasks, not groups.",
        ],
    )


def overhead(s: Summary) -> Table | None:
    rows_in = _acc(s).get("overhead")
    if not rows_in:
        return None
    rows: list[list[Cell]] = [
        [
            r["variant"],
            count(r["checkpoint"]),
            num(r["skills"]),
            num(r["remedies"]),
            num(r["retrieved_tokens"]),
            num(r["retrieval_ms"], 3),
            num(r["calls"]),
            num(r["tokens"], 0),
        ]
        for r in rows_in
    ]
    return Table(
        "accumulation_overhead",
        "Knowledge store size and retrieval cost at each checkpoint (per evaluation episode)",
        [
            "Variant",
            "Episodes learned",
            "Skills",
            "Remedies/notes",
            "Retrieved tokens",
            "Retrieval ms",
            "Model calls",
            "Tokens",
        ],
        rows,
        notes=[
            "Retrieved tokens and retrieval time are means per retrieval; the curator never "
            "exceeds its token budget (curator.budget_tokens).",
        ],
    )


def regimes(s: Summary) -> Table | None:
    rows_in = _acc(s).get("regimes")
    if not rows_in or len({r["rules"] for r in rows_in}) < 2:
        return None
    rules = sorted({r["rules"] for r in rows_in}, key=lambda x: (x != "vanilla", x))
    cells: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows_in:
        cells.setdefault((r["variant"], r["checkpoint"]), {})[r["rules"]] = r["sr"]
    rows: list[list[Cell]] = [
        [variant, count(cp), *(num(v.get(x)) for x in rules)]
        for (variant, cp), v in sorted(cells.items())
    ]
    return Table(
        "accumulation_regimes",
        "Store checkpoints evaluated under each rule set: success rate (%)",
        ["Variant", "Episodes learned", *rules],
        rows,
        notes=["With a store trained under Vanilla rules, the Mirror columns measure transfer."],
    )


def strategies(s: Summary) -> list[Table]:
    out = []
    acc = _acc(s)
    for key, title in (
        ("strategies", "all evaluation tasks"),
        ("strategies_diamond", "Diamond-group tasks"),
    ):
        rows_in = acc.get(key)
        if not rows_in or len(rows_in) < 2:
            continue
        rows: list[list[Cell]] = [
            [r["variant"], num(r["mean"]), num(r["final"]), count(len(r["checkpoints"]))]
            for r in rows_in
        ]
        out.append(
            Table(
                f"accumulation_{key}",
                f"Knowledge-construction strategies on {title}: success rate (%)",
                ["Variant", "Mean over checkpoints", "Final checkpoint", "Checkpoints"],
                rows,
            )
        )
    return out


def training(s: Summary) -> Table | None:
    rows_in = _acc(s).get("training")
    if not rows_in:
        return None
    rows: list[list[Cell]] = [
        [
            r["variant"],
            count(r["episodes"]),
            num(r["success"]),
            " ".join("-" if x is None else f"{x:.0f}" for x in r["curve"]),
            count(r["skills"]),
            count(r["remedies"]),
        ]
        for r in rows_in
    ]
    return Table(
        "accumulation_training",
        "Training streams: success (%) overall and by tenths of the stream, final store size",
        ["Variant", "Episodes", "Success", "By tenths", "Skills", "Remedies/notes"],
        rows,
        left=1,
    )


def accumulation_tables(s: Summary) -> list[Table]:
    out: list[Table] = []
    for made in (growth(s), overhead(s), regimes(s), *strategies(s), training(s)):
        if made is not None:
            out.append(made)
    return out
