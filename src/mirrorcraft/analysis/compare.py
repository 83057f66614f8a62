"""Your results beside published ones, row for row (``mirrorcraft analyze --compare paper``).

``compare(records, reference)`` matches each row of the reference tables (Tables
2, 3, 4, 5, 10, 11, the Cochran's Q tests and a few numbers of the text) with the
same configuration, suite, task and model family in the records, and gives per
quantity: the published value, yours with its 95% interval, the difference (yours
minus published) and whether the published value lies inside your interval.

Model names are mapped to the reference's model families (``gemini``,
``deepseek``, ``luna``) by the substrings the reference lists; a model no family
claims keeps its own name. A row only one side has is kept and marked: its
``counterpart`` is ``paper only`` or ``yours only``, never dropped.

Intervals are 95% normal intervals: for SR and Score, of a mean stratified by model
and task as the paper stratifies (binomial variances for SR, so a stratum whose
episodes all succeed or all fail adds no width); for RIE, Gap and delta SR, the
paired estimates of ``analysis.paired``; for Table 5, of the task-averaged SR of the
horizon table (``analysis.horizon``); for actions and cost, of a plain mean.
Q and p of the Cochran's Q tests have no interval. Where your interval has zero width
(no variation in any stratum, or one episode) it is shown but tests nothing:
``paper_in_ci`` is then null, as where there is no interval.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from mirrorcraft.analysis.estimates import CONFIGURATION_STRATA, Comparison, pair_key, side_mean
from mirrorcraft.analysis.horizon import task_averaged_sr
from mirrorcraft.analysis.metrics import (
    DISCLOSED,
    HIDDEN,
    VANILLA,
    is_control,
    is_success,
    suite_order,
)
from mirrorcraft.analysis.paired import ALL, SCORE, SR, Estimate, PairIndex, disclosure_split, rie
from mirrorcraft.analysis.reference import Reference, Row
from mirrorcraft.analysis.sections import DESIGN_FAMILY, disclosure_section, within_suite_section
from mirrorcraft.analysis.stats import Z95, mean_variance
from mirrorcraft.runner.records import EpisodeRecord

COMPARE_SCHEMA = "mirrorcraft.compare/1"
BOTH, PAPER_ONLY, YOURS_ONLY = "both", "paper only", "yours only"
POOLED = "pooled"

SCALE: dict[str, tuple[float, float]] = {
    **{q: (0.0, 100.0) for q in ("vanilla_score", "vanilla_sr", "mirror_score", "mirror_sr")},
    **{q: (0.0, 100.0) for q in ("hidden_sr", "disclosed_sr")},
    **{q: (-100.0, 100.0) for q in ("rie_sc", "rie_sr", "gap", "delta_sr", "all_six_rie_sr")},
    "actions": (0.0, math.inf),
    "cost_usd": (0.0, math.inf),
}
"""The values a quantity can take: a normal (Wald) interval's ends may lie beyond them
(an SR of 95% over few episodes gives [84, 106]); the tables show the ends cut to this
range and say so, the rows keep the raw ends (``yours_clipped``)."""

Records = Sequence[EpisodeRecord]
Yours = tuple[float, float | None, int] | None
"""(value, half width of the 95% interval or None, episodes or comparisons behind it)."""


# -- your side: values and intervals ------------------------------------------------------


def _group(records: Records, measure: str, strata: Callable[[EpisodeRecord], Any]) -> Yours:
    """Mean SR (percent) or Score with a stratified interval (weights: stratum shares)."""
    if not records:
        return None
    groups: dict[Any, list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        groups[strata(r)].append(r)
    n = len(records)
    total = variance = 0.0
    for rs in groups.values():
        w = len(rs) / n
        if measure == SR:
            p = sum(1 for r in rs if is_success(r)) / len(rs)
            total += w * 100.0 * p
            variance += w * w * 1e4 * p * (1 - p) / len(rs)
        else:
            scores = [float(r.score) for r in rs]
            total += w * math.fsum(scores) / len(rs)
            variance += w * w * mean_variance(scores)
    return total, Z95 * math.sqrt(variance), n


def _plain(values: Sequence[float]) -> Yours:
    if not values:
        return None
    return math.fsum(values) / len(values), Z95 * math.sqrt(mean_variance(values)), len(values)


def _estimate(est: Estimate | None) -> Yours:
    return None if est is None else (est.value, est.half_width, est.comparisons)


def _side(
    b: Builder, found: Sequence[Comparison], measure: str, side: str, fallback: Records
) -> Yours:
    """One side's mean over the comparisons of a paired estimate, as ``analyze`` shows it
    beside the RIE (so Vanilla - Mirror is the RIE), with its exact stratified interval and
    that side's episodes as n; without any comparison, the mean of ``fallback``'s episodes
    (stratified by the same reading)."""
    est = side_mean(found, measure, side)
    if est is None:
        return _group(fallback, measure, lambda r: pair_key(r).stratum_of(b.strata))
    cells: dict[tuple[object, str | None], int] = {}
    for c in found:
        condition, stats = (
            (c.first, c.first_stats) if side == "first" else (c.second, c.second_stats)
        )
        cells[(c.pair, None if condition == VANILLA else c.suite)] = stats.n  # a Vanilla cell once
    return est.value, est.half_width, sum(cells.values())


def _strata(r: EpisodeRecord) -> tuple[str, str]:
    """Model and task: the strata of one configuration's cell (``_group`` in the text rows)."""
    return (r.model, r.task)


# -- rows -----------------------------------------------------------------------------------


class Builder:
    def __init__(self, strata: str = CONFIGURATION_STRATA, family: str = DESIGN_FAMILY) -> None:
        self.rows: list[dict[str, Any]] = []
        self.strata = strata
        self.family = family
        """The strata reading of the intervals and tests (``estimates.STRATA``)."""

    def add(
        self,
        table: str,
        key: dict[str, Any],
        quantity: str,
        paper: float | None,
        yours: Yours,
        *,
        paper_hw: float | None = None,
        paper_text: str | None = None,
        present: tuple[bool, bool] | None = None,
    ) -> None:
        """One compared quantity; ``present`` says which side has the row at all."""
        has_paper, has_yours = present or (paper is not None or paper_text is not None, True)
        counterpart = BOTH if has_paper and has_yours else PAPER_ONLY if has_paper else YOURS_ONLY
        value, hw, n = yours if yours is not None else (None, None, 0)
        inside = None
        # A zero-width interval (every stratum all successes, all failures or one Score, or
        # a single episode) is no interval: it cannot say that the paper's value is outside.
        if paper is not None and value is not None and hw and counterpart == BOTH:
            inside = value - hw - 1e-9 <= paper <= value + hw + 1e-9
        low = None if value is None or hw is None else value - hw
        high = None if value is None or hw is None else value + hw
        lo, hi = SCALE.get(quantity, (-math.inf, math.inf))
        self.rows.append(
            {
                "table": table,
                "row": key,
                "quantity": quantity,
                "paper": paper,
                "paper_text": paper_text,
                "paper_hw": paper_hw,
                "yours": value,
                "yours_hw": hw,
                "yours_low": low,
                "yours_high": high,
                "yours_clipped": None if low is None or high is None else low < lo or high > hi,
                "n": n,
                "difference": None if value is None or paper is None else value - paper,
                "paper_in_ci": inside,
                "counterpart": counterpart,
            }
        )


def _num(row: Row, key: str) -> float | None:
    v = row.get(key)
    return float(v) if isinstance(v, int | float) else None


def relabel(records: Records, reference: Reference) -> tuple[list[EpisodeRecord], dict[str, str]]:
    """Copies of the records with each model renamed to its reference family."""
    names: dict[str, str] = {}
    for r in records:
        if r.model not in names:
            names[r.model] = reference.family(r.model) or r.model
    return [replace(r, model=names[r.model]) for r in records], names


def _table2(b: Builder, ref: Reference, recs: Records) -> None:
    groups: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    for r in recs:
        groups[(r.agent, r.disclosure, r.model)].append(r)
    index = PairIndex([r for r in recs if r.disclosure == HIDDEN], b.strata)
    paper_keys = set()
    for prow in ref.table("table2").rows:
        key = (str(prow["configuration"]), str(prow["disclosure"]), str(prow["model"]))
        paper_keys.add(key)
        _table2_row(b, key, prow, groups.get(key, []), index)
    for key in sorted(set(groups) - paper_keys):
        _table2_row(b, key, None, groups[key], index)


def _table2_row(
    b: Builder, key: tuple[str, str, str], prow: Row | None, mine: Records, index: PairIndex
) -> None:
    agent, disclosure, model = key
    label = {"configuration": agent, "disclosure": disclosure, "model": model}
    vanilla = [r for r in mine if r.rules == VANILLA and disclosure == HIDDEN]
    mirror = [r for r in mine if r.rules != VANILLA]
    paired = disclosure == HIDDEN
    found = index.comparisons(VANILLA, HIDDEN, agent=agent, model=model) if paired else []
    values: dict[str, Yours] = {
        "vanilla_score": _side(b, found, SCORE, "first", vanilla),
        "vanilla_sr": _side(b, found, SR, "first", vanilla),
        "mirror_score": _side(b, found, SCORE, "second", mirror),
        "mirror_sr": _side(b, found, SR, "second", mirror),
        "rie_sc": _estimate(rie(index, SCORE, agent=agent, model=model)) if paired else None,
        "rie_sr": _estimate(rie(index, SR, agent=agent, model=model)) if paired else None,
        "actions": _plain([float(r.actions_used) for r in mirror]),
        "cost_usd": None
        if any(r.cost_usd is None for r in mirror)
        else _plain([float(r.cost_usd or 0.0) for r in mirror]),
    }
    for quantity, yours in values.items():
        paper = None if prow is None else _num(prow, quantity)
        if prow is not None and paper is None and yours is None:
            continue  # a cell neither side has (Vanilla of a disclosed configuration)
        b.add("table2", label, quantity, paper, yours, present=(prow is not None, bool(mine)))


def _pooled_hidden(ref: Reference, recs: Records) -> tuple[list[EpisodeRecord], str]:
    """Hidden episodes of the paper's six configurations (or, without them, all of yours)."""
    hidden = [r for r in recs if r.disclosure == HIDDEN]
    six = set(ref.design.get("configurations", ()))
    mine = [r for r in hidden if r.agent in six]
    if mine:
        return mine, "your hidden episodes of " + ", ".join(sorted({r.agent for r in mine}))
    return hidden, "your hidden episodes of every configuration (none of the paper's six)"


def _suites(ref: Reference, recs: Records) -> list[str]:
    paper = [str(r["suite"]) for r in ref.table("table3").rows if r["suite"] != POOLED]
    yours = {r.rules for r in recs if r.rules != VANILLA}
    return [*paper, *sorted(yours - set(paper), key=suite_order), POOLED]


def _table3(b: Builder, ref: Reference, recs: Records) -> str:
    hidden, scope = _pooled_hidden(ref, recs)
    index = PairIndex(hidden, b.strata)
    for suite in _suites(ref, recs):
        prow = next((r for r in ref.table("table3").rows if r["suite"] == suite), None)
        chosen = None if suite == POOLED else [suite]
        mirror = [r for r in hidden if r.rules != VANILLA and (chosen is None or r.rules in chosen)]
        found = index.comparisons(VANILLA, HIDDEN, suites=chosen)
        values = {
            "mirror_score": _side(b, found, SCORE, "second", mirror),
            "mirror_sr": _side(b, found, SR, "second", mirror),
            "rie_sc": _estimate(rie(index, SCORE, suites=chosen)),
            "rie_sr": _estimate(rie(index, SR, suites=chosen)),
        }
        for quantity, yours in values.items():
            paper = None if prow is None else _num(prow, quantity)
            b.add(
                "table3",
                {"suite": suite},
                quantity,
                paper,
                yours,
                present=(prow is not None, bool(mirror)),
            )
    return scope


def _split_rows(
    b: Builder, table: str, ref_rows: Sequence[Row], recs: Records, model: str, cols: dict[str, str]
) -> None:
    """ReAct's hidden/disclosed SR and the split RIE = Gap + delta SR, per suite and pooled."""
    react = [r for r in recs if r.agent == "react" and (model == ALL or r.model == model)]
    index = PairIndex(react, b.strata)
    for suite in _suites_of(ref_rows, react):
        prow = next((r for r in ref_rows if r["suite"] == suite), None)
        chosen = None if suite == POOLED else [suite]
        split = disclosure_split(index, SR, suites=chosen, agent="react", model=model)
        picked = [r for r in react if r.rules != VANILLA and (chosen is None or r.rules in chosen)]
        vh, dh = _split_comparisons(index, chosen, model)
        values: dict[str, Yours] = {
            "hidden_sr": _side(b, vh, SR, "second", [r for r in picked if r.disclosure == HIDDEN]),
            "disclosed_sr": _side(
                b, dh, SR, "first", [r for r in picked if r.disclosure == DISCLOSED]
            ),
            "rie_sr": None if split is None else _estimate(split.rie),
            "gap": None if split is None else _estimate(split.gap),
            "delta_sr": None if split is None else _estimate(split.delta),
        }
        key = {"suite": suite} if model == ALL else {"suite": suite, "model": model}
        for quantity, column in cols.items():
            paper = None if prow is None else _num(prow, column)
            has_paper = prow is not None and column in prow
            if not has_paper and prow is not None:
                continue
            b.add(
                table,
                key,
                quantity,
                paper,
                values[quantity],
                paper_hw=None if prow is None else _num(prow, f"{column}_hw"),
                present=(prow is not None, bool(picked)),
            )


def _split_comparisons(
    index: PairIndex, suites: list[str] | None, model: str
) -> tuple[list[Comparison], list[Comparison]]:
    """ReAct's Vanilla-hidden and disclosed-hidden comparisons of its disclosure split (pairs
    run in all three conditions), whose sides ``analyze``'s split table shows."""
    return (
        index.comparisons(
            VANILLA, HIDDEN, suites=suites, agent="react", model=model, require=(DISCLOSED,)
        ),
        index.comparisons(
            DISCLOSED, HIDDEN, suites=suites, agent="react", model=model, require=(VANILLA,)
        ),
    )


def _suites_of(ref_rows: Sequence[Row], recs: Records) -> list[str]:
    paper = [str(r["suite"]) for r in ref_rows if r["suite"] != POOLED]
    yours = {r.rules for r in recs if r.rules != VANILLA and r.disclosure == DISCLOSED}
    return [*dict.fromkeys([*paper, *sorted(yours - set(paper), key=suite_order)]), POOLED]


def _table4(b: Builder, ref: Reference, recs: Records) -> None:
    table = ref.table("table4")
    react_vanilla = [r for r in recs if r.agent == "react" and r.rules == VANILLA]
    vh, _dh = _split_comparisons(
        PairIndex([r for r in recs if r.agent == "react"], b.strata), None, ALL
    )
    b.add(
        "table4",
        {"suite": "vanilla"},
        "vanilla_sr",
        table.vanilla_sr,
        _side(b, vh, SR, "first", react_vanilla),
        present=(table.vanilla_sr is not None, bool(react_vanilla)),
    )
    cols = {q: q for q in ("hidden_sr", "disclosed_sr", "rie_sr", "gap", "delta_sr")}
    _split_rows(b, "table4", table.rows, recs, ALL, cols)


def _table10(b: Builder, ref: Reference, recs: Records) -> None:
    rows = ref.table("table10").rows
    models = list(dict.fromkeys(str(r["model"]) for r in rows))
    yours = sorted({r.model for r in recs if r.agent == "react" and r.disclosure == DISCLOSED})
    cols = {"rie_sr": "rie_sr", "gap": "gap", "delta_sr": "delta_sr"}
    for model in [*models, *[m for m in yours if m not in models]]:
        mine = [r for r in rows if r["model"] == model]
        _split_rows(b, "table10", mine, recs, model, cols)


def _table11(b: Builder, ref: Reference, recs: Records) -> None:
    hidden, _scope = _pooled_hidden(ref, recs)
    index = PairIndex(hidden, b.strata)
    rows = ref.table("table11").rows
    for suite in _suites(ref, recs):
        prow = next((r for r in rows if r["suite"] == suite), None)
        chosen = None if suite == POOLED else [suite]
        est = rie(index, SR, suites=chosen)
        b.add(
            "table11",
            {"suite": suite},
            "all_six_rie_sr",
            None if prow is None else _num(prow, "all_six_rie_sr"),
            _estimate(est),
            paper_hw=None if prow is None else _num(prow, "all_six_rie_sr_hw"),
            present=(prow is not None, est is not None),
        )
    cols = {"rie_sr": "react_rie_sr", "gap": "react_gap", "delta_sr": "react_delta_sr"}
    _split_rows(b, "table11", rows, recs, ALL, cols)


def _checkpoint_sr(records: Records, checkpoint: int, top: int) -> Yours:
    """SR after ``checkpoint`` actions averaged over tasks, as ``analyze``'s horizon table:
    over the same trajectories at every checkpoint (budget reaching ``top``, the largest
    checkpoint reached), each task weighted equally, the interval stratified by task."""
    eligible = [r for r in records if r.budget >= max(checkpoint, top)]
    est = task_averaged_sr(eligible, checkpoint)
    return None if est is None else (est.value, est.half_width, len(eligible))


def _table5(b: Builder, ref: Reference, recs: Records) -> None:
    table = ref.table("table5")
    family = table.model or ""
    checkpoints = sorted({int(r["checkpoint"]) for r in table.rows})  # type: ignore[arg-type]
    reached = [c for c in checkpoints if any(r.budget >= c for r in recs)]
    hidden = [r for r in recs if r.disclosure == HIDDEN]
    configs = list(dict.fromkeys(str(r["configuration"]) for r in table.rows))
    keys = [(c, family) for c in configs]
    if reached:
        keys += sorted({(r.agent, r.model) for r in hidden} - set(keys))
    for agent, model in keys:
        mine = [r for r in hidden if r.agent == agent and r.model == model]
        for cp in checkpoints:
            prow = next(
                (
                    r
                    for r in table.rows
                    if r["configuration"] == agent and r["checkpoint"] == cp and model == family
                ),
                None,
            )
            if prow is None and cp not in reached:
                continue
            for side, quantity in ((VANILLA, "vanilla_sr"), ("mirror", "mirror_sr")):
                picked = [r for r in mine if (r.rules == VANILLA) == (side == VANILLA)]
                yours = _checkpoint_sr(picked, cp, max(reached, default=cp))
                b.add(
                    "table5",
                    {"configuration": agent, "model": model, "checkpoint": cp},
                    quantity,
                    None if prow is None else _num(prow, quantity),
                    yours,
                    present=(prow is not None, yours is not None),
                )


def _tests(
    b: Builder, ref: Reference, recs: Records, threshold: float, tasks: Sequence[str]
) -> None:
    index = PairIndex(recs, b.strata)
    within = within_suite_section(recs, index, threshold, tasks, b.family)["tests"]
    _, disclosure_tests = disclosure_section(recs, index)
    yours: dict[tuple[str, str, str], Row] = {}
    for t in within:
        yours[("within_suite", str(t["suite"]), str(t["model"]))] = t
    names = {"delta_sr": "delta_sr_across_suites", "gap_sr": "gap_across_suites"}
    for t in disclosure_tests:
        if t["agent"] == "react" and t["model"] == ALL and t["quantity"] in names:
            yours[(names[str(t["quantity"])], "all", "pooled")] = t
    used: set[tuple[str, str, str]] = set()
    for p in ref.cochran_q:
        test, suite, model = str(p["test"]), str(p["suite"]), str(p["model"])
        matches = (
            [k for k in yours if k[0] == test and k[1] == suite]
            if model == "all"
            else [k for k in yours if k == (test, suite, model)]
        )
        if not matches:
            _q_rows(b, {"test": test, "suite": suite, "model": model}, p, None)
        for k in matches:
            used.add(k)
            _q_rows(b, {"test": test, "suite": suite, "model": k[2]}, p, yours[k])
    for k in sorted(set(yours) - used):
        _q_rows(b, {"test": k[0], "suite": k[1], "model": k[2]}, None, yours[k])


def _q_rows(b: Builder, key: dict[str, Any], paper: Row | None, mine: Row | None) -> None:
    present = (paper is not None, mine is not None)
    for quantity in ("q", "p"):
        value = None if mine is None else mine.get(quantity)
        yours: Yours = None if not isinstance(value, int | float) else (float(value), None, 0)
        paper_value = None if paper is None else paper.get(quantity)
        b.add(
            "cochran_q",
            key,
            quantity,
            float(paper_value) if isinstance(paper_value, int | float) else None,
            yours,
            paper_text=None if paper is None or paper_value is None else str(paper_value),
            present=present,
        )


def _text(b: Builder, ref: Reference, recs: Records) -> None:
    for t in ref.text:
        agent, model, task = str(t["configuration"]), str(t["model"]), str(t["task"])
        suite = t.get("suite")
        mine = [r for r in recs if (r.agent, r.model, r.task) == (agent, model, task)]
        sides = {
            "vanilla_sr": [r for r in mine if r.rules == VANILLA],
            "mirror_sr": [r for r in mine if r.rules == suite and r.disclosure == HIDDEN],
            "disclosed_sr": [r for r in mine if r.rules == suite and r.disclosure == DISCLOSED],
        }
        key = {"id": t["id"], "configuration": agent, "model": model, "task": task}
        if suite:
            key["suite"] = suite
        for quantity, picked in sides.items():
            if quantity not in t:
                continue
            yours = _group(picked, SR, _strata)
            b.add(
                "text", key, quantity, _num(t, quantity), yours, present=(True, yours is not None)
            )


def compare(
    records: Records,
    reference: Reference,
    *,
    threshold: float = 50.0,
    compared_tasks: Sequence[str] = ("iron_armor", "diamond"),
    strata: str = CONFIGURATION_STRATA,
    family: str = DESIGN_FAMILY,
) -> dict[str, Any]:
    """Every published quantity beside yours (see the module docstring); ``strata`` is the
    reading of the paper's strata that your intervals use (``estimates.STRATA``), ``family``
    the tests your Bonferroni family counts (``sections.FAMILIES``).

    Control agents (the oracle, given the rules in force) are left out, as in ``summarize``:
    they are none of the configurations the paper's tables pool, nor members of a compared set.
    """
    recs, names = relabel([r for r in records if not is_control(r)], reference)
    b = Builder(strata, family)
    _table2(b, reference, recs)
    scope = _table3(b, reference, recs)
    _table4(b, reference, recs)
    _table5(b, reference, recs)
    _table10(b, reference, recs)
    _table11(b, reference, recs)
    _tests(b, reference, recs, threshold, compared_tasks)
    _text(b, reference, recs)
    counts = {
        k: sum(1 for r in b.rows if r["counterpart"] == k) for k in (BOTH, PAPER_ONLY, YOURS_ONLY)
    }
    inside = [r["paper_in_ci"] for r in b.rows if r["paper_in_ci"] is not None]
    return {
        "schema": COMPARE_SCHEMA,
        "strata": strata,
        "bonferroni": family,
        "reference": reference.source.model_dump(),
        "model_families": names,
        "scope": {"table3": scope, "table11": scope},
        "titles": {k: v.title for k, v in reference.tables.items()}
        | {"cochran_q": "Cochran's Q tests", "text": "Numbers stated in the text"},
        "counts": {**counts, "paper_in_your_ci": sum(inside), "with_interval": len(inside)},
        "rows": b.rows,
    }
