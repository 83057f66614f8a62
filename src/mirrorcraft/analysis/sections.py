"""Summary sections beyond the main tables: disclosure split, within-suite tests, horizon, IRR/RL."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from mirrorcraft.analysis.diagnostics import diagnose_by_suite, equal_suite_estimate
from mirrorcraft.analysis.metrics import (
    DISCLOSED,
    HIDDEN,
    VANILLA,
    agent_order,
    configuration_label,
    configuration_order,
    distinct,
    mean_actions,
    mean_score,
    success_rate,
    suite_order,
)
from mirrorcraft.analysis.paired import (
    ALL,
    SCORE,
    SR,
    Estimate,
    PairIndex,
    PairKey,
    Split,
    ci,
    compared_set,
    disclosure_split,
    rie,
    value,
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


_UNDEFINED_FEW = "fewer than two estimates"
_UNDEFINED_ZERO = "an estimate with zero variance"
_UNDEFINED_NOT_RUN = "no compared configuration ran this suite with hidden rules"

TEST_SIDES: dict[str, tuple[str, ...]] = {
    "rie_sr": (HIDDEN,),
    "gap_sr": (DISCLOSED,),
    "delta_sr": (DISCLOSED, HIDDEN),
}
"""Which sides' variances weight Cochran's Q of each part of the disclosure split across
suites. Every suite shares the agent's Vanilla cell, so RIE and Gap differ between suites
only through their Mirror side (the paper's appendix C: the Gap test "compares the
disclosed SRs"); Δ has no shared side."""


def _q_fields(estimates: Sequence[Estimate], sides: tuple[str, ...] | None = None) -> Row:
    """Cochran's Q of ``estimates`` weighted by their whole variance or only ``sides``."""

    def variances(corrected: bool) -> list[float] | None:
        out: list[float] = []
        for e in estimates:
            v = (
                (e.variance_ac if corrected else e.variance)
                if sides is None
                else e.side_variance(*sides, corrected=corrected)
            )
            if v is None:
                return None
            out.append(v)
        return out

    values = [e.value for e in estimates]
    plain_var = variances(False)
    ac_var = variances(True)
    plain = None if plain_var is None else cochran_q(values, plain_var)
    corrected: CochranQ | None = None if ac_var is None else cochran_q(values, ac_var)
    undefined = None
    if plain is None:
        undefined = _UNDEFINED_FEW if len(estimates) < 2 else _UNDEFINED_ZERO
    return {
        "k": len(estimates),
        "q": None if plain is None else plain.q,
        "df": None if plain is None else plain.df,
        "p": None if plain is None else plain.p,
        "q_ac": None if corrected is None else corrected.q,
        "p_ac": None if corrected is None else corrected.p,
        "undefined": undefined,
    }


def _split_unpaired(
    index: PairIndex, suites: list[str] | None, agent: str, model: str
) -> dict[str, int]:
    """Episodes of each condition left out of the split: their pair lacks another condition."""
    found = index.comparisons(
        VANILLA, HIDDEN, suites=suites, agent=agent, model=model, require=(DISCLOSED,)
    )
    used: dict[str, set[tuple[PairKey, str | None]]] = {
        VANILLA: {(c.pair, None) for c in found},
        HIDDEN: {(c.pair, c.suite) for c in found},
        DISCLOSED: {(c.pair, c.suite) for c in found},
    }
    return {
        condition: sum(
            cell.n
            for key, cell in index.cells(condition, suites=suites, agent=agent, model=model).items()
            if key not in used[condition]
        )
        for condition in (VANILLA, HIDDEN, DISCLOSED)
    }


def disclosure_section(
    records: Sequence[EpisodeRecord], index: PairIndex
) -> tuple[list[Row], list[Row]]:
    """Rows of the split of RIE into Gap and Δ, and Cochran's Q of each part across suites.

    One block of rows per agent that was run with disclosed rules: pooled over
    models ("all") and, when there are several models, per model; one row per
    suite the agent was run in plus a "pooled" row. The tests follow the same
    blocks: the paper's appendix C pools the models (its Q values are reproduced
    that way), while its section 4.1 computes Q "for each model separately".
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
                        "unpaired": _split_unpaired(index, chosen, agent, model),
                        **_split_fields(sr, "sr", "sr"),
                        **_split_fields(sc, "score", "sc"),
                    }
                )
            for quantity, sides in TEST_SIDES.items():
                part = quantity.split("_")[0]
                ests = [getattr(s, part) for s in per_suite]
                tests.append(
                    {
                        "agent": agent,
                        "model": model,
                        "quantity": quantity,
                        "variance": " + ".join(sides),
                        **_q_fields(ests, sides),
                    }
                )
    return rows, tests


DESIGN_FAMILY = "design"
"""The Bonferroni family: every (suite, model) where a compared configuration ran the suite
with hidden rules, defined or not (the default)."""
TESTABLE_FAMILY = "testable"
"""The Bonferroni family: only the (suite, model) tests with at least two compared
configurations' RIEs, the ones a Q can be formed from."""
FAMILIES = (DESIGN_FAMILY, TESTABLE_FAMILY)


def within_suite_section(
    records: Sequence[EpisodeRecord],
    index: PairIndex,
    threshold: float,
    tasks: Sequence[str],
    family: str = DESIGN_FAMILY,
) -> Row:
    """RIE_SR of the compared configurations per model and suite, and Cochran's Q across them.

    One test per suite and model, whether or not it can be computed. The Bonferroni
    family is the paper's "12 tests (6 suites and 2 models)": the suites and models of the
    design, i.e. every (suite, model) where some compared configuration of the model ran
    the suite with hidden rules. A test of the design that is undefined (one compared
    configuration ran there, or an RIE without variance) still counts in it and is
    reported as undefined; a (suite, model) without any such run (a suite run only with
    disclosed rules, a model without a compared configuration) is listed as undefined
    and not counted (``in_family`` false): no test was planned there. The paper's design
    has no undefined test, so it cannot tell whether one counts: ``family`` "testable"
    counts only the tests with at least two compared configurations' RIEs.
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    compared = compared_set(records, threshold, tasks)
    task_set = set(tasks)
    suites = index.suites()
    rows: list[Row] = []
    tests: list[Row] = []
    for model, agents in compared.items():
        for suite in suites:
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
            fields = _q_fields(ests)
            if not ests:
                fields["undefined"] = _UNDEFINED_NOT_RUN
            test = {"suite": suite, "model": model, "agents": names, **fields}
            counted = bool(ests) if family == DESIGN_FAMILY else len(ests) >= 2
            tests.append(test | {"in_family": counted})
    size = sum(1 for t in tests if t["in_family"])
    for t in tests:
        counted = t["in_family"]
        t["p_bonferroni"] = None if t["p"] is None or not counted else bonferroni([t["p"]], size)[0]
        t["p_ac_bonferroni"] = (
            None if t["p_ac"] is None or not counted else bonferroni([t["p_ac"]], size)[0]
        )
    return {
        "threshold": threshold,
        "tasks": list(tasks),
        "compared": compared,
        "rie": rows,
        "tests": tests,
        "family_size": size,
        "family": family,
    }


def _configurations(records: Sequence[EpisodeRecord]) -> list[tuple[str, str]]:
    return sorted({(r.agent, r.disclosure) for r in records}, key=configuration_order)


def diagnostics_section(records: Sequence[EpisodeRecord]) -> Row:
    """IRR and RL per configuration and suite (pooled over models), with equal-suite means."""
    mirror = [r for r in records if r.rules != VANILLA]
    suites = distinct((r.rules for r in mirror), suite_order)
    rows: list[Row] = []
    for agent, disclosure in _configurations(mirror):
        mine = [r for r in mirror if (r.agent, r.disclosure) == (agent, disclosure)]
        per = diagnose_by_suite(mine)
        irr_mean = equal_suite_estimate(per[s].irr_estimate for s in per)
        rl_mean = equal_suite_estimate(per[s].rl_estimate for s in per)
        rows.append(
            {
                "configuration": configuration_label(agent, disclosure),
                "agent": agent,
                "disclosure": disclosure,
                "suites": {
                    s: {
                        "encounters": d.encounters,
                        "irr": d.irr,
                        "irr_ci": ci(d.irr_estimate),
                        "irr_n": d.irr_n,
                        "rl": d.rl,
                        "rl_ci": ci(d.rl_estimate),
                        "rl_n": d.rl_n,
                    }
                    for s, d in sorted(per.items(), key=lambda kv: suite_order(kv[0]))
                },
                "irr_mean": value(irr_mean),
                "irr_mean_ci": ci(irr_mean),
                "rl_mean": value(rl_mean),
                "rl_mean_ci": ci(rl_mean),
            }
        )
    return {"suites": suites, "rows": rows}


def controls_section(controls: Sequence[EpisodeRecord]) -> list[Row]:
    """Score and SR of control agents per model and rule set (never in a benchmark table)."""
    groups: dict[tuple[str, str, str], list[EpisodeRecord]] = defaultdict(list)
    for r in controls:
        groups[(r.agent, r.model, r.rules)].append(r)
    rows: list[Row] = []
    for agent, model, rules in sorted(
        groups,
        key=lambda k: (agent_order(k[0]), k[1], (0, "") if k[2] == VANILLA else suite_order(k[2])),
    ):
        mine = groups[(agent, model, rules)]
        rows.append(
            {
                "agent": agent,
                "model": model,
                "rules": rules,
                "episodes": len(mine),
                "score": mean_score(mine),
                "sr": success_rate(mine),
                "actions": mean_actions(mine),
            }
        )
    return rows
