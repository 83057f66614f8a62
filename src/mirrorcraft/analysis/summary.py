"""All of the analysis in one JSON-ready document (the keys are documented in docs/analysis.md).

``summarize(records)`` is what ``mirrorcraft analyze --json`` prints and what the
text tables and the HTML report are built from. Missing values are ``null``,
never 0, and every list is in a fixed order (configurations as in the paper,
suites by number), so two runs over the same records give the same document.

Episodes of control agents (the oracle, which is given the active rules) enter
only the ``controls`` section. Vanilla and Mirror columns beside an RIE are means
over the same comparisons as the RIE; episodes in no comparison are counted in
``unpaired``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from mirrorcraft.analysis.accumulation import accumulation_summary
from mirrorcraft.analysis.estimates import CONFIGURATION_STRATA, contrast, side_mean
from mirrorcraft.analysis.horizon import horizon_section
from mirrorcraft.analysis.metrics import (
    HIDDEN,
    VANILLA,
    agent_order,
    biome_order,
    call_summary,
    configuration_label,
    configuration_order,
    distinct,
    is_control,
    mean_actions,
    mean_cost,
    mean_score,
    rule_change,
    success_rate,
    suite_order,
    task_order,
)
from mirrorcraft.analysis.paired import (
    ALL,
    SCORE,
    SR,
    PairIndex,
    ci,
    paired_means,
    rie,
    value,
)
from mirrorcraft.analysis.sections import (
    DESIGN_FAMILY,
    controls_section,
    diagnostics_section,
    disclosure_section,
    within_suite_section,
)
from mirrorcraft.analysis.usage import usage_section
from mirrorcraft.runner.records import EpisodeRecord

SUMMARY_SCHEMA = "mirrorcraft.analysis/2"

Row = dict[str, Any]


def rie_fields(index: PairIndex, **kwargs: Any) -> Row:
    """RIE_SC and RIE_SR with intervals for one selection of comparisons."""
    sc = rie(index, SCORE, **kwargs)
    sr = rie(index, SR, **kwargs)
    return {
        "rie_sc": value(sc),
        "rie_sc_ci": ci(sc),
        "rie_sr": value(sr),
        "rie_sr_ci": ci(sr),
        "comparisons": 0 if sr is None else sr.comparisons,
    }


def group_fields(records: Sequence[EpisodeRecord]) -> Row:
    return {
        "episodes": len(records),
        "score": mean_score(records),
        "sr": success_rate(records),
    }


def paired_fields(
    index: PairIndex,
    vanilla: Sequence[EpisodeRecord],
    mirror: Sequence[EpisodeRecord],
    **selection: Any,
) -> Row:
    """Vanilla and Mirror groups over the comparisons of the RIE, and the unpaired counts.

    Without any comparison nothing can disagree with an RIE (there is none), so the
    groups then cover every episode of each side and ``paired`` is false.
    """
    pm = paired_means(index, VANILLA, HIDDEN, **selection)
    if not pm.comparisons:
        return {
            "paired": False,
            "vanilla": group_fields(vanilla),
            "mirror": group_fields(mirror),
            "unpaired": {"vanilla": len(vanilla), "mirror": len(mirror)},
        }
    return {
        "paired": True,
        "vanilla": dict(pm.first),
        "mirror": dict(pm.second),
        "unpaired": {"vanilla": pm.unpaired_first, "mirror": pm.unpaired_second},
    }


def _counts(
    records: Sequence[EpisodeRecord],
    controls: Sequence[EpisodeRecord],
    excluded: dict[str, int],
    invalid: Sequence[dict[str, str]],
) -> Row:
    mirror = [r for r in records if r.rules != VANILLA]
    return {
        "total": len(records),
        "vanilla": len(records) - len(mirror),
        "mirror": len(mirror),
        "disclosed": sum(1 for r in records if r.disclosure != HIDDEN),
        "controls": len(controls),
        "excluded": dict(excluded),
        "invalid": list(invalid),
        "models": distinct(r.model for r in records),
        "agents": distinct((r.agent for r in records), agent_order),
        "suites": distinct((r.rules for r in mirror), suite_order),
        "tasks": distinct((r.task for r in records), task_order),
        "biomes": distinct((r.biome for r in records), biome_order),
        "budgets": sorted({r.budget for r in records}),
        "mixed_budgets": _mixed_budgets(records),
    }


def _mixed_budgets(records: Sequence[EpisodeRecord]) -> dict[str, list[int]]:
    """Task -> its budgets, for each task whose episodes ran at more than one budget (records
    of runs with different budgets put together): the tables pool them (a Vanilla-Mirror
    pair is always within one budget), which one experiment never does."""
    budgets: dict[str, set[int]] = defaultdict(set)
    for r in records:
        budgets[r.task].add(r.budget)
    return {
        task: sorted(budgets[task])
        for task in distinct(budgets, task_order)
        if len(budgets[task]) > 1
    }


def _configurations(records: Sequence[EpisodeRecord], index: PairIndex) -> list[Row]:
    models = distinct(r.model for r in records)
    groups: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        groups[(r.agent, r.disclosure, r.model)].append(r)
        groups[(r.agent, r.disclosure, ALL)].append(r)
    configs = sorted({(a, d) for a, d, _ in groups}, key=configuration_order)
    rows: list[Row] = []
    for agent, disclosure in configs:
        for model in models + ([ALL] if len(models) > 1 else []):
            mine = groups.get((agent, disclosure, model), [])
            mirror = [r for r in mine if r.rules != VANILLA]
            vanilla = [r for r in mine if r.rules == VANILLA] if disclosure == HIDDEN else []
            if not mirror and not vanilla:
                continue
            cost = mean_cost(mirror)
            if disclosure == HIDDEN:
                sides = paired_fields(index, vanilla, mirror, agent=agent, model=model)
                paired = rie_fields(index, agent=agent, model=model)
            else:
                sides = {
                    "paired": False,
                    "vanilla": group_fields([]),
                    "mirror": group_fields(mirror),
                    "unpaired": {"vanilla": 0, "mirror": 0},
                }
                paired = rie_fields(PairIndex([]))
            rows.append(
                {
                    "configuration": configuration_label(agent, disclosure),
                    "agent": agent,
                    "disclosure": disclosure,
                    "model": model,
                    **sides,
                    **paired,
                    "actions": mean_actions(mirror),
                    "cost_usd": cost.mean,
                    "cost_unknown": cost.unknown,
                    **_calls(mirror),
                }
            )
    return rows


def _calls(mirror: Sequence[EpisodeRecord]) -> Row:
    calls = call_summary(mirror)
    return {
        "paid_calls": calls.paid_calls,
        "cached_calls": calls.cached_calls,
        "prompt_tokens": calls.prompt_tokens,
        "completion_tokens": calls.completion_tokens,
        "cost_estimated": calls.estimated_episodes,
    }


def _suites(hidden: Sequence[EpisodeRecord], index: PairIndex) -> list[Row]:
    rows: list[Row] = []
    vanilla = [r for r in hidden if r.rules == VANILLA]
    for suite in index.suites():
        mirror = [r for r in hidden if r.rules == suite]
        sides = paired_fields(index, vanilla, mirror, suites=[suite])
        rows.append(
            {
                "suite": suite,
                "title": rule_change(suite, mirror),
                "mirror": sides["mirror"],
                "paired": sides["paired"],
                "unpaired": sides["unpaired"],
                **rie_fields(index, suites=[suite]),
            }
        )
    if rows:
        mirror = [r for r in hidden if r.rules != VANILLA]
        sides = paired_fields(index, vanilla, mirror)
        rows.append(
            {
                "suite": "pooled",
                "title": "All suites",
                "mirror": sides["mirror"],
                "paired": sides["paired"],
                "unpaired": sides["unpaired"],
                **rie_fields(index),
            }
        )
    return rows


def _breakdown(
    hidden: Sequence[EpisodeRecord], attr: str, order: Callable[[str], Any], strata: str
) -> list[Row]:
    groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in hidden:
        groups[str(getattr(r, attr))].append(r)
    rows: list[Row] = []
    for group in sorted(groups, key=order):
        rs = groups[group]
        index = PairIndex(rs, strata)
        vanilla = [r for r in rs if r.rules == VANILLA]
        mirror = [r for r in rs if r.rules != VANILLA]
        rows.append({"group": group, **paired_fields(index, vanilla, mirror), **rie_fields(index)})
    return rows


def _configuration_suites(hidden: Sequence[EpisodeRecord], index: PairIndex) -> list[Row]:
    """Per hidden configuration, model and suite over all tasks: RIE_SR, and the Vanilla and
    Mirror SR and Score of the same comparisons (each with its 95% interval)."""
    rows: list[Row] = []
    agents = distinct((r.agent for r in hidden), agent_order)
    for model in distinct(r.model for r in hidden):
        for agent in agents:
            for suite in index.suites():
                found = index.comparisons(VANILLA, HIDDEN, suites=[suite], agent=agent, model=model)
                est = contrast(found, SR)
                if est is None:
                    continue
                row: Row = {
                    "model": model,
                    "agent": agent,
                    "suite": suite,
                    "rie_sr": est.value,
                    "rie_sr_ci": ci(est),
                }
                for measure, name in ((SR, "sr"), (SCORE, "score")):
                    for side, condition in (("first", "vanilla"), ("second", "mirror")):
                        mean = side_mean(found, measure, side)
                        row[f"{condition}_{name}"] = value(mean)
                        row[f"{condition}_{name}_ci"] = ci(mean)
                rows.append(row)
    return rows


def summarize(
    records: Sequence[EpisodeRecord],
    *,
    threshold: float = 50.0,
    compared_tasks: Sequence[str] = ("iron_armor", "diamond"),
    checkpoints: Sequence[int] = (100, 150, 200),
    excluded: dict[str, int] | None = None,
    invalid: Sequence[dict[str, str]] = (),
    train_records: Sequence[EpisodeRecord] = (),
    strata: str = CONFIGURATION_STRATA,
    family: str = DESIGN_FAMILY,
) -> dict[str, Any]:
    """Every table of the paper that the records allow, as one JSON-ready dictionary.

    ``strata`` says which reading of the paper's "stratified by model and task" the
    intervals and tests use (``estimates.STRATA``; ``docs/analysis.md``); ``family`` which
    tests the within-suite Bonferroni family counts (``sections.FAMILIES``).

    ``excluded`` counts the infrastructure records left out and ``invalid`` lists the
    inconsistent ones (both from ``load_results``). ``train_records`` are the training
    episodes of an accumulation experiment (its ``train.sqlite``), for the
    training-stream table and the run's usage totals.
    """
    usage = usage_section(records, train_records)
    controls = [r for r in records if is_control(r)]
    records = [r for r in records if not is_control(r)]
    index = PairIndex(records, strata)
    hidden = [r for r in records if r.disclosure == HIDDEN]
    hidden_index = PairIndex(hidden, strata)
    disclosure, disclosure_tests = disclosure_section(records, index)
    return {
        "schema": SUMMARY_SCHEMA,
        "strata": strata,
        "episodes": _counts(records, controls, excluded or {}, invalid),
        "configurations": _configurations(records, index),
        "suites": _suites(hidden, hidden_index),
        "breakdowns": {
            "task": _breakdown(hidden, "task", task_order, strata),
            "biome": _breakdown(hidden, "biome", biome_order, strata),
            "model": _breakdown(hidden, "model", str, strata),
        },
        "configuration_suites": _configuration_suites(hidden, hidden_index),
        "disclosure": disclosure,
        "disclosure_tests": disclosure_tests,
        "within_suite": within_suite_section(records, index, threshold, compared_tasks, family),
        "horizon": horizon_section(records, checkpoints),
        "diagnostics": diagnostics_section(records),
        "controls": controls_section(controls),
        "accumulation": accumulation_summary(records, train_records),
        "usage": usage,
    }
