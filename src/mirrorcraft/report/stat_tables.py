"""Tables of the horizon study, behavioural diagnostics and heterogeneity tests."""

from __future__ import annotations

from typing import Any

from mirrorcraft.report.render import (
    DEGENERATE_NOTE,
    Cell,
    Table,
    any_degenerate,
    count,
    interval,
    num,
    pvalue,
    signed,
)

Summary = dict[str, Any]
UNDEFINED = "undefined"


def _ci(row: dict[str, Any], key: str) -> Cell:
    return interval(row.get(f"{key}_ci"))


def _horizon_cells(row: dict[str, Any], checkpoints: list[int]) -> list[Cell]:
    line: list[Cell] = []
    for c in checkpoints:
        for side in ("vanilla", "mirror"):
            curve = row[side]
            line += [num(curve["sr"].get(str(c))), interval(curve["ci"].get(str(c)))]
    return line


def _horizon_cis(rows: list[dict[str, Any]]) -> list[Any]:
    return [ci for r in rows for side in ("vanilla", "mirror") for ci in r[side]["ci"].values()]


def horizon(s: Summary) -> Table | None:
    h = s["horizon"]
    if not h["checkpoints"] or not h["rows"]:
        return None
    cols = ["Configuration", "Model"]
    for c in h["checkpoints"]:
        cols += [f"Vanilla @{c}", "95%", f"Mirror @{c}", "95%"]
    rows: list[list[Cell]] = [
        [r["configuration"], r["model"], *_horizon_cells(r, h["checkpoints"])] for r in h["rows"]
    ]
    notes = [
        f"Episodes whose budget reaches {h['budget_at_least']} actions, the same trajectories "
        "at every checkpoint; SR is averaged over tasks (each task weighted equally), with "
        "binomial intervals stratified by task. Episodes with smaller budgets are in the next "
        "table.",
    ]
    if any_degenerate(_horizon_cis(h["rows"])):
        notes.append(DEGENERATE_NOTE)
    return Table(
        "horizon",
        "Cumulative SR (%) at action checkpoints of the same trajectories",
        cols,
        rows,
        left=2,
        notes=notes,
    )


def horizon_short(s: Summary) -> Table | None:
    h = s["horizon"]
    if not h["short_budgets"]:
        return None
    cols = ["Configuration", "Model", "Budget"]
    for c in h["checkpoints"]:
        cols += [f"Vanilla @{c}", "95%", f"Mirror @{c}", "95%"]
    rows: list[list[Cell]] = []
    for r in h["short_budgets"]:
        line: list[Cell] = [r["configuration"], r["model"], count(r["budget"])]
        reached = _horizon_cells(r, r["checkpoints"])
        line += reached + [None] * (4 * len(h["checkpoints"]) - len(reached))
        rows.append(line)
    return Table(
        "horizon_short",
        f"Cumulative SR (%) of episodes whose budget stops before {h['budget_at_least']} actions",
        cols,
        rows,
        left=3,
        notes=[
            "Each budget on its own, at the checkpoints it reaches; kept apart so that no curve "
            "mixes trajectories of different lengths."
        ],
    )


def _diagnostic(s: Summary, key: str, title: str, digits: int) -> Table | None:
    d = s["diagnostics"]
    if not d["rows"] or not d["suites"]:
        return None
    rows: list[list[Cell]] = []
    cis: list[Any] = []
    for r in d["rows"]:
        cells = [r["suites"].get(suite) for suite in d["suites"]]
        line: list[Cell] = [r["configuration"]]
        for c in cells:
            line += [num(c[key], digits), interval(c[f"{key}_ci"])] if c else [None, None]
            cis.append(c[f"{key}_ci"] if c else None)
        line += [num(r[f"{key}_mean"], digits), interval(r[f"{key}_mean_ci"])]
        line.append(count(sum(c[f"{key}_n"] for c in cells if c)))
        cis.append(r[f"{key}_mean_ci"])
        rows.append(line)
    cols = ["Configuration"] + [x for suite in d["suites"] for x in (suite, "95%")]
    notes = [
        "Mean: equal weight per suite. Intervals treat encounters as independent "
        "(binomial for IRR, sample variance of the mean for RL); the paper gives none."
    ]
    if any_degenerate(cis):
        notes.append(DEGENERATE_NOTE)
    return Table(key, title, [*cols, "Mean", "95%", "N"], rows, notes=notes)


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


def _q(t: dict[str, Any]) -> Cell:
    return UNDEFINED if t["q"] is None else num(t["q"], 2)


def cochran(s: Summary) -> Table | None:
    w = s["within_suite"]
    rows = [
        [
            t["suite"],
            t["model"],
            count(t["k"]),
            _q(t),
            count(t["df"]),
            pvalue(t["p"]),
            pvalue(t["p_bonferroni"]),
            pvalue(t["p_ac"]),
            pvalue(t["p_ac_bonferroni"]),
        ]
        for t in w["tests"]
    ]
    compared = "; ".join(f"{m}: {', '.join(a) or 'none'}" for m, a in w["compared"].items())
    testable = w.get("family") == "testable"
    notes = [
        f"Compared set — {compared or 'no models'}.",
        f"Bonferroni family: {w['family_size']} test{'' if w['family_size'] == 1 else 's'}, "
        + (
            "one per suite and model where at least two compared configurations have an RIE "
            "(--bonferroni testable)."
            if testable
            else "one per suite and model where some compared configuration ran with hidden "
            "rules (the paper's '12 tests (6 suites and 2 models)'), undefined ones included."
        ),
    ]
    outside = [t for t in w["tests"] if not t.get("in_family", True)]
    if outside:
        cells = ", ".join(f"{t['suite']}/{t['model']}" for t in outside)
        notes.append(
            f"Not in the family: {cells} ("
            + (
                "fewer than two compared configurations have an RIE there)."
                if testable
                else "no compared configuration ran there with hidden rules, so no test was "
                "planned)."
            )
        )
    undefined = sorted({t["undefined"] for t in w["tests"] if t["undefined"]})
    if undefined:
        notes.append(f"Undefined Q: {'; '.join(undefined)}.")
    if not rows:
        notes.append("No suite has Mirror runs of a compared configuration.")
    title = "Cochran's Q across compared configurations within each suite"
    n = w["family_size"]
    if n:
        title += f" (Bonferroni over {n} test{'' if n == 1 else 's'})"
    else:
        notes[1] = (
            "No Q test is defined, so there is no Bonferroni family: no configuration "
            f"meets the compared-set rule (Vanilla SR of at least {w['threshold']:g}% on "
            "each compared task), or no suite has Mirror runs."
        )
    return Table(
        "cochran",
        title,
        ["Suite", "Model", "k", "Q", "df", "p", "p (Bonf.)", "p (AC)", "p (AC, Bonf.)"],
        rows,
        left=2,
        notes=notes,
    )


def disclosure_tests(s: Summary) -> Table | None:
    rows = [
        [
            t["agent"],
            t["model"],
            t["quantity"],
            t["variance"],
            count(t["k"]),
            _q(t),
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
        ["Agent", "Model", "Quantity", "Variance of", "k", "Q", "df", "p", "p (AC)"],
        rows,
        left=4,
        notes=[
            "RIE and Gap share the agent's Vanilla cell in every suite, so their tests weight "
            "each suite by the variance of its Mirror side only (hidden, resp. disclosed); "
            "ΔSR uses both sides.",
            "Model 'all' pools the models (the paper's appendix C); with several models each "
            'is also tested on its own (its section 4.1: Q "for each model separately").',
        ],
    )


def controls(s: Summary) -> Table | None:
    rows = [
        [
            r["agent"],
            r["model"],
            r["rules"],
            count(r["episodes"]),
            num(r["score"]),
            num(r["sr"]),
            num(r["actions"]),
        ]
        for r in s["controls"]
    ]
    if not rows:
        return None
    return Table(
        "controls",
        "Controls (not benchmark results): agents given the active rules",
        ["Agent", "Model", "Rules", "Episodes", "Score", "SR", "Actions"],
        rows,
        left=3,
        notes=[
            "The oracle plans with the rules in force, so it shows that each task is reachable "
            "under each rule set; it is left out of every other table and of Cochran's Q."
        ],
    )


def excluded_notes(excluded: dict[str, int]) -> list[str]:
    """One line per status of the rows left out of every number (``LoadedResults.excluded``),
    saying why each is left out (``analyze``, the report's index and ``export``)."""
    out = []
    for status, n in excluded.items():
        if status == "earlier_spec":
            out.append(
                f"left out: {n} episode(s) of an earlier version of the spec (kept in the "
                "database: conditions the spec that ran last no longer lists, or episodes "
                "it measures otherwise, left behind with --allow-changed-spec)"
            )
        elif status == "trace_mismatch":
            out.append(
                f"left out: {n} episode(s) whose step rows disagree with actions_used "
                "(edited or damaged traces; the next run reruns them)"
            )
        elif status == "given_up":
            out.append(
                f"left out: {n} episode(s) given up: the worker process running each died (or "
                "the harness failed) on every attempt, execution.max_worker_faults times over "
                "all runs, or it ran past its time limit execution.max_timeouts times; never "
                "scored (the faults table keeps each attempt, the record says which)"
            )
        else:
            out.append(f"left out: {n} infrastructure record(s) ({status}), never scored")
    return out


def unfinished_note(summary: Summary) -> str | None:
    """A line for results that hold only part of their spec's episodes (None otherwise)."""
    left = summary["episodes"].get("unfinished")
    if not left or not left["missing"]:
        return None
    given_up = summary["episodes"].get("excluded", {}).get("given_up", 0)
    but = (
        f" (all but the {given_up} given up, and in an accumulation stream the episodes "
        "after them, which it runs again only once execution.max_worker_faults or "
        "execution.max_timeouts (or episode_timeout_s), whichever gave them up, is raised)"
        if given_up
        else ""
    )
    return (
        f"not run yet: {left['missing']} of the {left['planned']} episodes its spec plans "
        "(a run cut short with --limit or interrupted, or episodes that faulted); the "
        "tables cover the episodes stored. `mirrorcraft run` with the same spec and "
        f"--out finishes them{but}"
    )


def skipped(summary: Summary) -> list[str]:
    """Why some tables are absent, and budgets they pool, one short line each."""
    out: list[str] = []
    mixed = summary["episodes"].get("mixed_budgets") or {}
    if mixed:
        each = "; ".join(
            f"{task} at {', '.join(str(b) for b in budgets)}" for task, budgets in mixed.items()
        )
        out.append(
            f"mixed budgets: episodes of one task ran with different action budgets ({each}); "
            "every table but the horizon pools them (Vanilla-Mirror pairs stay within one "
            "budget), so a row can mix budgets: analyse each budget's records apart to "
            "compare them"
        )
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
