"""Tables as values, and their plain-text, Markdown, CSV and HTML renderings.

A cell is a display string or ``None`` for a missing value; text, Markdown and
HTML show a missing value as "–", CSV leaves the field empty.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Context, Decimal
from html import escape
from typing import Any

from mirrorcraft.analysis.estimates import ONE_EPISODE
from mirrorcraft.report.spreadsheet import formula_safe

MISSING = "–"

Cell = str | None


@dataclass
class Table:
    key: str
    """File-name stem and anchor, e.g. ``configurations``."""
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    left: int = 1
    """How many leading columns hold labels (left-aligned); the rest are numbers."""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.key}: row {row} does not match {self.columns}")


# --- number formats ---------------------------------------------------------------------------


_DECIMAL = Context(prec=1000, rounding=ROUND_HALF_UP)  # a float has at most 767 digits


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals, rounded half away from zero on its shortest decimal
    form (its ``repr``): 31.25 gives "31.3", 2.675 gives "2.68", as the paper rounds "to the
    displayed precision". Python's own formatting rounds the binary value half to even
    ("31.2"). JSON output keeps the full value; only displayed cells round."""
    if isinstance(value, bool) or not math.isfinite(value):
        return f"{value:.{digits}f}"
    exact = Decimal(value) if isinstance(value, int) else Decimal(repr(float(value)))
    return f"{_DECIMAL.quantize(exact, Decimal(1).scaleb(-digits)):f}"


def num(value: float | None, digits: int = 1) -> Cell:
    """A number rounded for display, half away from zero (``fixed``); "-0.0" is shown
    as "0.0"."""
    if value is None:
        return None
    text = fixed(value, digits)
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def signed(value: float | None, digits: int = 1) -> Cell:
    """A difference with its sign: "+4.7", "-0.2", "0.0"."""
    text = num(value, digits)
    if text is None or float(text) == 0 or text.startswith("-"):
        return text
    return "+" + text


def pm(half_width: float | None, digits: int = 1) -> Cell:
    text = num(half_width, digits)
    return None if text is None else "±" + text


def pvalue(p: float | None) -> Cell:
    if p is None:
        return None
    return "<0.001" if p < 0.001 else fixed(p, 3)


def count(n: int | None) -> Cell:
    return None if n is None else str(n)


DEGENERATE_NOTE = (
    "Where a cell's binomial variance is degenerate (SR 0% or 100%, or a single episode), "
    "the interval is marked and the Agresti–Coull half-width (AC) is shown beside it; "
    "'n too small' and 'no spread' mark Score or RL intervals with a one-episode cell or "
    "no variation in a cell."
)


def interval(ci: dict[str, Any] | None, digits: int = 1) -> Cell:
    """A 95% half-width, e.g. "±5.1"; a degenerate one says so ("±0.0 (AC ±6.2)")."""
    if ci is None:
        return None
    text = pm(ci["half_width"], digits) or ""
    why = ci.get("degenerate")
    if not why:
        return text
    if ci.get("half_width_ac") is not None:
        return f"{text} (AC {pm(ci['half_width_ac'], digits)})"
    return f"{text} ({'n too small' if why == ONE_EPISODE else 'no spread'})"


def any_degenerate(cis: Iterable[dict[str, Any] | None]) -> bool:
    return any(ci is not None and ci.get("degenerate") for ci in cis)


# --- renderings --------------------------------------------------------------------------------


def _show(cell: Cell) -> str:
    return MISSING if cell is None else cell


def render_text(table: Table) -> str:
    """Aligned plain text: title, header, rule, rows, then notes."""
    grid = [table.columns] + [[_show(c) for c in row] for row in table.rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(table.columns))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.ljust(w) if i < table.left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [table.title, line(table.columns), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in grid[1:]]
    if not table.rows:
        out.append("(no data)")
    out += [f"  {n}" for n in table.notes]
    return "\n".join(out) + "\n"


def render_markdown(table: Table) -> str:
    def md(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    align = [":---" if i < table.left else "---:" for i in range(len(table.columns))]
    out = [f"### {md(table.title)}", ""]
    out.append("| " + " | ".join(md(c) for c in table.columns) + " |")
    out.append("| " + " | ".join(align) + " |")
    out += ["| " + " | ".join(md(_show(c)) for c in row) + " |" for row in table.rows]
    if not table.rows:
        out.append("")
        out.append("(no data)")
    if table.notes:
        out.append("")
        out += [md(n) for n in table.notes]
    return "\n".join(out) + "\n"


def render_csv(table: Table) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([formula_safe(c) for c in table.columns])
    for row in table.rows:
        writer.writerow(["" if c is None else formula_safe(c) for c in row])
    return buf.getvalue()


def render_html(table: Table) -> str:
    """An HTML ``<table>`` with every string escaped."""
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    body = []
    for row in table.rows:
        cells = []
        for i, c in enumerate(row):
            cls = "l" if i < table.left else "n"
            cells.append(f'<td class="{cls}">{escape(_show(c))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    if not table.rows:
        body.append(f'<tr><td colspan="{len(table.columns)}" class="l">no data</td></tr>')
    notes = "".join(f'<p class="note">{escape(n)}</p>' for n in table.notes)
    return (
        f'<section id="{escape(table.key)}"><h2>{escape(table.title)}</h2>'
        f'<table class="data"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{notes}</section>"
    )
