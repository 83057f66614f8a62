"""Tables of the MineEvolve paper's shape (``summary["accumulation"]``): methods by tech-tree
group with Easy/Hard/Overall, knowledge accumulation per checkpoint, memory size and cost."""

from __future__ import annotations

from typing import Any

from mirrorcraft.report.render import Cell, Table, count, num

Summary = dict[str, Any]


def _acc(s: Summary) -> dict[str, Any]:
    return s.get("accumulation") or {}


def _averages_note(g: dict[str, Any]) -> str:
    easy = ", ".join(g.get("easy_groups", [])) or "(none present)"
    hard = ", ".join(g.get("hard_groups", [])) or "(none present)"
    return (
        f"Easy avg. pools {easy}; Hard avg. pools {hard}. Every average is over tasks (each "
        "task's success rate counts once), so a group weighs as many tasks as it has."
    )


def _many_models(rows: list[dict[str, Any]]) -> bool:
    """Whether the rows hold more than one model (then each table gets a Model column)."""
    return len({r.get("model") for r in rows}) > 1


def methods(s: Summary) -> Table | None:
    m = _acc(s).get("methods")
    if not m or not m["rows"]:
        return None
    groups = m["groups"]
    many_models = len({r["model"] for r in m["rows"]}) > 1
    many_rules = len({r["rules"] for r in m["rows"]}) > 1
    labels = ["Method", *(["Model"] if many_models else []), *(["Rules"] if many_rules else [])]
    rows: list[list[Cell]] = [
        [
            r["method"],
            *([r["model"]] if many_models else []),
            *([r["rules"]] if many_rules else []),
            *(num(r["groups"][x]) for x in groups),
            num(r["easy"]),
            num(r["hard"]),
            num(r["overall"]),
            num(r["call_budget_ends"]),
            count(r["episodes"]),
        ]
        for r in m["rows"]
    ]
    budgets = sorted({b for r in m["rows"] for b in r["call_budget"]})
    cap = (
        f"Model calls per episode were capped at {', '.join(map(str, budgets))}; "
        "'Call cap hit' is the share of episodes that ended on it."
        if budgets
        else "No call budget was set."
    )
    return Table(
        "techtree_methods",
        "Tech-tree success rate (%) by task group, with Easy avg., Hard avg. and Overall",
        [*labels, *groups, "Easy avg.", "Hard avg.", "Overall", "Call cap hit (%)", "Episodes"],
        rows,
        left=len(labels),
        notes=[_averages_note(m), cap],
    )


def growth(s: Summary) -> Table | None:
    g = _acc(s).get("growth")
    if not g or not g["rows"]:
        return None
    groups = g["groups"]
    many = _many_models(g["rows"])
    rows: list[list[Cell]] = [
        [
            r["variant"],
            *([r.get("model")] if many else []),
            count(r["checkpoint"]),
            *(num(r["groups"][x]) for x in groups),
            num(r["easy"]),
            num(r["hard"]),
            num(r["overall"]),
            count(r["episodes"]),
        ]
        for r in g["rows"]
    ]
    return Table(
        "accumulation_growth",
        "Knowledge accumulation: success rate (%) by task group at each store checkpoint",
        [
            "Variant",
            *(["Model"] if many else []),
            "Episodes learned",
            *groups,
            "Easy avg.",
            "Hard avg.",
            "Overall",
            "Eval episodes",
        ],
        rows,
        left=1 + many,
        notes=[
            "The store is frozen after the given number of training episodes and read without "
            "updates during evaluation (unless the spec sets eval.updates).",
            _averages_note(g),
            *_rules_note(s),
        ],
    )


def _rules_note(s: Summary) -> list[str]:
    rules = sorted({r["rules"] for r in _acc(s).get("regimes") or []})
    if len(rules) < 2:
        return []
    return [
        f"Evaluations under {len(rules)} rule sets ({', '.join(rules)}) are pooled here; "
        "success per rule set is in the table of store checkpoints under each rule set."
    ]


def overhead(s: Summary) -> Table | None:
    rows_in = _acc(s).get("overhead")
    if not rows_in:
        return None
    many = _many_models(rows_in)
    rows: list[list[Cell]] = [
        [
            r["variant"],
            *([r.get("model")] if many else []),
            "episode only" if r["checkpoint"] is None else count(r["checkpoint"]),
            num(r.get("entries")),
            ", ".join(f"{k} {num(v)}" for k, v in r.get("kinds", {}).items()) or None,
            num(r.get("entries_at_end")),
            num(r["retrieved_tokens"]),
            num(r["retrieval_ms"], 3),
            num(r.get("memory_calls")),
            num(r["calls"]),
            num(r["tokens"], 0),
        ]
        for r in rows_in
    ]
    return Table(
        "accumulation_overhead",
        "Memory size and cost per method that keeps memory (means per evaluation episode)",
        [
            "Method",
            *(["Model"] if many else []),
            "Episodes learned",
            "Entries",
            "By kind",
            "Entries at end",
            "Retrieved tokens",
            "Retrieval ms",
            "Memory calls",
            "Model calls",
            "Tokens",
        ],
        rows,
        left=2 + many,
        notes=[
            "Entries: the memory an episode started from (a frozen checkpoint, or empty when "
            "memory lasts one episode). Retrieved tokens and retrieval time are means per "
            "retrieval, within the shared budget (mineevolve.yaml curator.budget_tokens).",
            "Memory calls: model calls spent building or consulting memory beyond planning and "
            "acting (MineEvolve: skill, remedy, reflection and curate calls; Optimus-1: "
            "reflector calls; JARVIS-1 grows its memory without calls).",
        ],
    )


def regimes(s: Summary) -> Table | None:
    rows_in = _acc(s).get("regimes")
    if not rows_in or len({r["rules"] for r in rows_in}) < 2:
        return None
    rules = sorted({r["rules"] for r in rows_in}, key=lambda x: (x != "vanilla", x))
    many = _many_models(rows_in)
    cells: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in rows_in:
        key = (r["variant"], str(r.get("model")), r["checkpoint"])
        cells.setdefault(key, {})[r["rules"]] = r["sr"]
    rows: list[list[Cell]] = [
        [variant, *([model] if many else []), count(cp), *(num(v.get(x)) for x in rules)]
        for (variant, model, cp), v in sorted(cells.items())
    ]
    return Table(
        "accumulation_regimes",
        "Store checkpoints evaluated under each rule set: success rate (%)",
        ["Variant", *(["Model"] if many else []), "Episodes learned", *rules],
        rows,
        left=1 + many,
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
        if not rows_in or len(rows_in) < 2 or all(len(r["checkpoints"]) < 2 for r in rows_in):
            continue  # with one checkpoint each the growth table already says it all
        many = _many_models(rows_in)
        rows: list[list[Cell]] = [
            [
                r["variant"],
                *([r.get("model")] if many else []),
                num(r["mean"]),
                num(r["final"]),
                count(len(r["checkpoints"])),
            ]
            for r in rows_in
        ]
        out.append(
            Table(
                f"accumulation_{key}",
                f"Knowledge-construction strategies on {title}: success rate (%)",
                [
                    "Variant",
                    *(["Model"] if many else []),
                    "Mean over checkpoints",
                    "Final checkpoint",
                    "Checkpoints",
                ],
                rows,
                left=1 + many,
            )
        )
    return out


def training(s: Summary) -> Table | None:
    rows_in = _acc(s).get("training")
    if not rows_in:
        return None
    many = _many_models(rows_in)
    rows: list[list[Cell]] = [
        [
            r["variant"],
            *([r.get("model")] if many else []),
            count(r["episodes"]),
            num(r["success"]),
            " ".join("-" if x is None else str(num(x, 0)) for x in r["curve"]),
            count(r.get("entries", 0)),
            ", ".join(f"{k} {v}" for k, v in r.get("kinds", {}).items()) or None,
        ]
        for r in rows_in
    ]
    return Table(
        "accumulation_training",
        "Training streams: success (%) overall and by tenths of the stream, final store size",
        [
            "Variant",
            *(["Model"] if many else []),
            "Episodes",
            "Success",
            "By tenths",
            "Entries",
            "By kind",
        ],
        rows,
        left=1 + many,
    )


def accumulation_tables(s: Summary) -> list[Table]:
    out: list[Table] = []
    for made in (methods(s), growth(s), overhead(s), regimes(s), *strategies(s), training(s)):
        if made is not None:
            out.append(made)
    return out
