"""Summary sections beyond the main tables: disclosure split, within-suite tests, horizon, IRR/RL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mirrorcraft.analysis.diagnostics import checkpoint_sr, diagnose_by_suite, equal_suite_mean
from mirrorcraft.analysis.metrics import (
    DISCLOSED,
    HIDDEN,
    VANILLA,
    agent_order,
    configuration_label,
    configuration_order,
    distinct,
    suite_order,
)
from mirrorcraft.analysis.paired import (
    ALL,
    SCORE,
    SR,
    Estimate,
    PairIndex,
    Split,
    ci,
    compared_set,
    disclosure_split,
    rie,
)
from mirrorcraft.analysis.stats import CochranQ, bonferroni, cochran_q
from mirrorcraft.runner.records import EpisodeRecord

Row = dict[str, Any]
POOLED = "pooled"


def _split_fields(split: Split | None, tag: str, short: str) -> Row:
    """Row fields of one measure's split: ``<tag>`` names the means, ``<short>`` the contrasts."""
    if split is None:
        return {
            **{f"{k}_{tag}": None for k in ("vanilla", "hidden", "disclosed")},
            **{f"{k}_{short}{s}": None for k in ("rie", "gap", "delta") for s in ("", "_ci")},
        }
    return {
        f"vanilla_{tag}": split.vanilla,
        f"hidden_{tag}": split.hidden,
        f"disclosed_{tag}": split.disclosed,
        f"rie_{short}": split.rie.value,
        f"rie_{short}_ci": ci(split.rie),
        f"gap_{short}": split.gap.value,
        f"gap_{short}_ci": ci(split.gap),
        f"delta_{short}": split.delta.value,
        f"delta_{short}_ci": ci(split.delta),
    }


def _q_fields(estimates: Sequence[Estimate]) -> Row:
    plain = cochran_q([e.value for e in estimates], [e.variance for e in estimates])
    corrected: CochranQ | None = None
    if all(e.variance_ac is not None for e in estimates):
        corrected = cochran_q(
            [e.value for e in estimates], [float(e.variance_ac or 0.0) for e in estimates]
        )
    return {
        "k": len(estimates),
        "q": None if plain is None else plain.q,
        "df": None if plain is None else plain.df,
        "p": None if plain is None else plain.p,
        "q_ac": None if corrected is None else corrected.q,
        "p_ac": None if corrected is None else corrected.p,
    }


def disclosure_section(
    records: Sequence[EpisodeRecord], index: PairIndex
) -> tuple[list[Row], list[Row]]:
    """Rows of the split of RIE into Gap and Δ, and Cochran's Q of each part across suites.

    One block of rows per agent that was run with disclosed rules: pooled over
    models ("all") and, when there are several models, per model; one row per
    suite the agent was run in plus a "pooled" row.
    """
    agents = distinct(
        (r.agent for r in records if r.rules != VANILLA and r.disclosure == DISCLOSED),
        agent_order,
    )
    rows: list[Row] = []
    tests: list[Row] = []
    for agent in agents:
        mine = [r for r in records if r.agent == agent]
        models = distinct(r.model for r in mine)
        suites = distinct((r.rules for r in mine if r.rules != VANILLA), suite_order)
        for model in [ALL] + (models if len(models) > 1 else []):
            per_suite: list[Split] = []
            for suite in [*suites, POOLED]:
                chosen = None if suite == POOLED else [suite]
                sr = disclosure_split(index, SR, suites=chosen, agent=agent, model=model)
                sc = disclosure_split(index, SCORE, suites=chosen, agent=agent, model=model)
                if sr is not None and suite != POOLED:
                    per_suite.append(sr)
                rows.append(
                    {
                        "agent": agent,
                        "model": model,
                        "suite": suite,
                        "comparisons": 0 if sr is None else sr.rie.comparisons,
                        **_split_fields(sr, "sr", "sr"),
                        **_split_fields(sc, "score", "sc"),
                    }
                )
            if model == ALL:
                for quantity in ("rie_sr", "gap_sr", "delta_sr"):
                    part = quantity.split("_")[0]
                    ests = [getattr(s, part) for s in per_suite]
                    tests.append({"agent": agent, "quantity": quantity, **_q_fields(ests)})
    return rows, tests


def within_suite_section(
    records: Sequence[EpisodeRecord],
    index: PairIndex,
    threshold: float,
    tasks: Sequence[str],
) -> Row:
    """RIE_SR of the compared configurations per model and suite, and Cochran's Q across them."""
    compared = compared_set(records, threshold, tasks)
    task_set = set(tasks)
    rows: list[Row] = []
    tests: list[Row] = []
    for model, agents in compared.items():
        for suite in index.suites():
            ests: list[Estimate] = []
            names: list[str] = []
            for agent in agents:
                est = rie(index, SR, suites=[suite], agent=agent, model=model, tasks=task_set)
                if est is None:
                    continue
                ests.append(est)
                names.append(agent)
                rows.append(
                    {
                        "model": model,
                        "agent": agent,
                        "suite": suite,
                        "rie_sr": est.value,
                        "rie_sr_ci": ci(est),
                    }
                )
            if len(ests) >= 2:
                tests.append({"suite": suite, "model": model, "agents": names, **_q_fields(ests)})
    for key, adj in (("p", "p_bonferroni"), ("p_ac", "p_ac_bonferroni")):
        family = [t[key] for t in tests if t[key] is not None]
        adjusted = iter(bonferroni(family))
        for t in tests:
            t[adj] = next(adjusted) if t[key] is not None else None
    return {
        "threshold": threshold,
        "tasks": list(tasks),
        "compared": compared,
        "rie": rows,
        "tests": tests,
        "family_size": sum(1 for t in tests if t["p"] is not None),
    }


def _configurations(records: Sequence[EpisodeRecord]) -> list[tuple[str, str]]:
    return sorted({(r.agent, r.disclosure) for r in records}, key=configuration_order)


def horizon_section(records: Sequence[EpisodeRecord], checkpoints: Sequence[int]) -> Row:
    """Cumulative SR at each checkpoint that some episode's budget reaches."""
    present = sorted({c for c in checkpoints if any(r.budget >= c for r in records)})
    rows: list[Row] = []
    if present:
        for agent, disclosure in _configurations(records):
            for model in distinct(r.model for r in records):
                mine = [
                    r
                    for r in records
                    if (r.agent, r.disclosure, r.model) == (agent, disclosure, model)
                ]
                vanilla = [r for r in mine if r.rules == VANILLA and disclosure == HIDDEN]
                mirror = [r for r in mine if r.rules != VANILLA]
                if not vanilla and not mirror:
                    continue
                rows.append(
                    {
                        "configuration": configuration_label(agent, disclosure),
                        "agent": agent,
                        "disclosure": disclosure,
                        "model": model,
                        "vanilla": {str(c): checkpoint_sr(vanilla, c) for c in present},
                        "mirror": {str(c): checkpoint_sr(mirror, c) for c in present},
                    }
                )
    return {"checkpoints": present, "requested": sorted(set(checkpoints)), "rows": rows}


def diagnostics_section(records: Sequence[EpisodeRecord]) -> Row:
    """IRR and RL per configuration and suite (pooled over models), with equal-suite means."""
    mirror = [r for r in records if r.rules != VANILLA]
    suites = distinct((r.rules for r in mirror), suite_order)
    rows: list[Row] = []
    for agent, disclosure in _configurations(mirror):
        mine = [r for r in mirror if (r.agent, r.disclosure) == (agent, disclosure)]
        per = diagnose_by_suite(mine)
        rows.append(
            {
                "configuration": configuration_label(agent, disclosure),
                "agent": agent,
                "disclosure": disclosure,
                "suites": {
                    s: {
                        "encounters": d.encounters,
                        "irr": d.irr,
                        "irr_n": d.irr_n,
                        "rl": d.rl,
                        "rl_n": d.rl_n,
                    }
                    for s, d in sorted(per.items(), key=lambda kv: suite_order(kv[0]))
                },
                "irr_mean": equal_suite_mean(per[s].irr for s in per),
                "rl_mean": equal_suite_mean(per[s].rl for s in per),
            }
        )
    return {"suites": suites, "rows": rows}
