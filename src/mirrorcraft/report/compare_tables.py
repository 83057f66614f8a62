"""The side-by-side tables of ``analysis.compare``: the published value beside yours.

One table per reference table (Table 2, 3, 4, 5, 10, 11, the Cochran's Q tests and
the text's numbers); one line per compared quantity. ``write_compare_page`` writes
them as ``compare.html`` (plus ``compare.md``, ``compare.json``) in a report
directory; ``summary_table`` is the one-table overview the report's index shows.
"""

from __future__ import annotations

import json
import math
from html import escape
from pathlib import Path
from typing import Any

from mirrorcraft.analysis.compare import SCALE
from mirrorcraft.report.render import (
    Cell,
    Table,
    num,
    pvalue,
    render_html,
    render_markdown,
    signed,
)
from mirrorcraft.report.templating import fill

COLUMNS = [
    "Row",
    "Quantity",
    "Paper",
    "Yours",
    "Your 95% CI",
    "Difference",
    "Paper in your CI",
    "Counterpart",
]
ORDER = ["table2", "table3", "table4", "table5", "table10", "table11", "cochran_q", "text"]
QUANTITY = {
    "vanilla_score": "Vanilla Score",
    "vanilla_sr": "Vanilla SR",
    "mirror_score": "Mirror Score",
    "mirror_sr": "Mirror SR",
    "rie_sc": "RIE_SC",
    "rie_sr": "RIE_SR",
    "actions": "Actions",
    "cost_usd": "Cost ($)",
    "hidden_sr": "Hidden SR",
    "disclosed_sr": "Disclosed SR",
    "gap": "Gap",
    "delta_sr": "ΔSR",
    "all_six_rie_sr": "RIE_SR (all six)",
    "q": "Q",
    "p": "p",
}


CLIPPED_NOTE = (
    "(clipped): your 95% interval is a normal (Wald) interval, estimate ± 1.96 standard "
    "errors, and one end lay beyond the values the quantity can take (0 to 100 for an SR or "
    "Score, -100 to 100 for a difference of them, 0 for actions and cost); it is shown cut "
    "there. The raw ends, used for 'Paper in your CI', are yours_low and yours_high in the "
    "JSON."
)


def _digits(quantity: str) -> int:
    return 3 if quantity == "cost_usd" else 1


def _value(value: float | None, quantity: str) -> Cell:
    if value is None:
        return None
    if quantity == "p":
        return pvalue(value)
    return num(value, _digits(quantity))


def _paper(row: dict[str, Any]) -> Cell:
    if row["paper"] is None:
        text: Cell = row["paper_text"]
        return text
    text = _value(row["paper"], row["quantity"])
    if row["paper_hw"] is not None and text is not None:
        text += f" ±{num(row['paper_hw'])}"
    return text


def _ci(row: dict[str, Any]) -> Cell:
    """The interval's ends, cut to the values the quantity can take (an SR's 0-100) and then
    marked "(clipped)": a Wald interval can reach past them; the JSON keeps the raw ends."""
    if row["yours_low"] is None:
        return None
    d = _digits(row["quantity"])
    lo, hi = SCALE.get(row["quantity"], (-math.inf, math.inf))
    low, high = max(row["yours_low"], lo), min(row["yours_high"], hi)
    text = f"[{num(low, d)}, {num(high, d)}]"
    return text + " (clipped)" if row.get("yours_clipped") else text


def _label(key: dict[str, Any]) -> str:
    return ", ".join(str(v) for k, v in key.items() if k != "id")


def _inside(flag: bool | None) -> Cell:
    return None if flag is None else ("yes" if flag else "no")


def comparison_tables(doc: dict[str, Any]) -> list[Table]:
    tables: list[Table] = []
    titles = doc.get("titles", {})
    for table in ORDER:
        rows = [r for r in doc["rows"] if r["table"] == table]
        if not rows:
            continue
        body = [
            [
                _label(r["row"]),
                QUANTITY.get(r["quantity"], r["quantity"]),
                _paper(r),
                _value(r["yours"], r["quantity"]),
                _ci(r),
                signed(r["difference"], _digits(r["quantity"])),
                _inside(r["paper_in_ci"]),
                r["counterpart"],
            ]
            for r in rows
        ]
        notes = [
            "Difference is yours minus the paper's. 'paper only' and 'yours only' mark rows "
            "one side does not have; they are listed, not dropped."
        ]
        if any(r["yours_hw"] == 0 and r["paper"] is not None for r in rows):
            notes.append(
                "A 95% CI of zero width (every episode of each stratum succeeded, failed or had "
                "the same value, or a single episode) cannot place the paper's value outside "
                "it; 'Paper in your CI' is left empty there."
            )
        if any(r.get("yours_clipped") for r in rows):
            notes.append(CLIPPED_NOTE)
        if table in doc.get("scope", {}):
            notes.append(f"Yours: {doc['scope'][table]}.")
        name = table.replace("table", "Table ") if table.startswith("table") else ""
        title = titles.get(table, table)
        tables.append(
            Table(
                f"compare_{table}",
                f"{name}: {title}, beside yours" if name else f"{title}, beside yours",
                COLUMNS,
                body,
                left=2,
                notes=notes,
            )
        )
    return tables


def summary_table(doc: dict[str, Any]) -> Table:
    """Per reference table: quantities compared, in your CI, and rows only one side has."""
    body: list[list[Cell]] = []
    for table in ORDER:
        rows = [r for r in doc["rows"] if r["table"] == table]
        if not rows:
            continue
        both = [r for r in rows if r["counterpart"] == "both"]
        flags = [r["paper_in_ci"] for r in both if r["paper_in_ci"] is not None]
        body.append(
            [
                table,
                str(len(both)),
                f"{sum(flags)}/{len(flags)}" if flags else None,
                str(sum(1 for r in rows if r["counterpart"] == "paper only")),
                str(sum(1 for r in rows if r["counterpart"] == "yours only")),
            ]
        )
    families = ", ".join(f"{k} → {v}" for k, v in sorted(doc["model_families"].items()))
    return Table(
        "compare_summary",
        "Beside the paper: overview (the full side-by-side tables are in compare.html)",
        ["Table", "Compared", "Paper in your CI", "Paper only", "Yours only"],
        body,
        notes=[f"Your models by paper family: {families or 'none'}."],
    )


def write_compare_page(doc: dict[str, Any], out: Path) -> list[Table]:
    """Write compare.html, compare.md and compare.json into the report directory ``out``."""
    tables = comparison_tables(doc)
    src = doc["reference"]
    meta = (
        f"Published results: {src.get('title', '')} (arXiv {src.get('arxiv_id', '')} "
        f"{src.get('version', '')}). {doc['counts']['both']} quantities on both sides, "
        f"{doc['counts']['paper only']} only in the paper, {doc['counts']['yours only']} only "
        f"in yours; the paper's value lies in your 95% interval for "
        f"{doc['counts']['paper_in_your_ci']} of {doc['counts']['with_interval']}."
    )
    contents = "".join(f'<li><a href="#{escape(t.key)}">{escape(t.title)}</a></li>' for t in tables)
    (out / "compare.html").write_text(
        fill(
            "report.html",
            title="MirrorCraft results beside the paper",
            meta=escape(meta),
            notes='<p class="note"><a href="index.html">Back to the report</a>.</p>',
            contents=f'<h2>Contents</h2><ul id="contents">{contents}</ul>',
            figures="",
            tables="".join(render_html(t) for t in tables),
        ),
        encoding="utf-8",
    )
    markdown = "# MirrorCraft results beside the paper\n\n" + meta + "\n\n"
    (out / "compare.md").write_text(
        markdown + "\n".join(render_markdown(t) for t in tables), encoding="utf-8"
    )
    (out / "compare.json").write_text(
        json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8"
    )
    return tables
