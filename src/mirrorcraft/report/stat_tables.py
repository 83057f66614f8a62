"""Tables of the horizon study, behavioural diagnostics and heterogeneity tests."""

from __future__ import annotations

from typing import Any

from mirrorcraft.report.render import Cell, Table, count, num, pm, pvalue, signed

Summary = dict[str, Any]


def _ci(row: dict[str, Any], key: str) -> Cell:
    ci = row.get(f"{key}_ci")
    return None if ci is None else pm(ci["half_width"])


def horizon(s: Summary) -> Table | None:
    h = s["horizon"]
    if not h["checkpoints"] or not h["rows"]:
        return None
    cols = ["Configuration", "Model"]
    for c in h["checkpoints"]:
        cols += [f"Vanilla @{c}", f"Mirror @{c}"]
    rows: list[list[Cell]] = []
    for r in h["rows"]:
        line: list[Cell] = [r["configuration"], r["model"]]
        for c in h["checkpoints"]:
            line += [num(r["vanilla"][str(c)]), num(r["mirror"][str(c)])]
        rows.append(line)
    return Table(
        "horizon",
        "Cumulative SR (%) at action checkpoints of the same trajectories",
        cols,
        rows,
        left=2,
        notes=["An episode counts at a checkpoint only when its budget reaches that checkpoint."],
    )


def _diagnostic(s: Summary, key: str, title: str, digits: int) -> Table | None:
    d = s["diagnostics"]
    if not d["rows"] or not d["suites"]:
        return None
    rows: list[list[Cell]] = []
    for r in d["rows"]:
        cells = [r["suites"].get(suite) for suite in d["suites"]]
        rows.append(
            [r["configuration"]]
            + [num(c[key], digits) if c else None for c in cells]
            + [num(r[f"{key}_mean"], digits), count(sum(c[f"{key}_n"] for c in cells if c))]
        )
    return Table(f"{key}", title, ["Configuration", *d["suites"], "Mean", "N"], rows)


def irr(s: Summary) -> Table | None:
    return _diagnostic(s, "irr", "Immediate Repeat Rate (%) after rule encounters", 1)


def rl(s: Summary) -> Table | None:
    return _diagnostic(s, "rl", "Recovery Latency (actions) after rule encounters", 1)


def within_suite(s: Summary) -> Table | None:
    w = s["within_suite"]
    if not w["rie"]:
        return None
    suites = list(dict.fromkeys(r["suite"] for r in w["rie"]))
    cell = {(r["model"], r["agent"], r["suite"]): r for r in w["rie"]}
    rows: list[list[Cell]] = []
    for model, agents in w["compared"].items():
        for agent in agents:
            line: list[Cell] = [model, agent]
            for suite in suites:
                r = cell.get((model, agent, suite))
                line += [signed(r["rie_sr"]), _ci(r, "rie_sr")] if r else [None, None]
            rows.append(line)
    cols = ["Model", "Configuration"] + [x for suite in suites for x in (suite, "95%")]
    tasks = ", ".join(w["tasks"])
    return Table(
        "within_suite",
        f"RIE_SR by suite of the compared configurations ({tasks})",
        cols,
        rows,
        left=2,
        notes=[f"Compared: Vanilla SR of at least {w['threshold']:g}% on each of {tasks}."],
    )


def cochran(s: Summary) -> Table | None:
    w = s["within_suite"]
    rows = [
        [
            t["suite"],
            t["model"],
            count(t["k"]),
            num(t["q"], 2),
            count(t["df"]),
            pvalue(t["p"]),
            pvalue(t["p_bonferroni"]),
            pvalue(t["p_ac"]),
            pvalue(t["p_ac_bonferroni"]),
        ]
        for t in w["tests"]
    ]
    compared = "; ".join(f"{m}: {', '.join(a) or 'none'}" for m, a in w["compared"].items())
    notes = [f"Compared set — {compared or 'no models'}."]
    if not rows:
        notes.append("No suite has two compared configurations with Mirror runs.")
    return Table(
        "cochran",
        f"Cochran's Q across compared configurations within each suite "
        f"(Bonferroni over {w['family_size']} tests)",
        ["Suite", "Model", "k", "Q", "df", "p", "p (Bonf.)", "p (AC)", "p (AC, Bonf.)"],
        rows,
        left=2,
        notes=notes,
    )


def disclosure_tests(s: Summary) -> Table | None:
    rows = [
        [
            t["agent"],
            t["quantity"],
            count(t["k"]),
            num(t["q"], 2),
            count(t["df"]),
            pvalue(t["p"]),
            pvalue(t["p_ac"]),
        ]
        for t in s["disclosure_tests"]
    ]
    if not rows:
        return None
    return Table(
        "disclosure_tests",
        "Do the parts of the disclosure split differ between suites? (Cochran's Q)",
        ["Agent", "Quantity", "k", "Q", "df", "p", "p (AC)"],
        rows,
        left=2,
    )


def skipped(summary: Summary) -> list[str]:
    """Why some tables are absent, one short line each."""
    out: list[str] = []
    if not summary["episodes"]["total"]:
        out.append("no evaluation episodes in the results")
    if not summary["episodes"]["mirror"]:
        out.append("no Mirror episodes: RIE, suite and diagnostics tables are empty")
    if not summary["disclosure"]:
        out.append("disclosure split: no agent has Mirror runs with disclosed rules")
    h = summary["horizon"]
    if not h["checkpoints"]:
        needed = ", ".join(str(c) for c in h["requested"])
        out.append(f"horizon: no episode budget reaches the checkpoints ({needed})")
    return out
