"""Figures of the report as PNG bytes (matplotlib, Agg canvas, no pyplot global state).

Each function takes the summary document and returns ``None`` when it holds
nothing to draw. PNGs carry no timestamp, so the same summary gives the same bytes.
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

Summary = dict[str, Any]
_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


PERCENT = (0.0, 100.0)
"""The scale of an SR, a Score or an IRR; an RIE lies in -100..100, an RL in 0..inf."""
CUT_CAPTION = " Bars are cut at the ends of the scale (a normal interval can reach past them)."


def rie_by_suite_series(summary: Summary) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """Rows to plot per model, and a caption saying which set of configurations they cover."""
    w = summary["within_suite"]
    if w["rie"]:
        rows = w["rie"]
        caption = (
            f"RIE_SR by suite on {', '.join(w['tasks'])} for the compared configurations "
            f"(Vanilla SR ≥ {w['threshold']:g}% on each), with 95% intervals "
            "(Agresti–Coull where a cell's SR is 0% or 100%)."
        )
    else:
        rows = summary["configuration_suites"]
        caption = (
            "RIE_SR by suite over all tasks for every configuration without rule descriptions, "
            "with 95% intervals, Agresti–Coull where a cell's SR is 0% or 100% (no "
            "configuration meets the compared-set rule)."
        )
    per_model: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        per_model.setdefault(r["model"], []).append(r)
    return caption + CUT_CAPTION, per_model


def _bars(
    ys: list[float | None], errs: list[float], scale: tuple[float, float]
) -> list[list[float]]:
    """Asymmetric error bars: each 95% half-width, cut where it would pass the scale's ends
    (a normal interval around an SR of 95% can reach 106%, which no SR can be)."""
    lo, hi = scale
    below = [0.0 if y is None else max(0.0, min(e, y - lo)) for y, e in zip(ys, errs, strict=True)]
    above = [0.0 if y is None else max(0.0, min(e, hi - y)) for y, e in zip(ys, errs, strict=True)]
    return [below, above]


def _dodge(
    ax: Axes,
    groups: list[str],
    series: dict[str, dict[str, tuple[float, float]]],
    colors: dict[str, str] | None = None,
    scale: tuple[float, float] = PERCENT,
) -> None:
    """Points with error bars, one colour per series, side by side within each group; the
    bars are cut at the ends of ``scale``."""
    k = max(len(series), 1)
    width = 0.8 / k
    colors = colors or {name: _COLORS[i % len(_COLORS)] for i, name in enumerate(series)}
    for i, (name, values) in enumerate(series.items()):  # i places the series in the group
        xs, ys, errs = [], [], []
        for g, group in enumerate(groups):
            if group in values:
                xs.append(g - 0.4 + width * (i + 0.5))
                ys.append(values[group][0])
                errs.append(values[group][1])
        bars = _bars(list(ys), errs, scale)
        ax.errorbar(xs, ys, yerr=bars, fmt="o", capsize=3, label=name, color=colors[name])
    ax.axhline(0.0, color="#888888", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)


def _model_title(model: str) -> str:
    return "reference agents (no model)" if model == "none" else f"model: {model}"


SIDES_CAPTION = (
    "Vanilla and Mirror success rate (top) and Score (bottom) of each configuration "
    "without rule descriptions, per rule suite, over the same paired episodes as its "
    "RIE, with 95% intervals (binomial, stratified by task; Agresti–Coull where a "
    "cell's SR is 0% or 100%). The gap between the two points is the RIE."
) + CUT_CAPTION


def sides_by_suite_png(summary: Summary) -> bytes | None:
    """The paper's first comparison: Vanilla vs Mirror per configuration and suite."""
    rows = [r for r in summary["configuration_suites"] if r.get("mirror_sr") is not None]
    if not rows:
        return None
    configs = list(dict.fromkeys((r["agent"], r["model"]) for r in rows))
    several_models = len({m for _a, m in configs}) > 1
    fig = Figure(figsize=(max(3.4 * len(configs), 5.0), 6.4))
    axes = fig.subplots(2, len(configs), squeeze=False)
    for col, (agent, model) in enumerate(configs):
        mine = [r for r in rows if (r["agent"], r["model"]) == (agent, model)]
        suites = [r["suite"] for r in mine]
        for line, (measure, label) in enumerate((("sr", "SR (%)"), ("score", "Score"))):
            series = {
                side.capitalize(): {
                    r["suite"]: (r[f"{side}_{measure}"], _half(r[f"{side}_{measure}_ci"]))
                    for r in mine
                }
                for side in ("vanilla", "mirror")
            }
            ax = axes[line][col]
            _dodge(ax, suites, series, {"Vanilla": "#7f7f7f", "Mirror": "#d62728"})
            ax.set_ylim(-5, 105)
            if col == 0:
                ax.set_ylabel(label)
            if line == 0:
                ax.set_title(f"{agent} ({model})" if several_models else agent)
                if col == 0:
                    ax.legend(fontsize="small", loc="lower left")
            else:
                ax.set_xlabel("rule suite")
    fig.tight_layout()
    return _png(fig)


def rie_by_suite_png(summary: Summary) -> bytes | None:
    _caption, per_model = rie_by_suite_series(summary)
    if not per_model:
        return None
    agents = list(dict.fromkeys(r["agent"] for rows in per_model.values() for r in rows))
    colors = {a: _COLORS[i % len(_COLORS)] for i, a in enumerate(agents)}
    fig = Figure(figsize=(5.2 * len(per_model), 3.8))
    axes = fig.subplots(1, len(per_model), squeeze=False)[0]
    for ax, (model, rows) in zip(axes, sorted(per_model.items()), strict=True):
        suites = list(dict.fromkeys(r["suite"] for r in rows))
        series: dict[str, dict[str, tuple[float, float]]] = {}
        for r in rows:
            half = _half(r["rie_sr_ci"])
            series.setdefault(r["agent"], {})[r["suite"]] = (r["rie_sr"], half)
        _dodge(ax, suites, series, colors, (-100.0, 100.0))
        ax.set_title(_model_title(model))
        ax.set_xlabel("rule suite")
        ax.set_ylabel("RIE_SR (percentage points)")
        ax.legend(fontsize="small")
    fig.tight_layout()
    return _png(fig)


def _half(ci: dict[str, Any] | None) -> float:
    """The error bar of an interval: the Agresti–Coull half-width where the binomial one is
    degenerate (so a point with SR 0% or 100% never shows a silent zero-width bar)."""
    if ci is None:
        return 0.0
    if ci.get("degenerate") and ci.get("half_width_ac") is not None:
        return float(ci["half_width_ac"])
    return float(ci["half_width"])


def horizon_png(summary: Summary) -> bytes | None:
    h = summary["horizon"]
    if not h["checkpoints"] or not h["rows"]:
        return None
    fig = Figure(figsize=(9.0, 4.0))
    ax = fig.subplots()
    xs = h["checkpoints"]
    k = len(h["rows"]) * 2
    step = (xs[-1] - xs[0]) / 60 if len(xs) > 1 else 1.0
    for i, r in enumerate(h["rows"]):
        color = _COLORS[i % len(_COLORS)]
        label = f"{r['configuration']} ({r['model']})"
        for j, (cond, style) in enumerate((("vanilla", "-"), ("mirror", "--"))):
            curve = r[cond]
            ys = [curve["sr"].get(str(c)) for c in xs]
            if all(y is None for y in ys):
                continue
            shift = (2 * i + j - (k - 1) / 2) * step  # keep the error bars apart
            ax.errorbar(
                [x + shift for x in xs],
                [float("nan") if y is None else y for y in ys],
                yerr=_bars(ys, [_half(curve["ci"].get(str(c))) for c in xs], PERCENT),
                fmt=style,
                marker="o",
                capsize=3,
                color=color,
                label=f"{label} {cond}",
            )
    ax.set_xlabel("actions")
    ax.set_ylabel("cumulative SR (%), 95% interval")
    ax.set_xticks(xs)
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.02, 0.5))
    fig.tight_layout()
    return _png(fig)


def diagnostics_series(summary: Summary, key: str) -> dict[str, dict[str, tuple[float, float]]]:
    """Configuration -> suite -> (IRR or RL, 95% half-width) for the diagnostics figure."""
    return {
        r["configuration"]: {
            s: (v[key], _half(v[f"{key}_ci"])) for s, v in r["suites"].items() if v[key] is not None
        }
        for r in summary["diagnostics"]["rows"]
    }


def diagnostics_png(summary: Summary) -> bytes | None:
    d = summary["diagnostics"]
    if not d["rows"] or not d["suites"]:
        return None
    fig = Figure(figsize=(10.0, 3.6))
    left, right = fig.subplots(1, 2)
    for ax, key, label, scale in (
        (left, "irr", "IRR (%), 95% interval", PERCENT),
        (right, "rl", "RL (actions), 95% interval", (0.0, math.inf)),
    ):
        _dodge(ax, d["suites"], diagnostics_series(summary, key), scale=scale)
        ax.set_ylabel(label)
        ax.set_xlabel("rule suite")
    left.legend(fontsize="x-small")
    fig.tight_layout()
    return _png(fig)
