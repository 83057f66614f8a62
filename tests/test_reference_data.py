"""The paper's published numbers (data/reference/mirrorcraft_paper.yaml) rebuilt from its cells.

Every SR of Tables 2, 3, 4 and 10 is a share of a known number of episodes (30 per model,
task, configuration and condition), so each must be k/n for a whole k; the derived cells
(RIE, Gap, delta SR, pooled rows, the text's pooled-over-models figures) are recomputed from
those counts; Table 11 repeats Tables 3 and 4 with intervals no wider than the design allows;
Table 5's cumulative SRs never fall and give the gains the text reports; each Cochran's Q
gives its printed p value.
"""

from __future__ import annotations

import math
from itertools import product
from typing import Any

import pytest

from mirrorcraft.analysis.reference import Reference, ReferenceDataError, load_reference
from mirrorcraft.analysis.stats import chi2_sf

CONFIGS = ["direct", "react", "reflexion", "voyager", "xenon", "adam"]
SUITES = ["M01", "M02", "M03", "M04", "M05", "M06"]
MODELS = ["gemini", "deepseek"]
CELL = 30
TASKS = 3


@pytest.fixture(scope="module")
def ref() -> Reference:
    return load_reference()


def pct(k: int, n: int) -> float:
    return 100.0 * k / n


def close(value: float, exact: float, slack: float = 0.05) -> bool:
    """A printed one-decimal value is the exact one rounded (with float noise)."""
    return abs(value - exact) <= slack + 1e-9


def counts(value: float, n: int) -> list[int]:
    """Every whole number of successes out of n that prints as value."""
    return [k for k in range(n + 1) if close(value, pct(k, n))]


def one(value: float, n: int) -> int:
    found = counts(value, n)
    assert len(found) == 1, f"{value}% of {n} episodes is not one whole count: {found}"
    return found[0]


def rows(ref: Reference, table: str, **where: Any) -> list[dict[str, Any]]:
    return [r for r in ref.table(table).rows if all(r.get(k) == v for k, v in where.items())]


def row(ref: Reference, table: str, **where: Any) -> dict[str, Any]:
    found = rows(ref, table, **where)
    assert len(found) == 1, (table, where)
    return found[0]


def table2_counts(ref: Reference) -> dict[tuple[str, str, str], int]:
    """(configuration, disclosure, model) -> Vanilla successes (of 90) and Mirror (of 540)."""
    out: dict[tuple[str, str, str], int] = {}
    for r in ref.table("table2").rows:
        key = (str(r["configuration"]), str(r["disclosure"]), str(r["model"]))
        if r["vanilla_sr"] is not None:
            out[(*key[:2], f"{key[2]}:vanilla")] = one(float(r["vanilla_sr"]), TASKS * CELL)
        out[(*key[:2], f"{key[2]}:mirror")] = one(float(r["mirror_sr"]), 6 * TASKS * CELL)  # type: ignore[arg-type]
    return out


def test_every_table_and_test_of_the_paper_is_present(ref: Reference) -> None:
    shape = {
        "table2": 14,  # 7 configurations x 2 models
        "table3": 7,  # 6 suites + pooled
        "table4": 7,
        "table5": 12,  # 4 configurations x 3 checkpoints
        "table10": 14,  # 7 rows x 2 models
        "table11": 7,
    }
    assert {k: len(v.rows) for k, v in ref.tables.items()} == shape
    cells = sum(
        1
        for t in ref.tables.values()
        for r in t.rows
        for k, v in r.items()
        if isinstance(v, int | float) and k != "checkpoint"
    )
    # Table 2: 12 full rows x 8 numbers + 2 disclosed rows x 4; Tables 3, 4: 7 x 4 and 7 x 5;
    # Table 5: 24; Table 10: 42; Table 11: 7 x 8.
    assert cells == 12 * 8 + 2 * 4 + 7 * 4 + 7 * 5 + 24 + 42 + 56
    assert len(ref.cochran_q) == 10 and ref.bonferroni_tests == 12
    assert ref.family("deepseek-v4-flash") == "deepseek" and ref.family("my-model") is None


def test_table2_sr_cells_are_whole_counts_and_rie_follows(ref: Reference) -> None:
    n_v, n_m = TASKS * CELL, 6 * TASKS * CELL
    for r in ref.table("table2").rows:
        km = one(float(r["mirror_sr"]), n_m)  # type: ignore[arg-type]
        if r["disclosure"] == "disclosed":
            assert r["vanilla_sr"] is None and r["rie_sr"] is None and r["rie_sc"] is None
            continue
        kv = one(float(r["vanilla_sr"]), n_v)  # type: ignore[arg-type]
        assert close(float(r["rie_sr"]), pct(kv, n_v) - pct(km, n_m)), r  # type: ignore[arg-type]
        # Scores are not counts: the RIE is the difference of two rounded means
        assert close(float(r["rie_sc"]), float(r["vanilla_score"]) - float(r["mirror_score"]), 0.1)  # type: ignore[arg-type]


def test_text_figures_pooled_over_models_follow_from_table2(ref: Reference) -> None:
    c = table2_counts(ref)

    def pooled_sr(config: str, side: str) -> float:
        n = (TASKS * CELL if side == "vanilla" else 6 * TASKS * CELL) * 2
        return pct(sum(c[(config, "hidden", f"{m}:{side}")] for m in MODELS), n)

    def pooled(config: str, col: str) -> float:
        return (
            sum(
                float(row(ref, "table2", configuration=config, disclosure="hidden", model=m)[col])
                for m in MODELS
            )
            / 2
        )  # type: ignore[arg-type]

    # "pooled Mirror Scores of 82.3 to 86.8 and SRs of 49.4% to 53.0%" (ReAct, Reflexion, Voyager)
    leading = ["react", "reflexion", "voyager"]
    assert close(min(pooled(a, "mirror_score") for a in leading), 82.3, 0.1)
    assert close(max(pooled(a, "mirror_score") for a in leading), 86.8, 0.1)
    assert close(min(pooled_sr(a, "mirror") for a in leading), 49.4)
    assert close(max(pooled_sr(a, "mirror") for a in leading), 53.0)
    # "ADAM and XENON have the smallest pooled RIE_SC (+2.3 and +2.4)"
    assert close(pooled("adam", "rie_sc"), 2.3) and close(pooled("xenon", "rie_sc"), 2.4)
    rie = {a: pooled_sr(a, "vanilla") - pooled_sr(a, "mirror") for a in CONFIGS}
    assert min(rie, key=lambda a: rie[a]) == "xenon" and close(rie["xenon"], 4.4)
    # "their pooled Mirror SRs of 31.6% and 27.8%"
    assert close(pooled_sr("adam", "mirror"), 31.6) and close(pooled_sr("xenon", "mirror"), 27.8)


def test_table3_from_its_counts_and_table2(ref: Reference) -> None:
    c = table2_counts(ref)
    vanilla_k = sum(c[(a, "hidden", f"{m}:vanilla")] for a, m in product(CONFIGS, MODELS))
    vanilla = pct(vanilla_k, 2 * 6 * TASKS * CELL)  # 1,080 Vanilla episodes
    vanilla_score = (
        sum(
            float(
                row(ref, "table2", configuration=a, disclosure="hidden", model=m)["vanilla_score"]
            )  # type: ignore[arg-type]
            for a, m in product(CONFIGS, MODELS)
        )
        / 12
    )
    per_suite = 2 * 6 * TASKS * CELL
    mirror_k = 0
    for suite in SUITES:
        r = row(ref, "table3", suite=suite)
        ks = counts(float(r["mirror_sr"]), per_suite)  # type: ignore[arg-type]
        assert ks, r
        assert any(close(float(r["rie_sr"]), vanilla - pct(k, per_suite)) for k in ks), r  # type: ignore[arg-type]
        assert close(float(r["rie_sc"]), vanilla_score - float(r["mirror_score"]), 0.15), r  # type: ignore[arg-type]
        mirror_k += ks[0]
    pooled = row(ref, "table3", suite="pooled")
    all_mirror = sum(c[(a, "hidden", f"{m}:mirror")] for a, m in product(CONFIGS, MODELS))
    assert close(float(pooled["mirror_sr"]), pct(all_mirror, 6 * per_suite))  # type: ignore[arg-type]
    assert close(float(pooled["rie_sr"]), vanilla - pct(all_mirror, 6 * per_suite))  # type: ignore[arg-type]
    suite_scores = [float(row(ref, "table3", suite=s)["mirror_score"]) for s in SUITES]  # type: ignore[arg-type]
    assert close(float(pooled["mirror_score"]), sum(suite_scores) / 6, 0.1)  # type: ignore[arg-type]


def test_table4_and_table10_rebuilt_from_react_counts(ref: Reference) -> None:
    c = table2_counts(ref)
    n = TASKS * CELL  # per model, suite and condition
    v = {m: c[("react", "hidden", f"{m}:vanilla")] for m in MODELS}
    assert close(float(ref.table("table4").vanilla_sr or 0), pct(sum(v.values()), 2 * n))
    hidden_total = disclosed_total = 0
    for suite in SUITES:
        h: dict[str, int] = {}
        d: dict[str, int] = {}
        for m in MODELS:
            r = row(ref, "table10", suite=suite, model=m)
            # Hidden and Disclosed successes implied by the model's RIE_SR and Gap
            h[m] = one(pct(v[m], n) - float(r["rie_sr"]), n)  # type: ignore[arg-type]
            d[m] = one(pct(v[m], n) - float(r["gap"]), n)  # type: ignore[arg-type]
            assert close(float(r["delta_sr"]), pct(d[m] - h[m], n)), r  # type: ignore[arg-type]
        t4 = row(ref, "table4", suite=suite)
        both = 2 * n
        assert close(float(t4["hidden_sr"]), pct(sum(h.values()), both)), t4  # type: ignore[arg-type]
        assert close(float(t4["disclosed_sr"]), pct(sum(d.values()), both)), t4  # type: ignore[arg-type]
        vsr = pct(sum(v.values()), both)
        assert close(float(t4["rie_sr"]), vsr - pct(sum(h.values()), both)), t4  # type: ignore[arg-type]
        assert close(float(t4["gap"]), vsr - pct(sum(d.values()), both)), t4  # type: ignore[arg-type]
        assert close(float(t4["delta_sr"]), pct(sum(d.values()) - sum(h.values()), both)), t4  # type: ignore[arg-type]
        hidden_total += sum(h.values())
        disclosed_total += sum(d.values())
    # pooled rows: Table 4 over models and suites; Table 10 per model = Table 2's ReAct rows
    all_n = 6 * 2 * n
    p4 = row(ref, "table4", suite="pooled")
    assert close(float(p4["hidden_sr"]), pct(hidden_total, all_n))  # type: ignore[arg-type]
    assert close(float(p4["disclosed_sr"]), pct(disclosed_total, all_n))  # type: ignore[arg-type]
    assert close(float(p4["delta_sr"]), pct(disclosed_total - hidden_total, all_n))  # type: ignore[arg-type]
    for m in MODELS:
        p10 = row(ref, "table10", suite="pooled", model=m)
        t2 = row(ref, "table2", configuration="react", disclosure="hidden", model=m)
        assert p10["rie_sr"] == t2["rie_sr"]
        hidden = c[("react", "hidden", f"{m}:mirror")]
        disclosed = c[("react", "disclosed", f"{m}:mirror")]
        assert close(float(p10["delta_sr"]), pct(disclosed - hidden, 6 * n))  # type: ignore[arg-type]
        assert close(float(p10["gap"]), pct(v[m], n) - pct(disclosed, 6 * n))  # type: ignore[arg-type]


def _max_half_width(strata: int) -> float:
    """The widest 95% interval of a difference of two SRs with equal-weight strata of 30."""
    return 1.959964 * math.sqrt(strata * (1 / strata) ** 2 * (0.25 / CELL + 0.25 / CELL)) * 100


def test_table11_repeats_tables_3_and_4_with_intervals_the_design_allows(ref: Reference) -> None:
    for suite in [*SUITES, "pooled"]:
        r11 = row(ref, "table11", suite=suite)
        assert r11["all_six_rie_sr"] == row(ref, "table3", suite=suite)["rie_sr"]
        t4 = row(ref, "table4", suite=suite)
        assert (r11["react_rie_sr"], r11["react_gap"], r11["react_delta_sr"]) == (
            t4["rie_sr"],
            t4["gap"],
            t4["delta_sr"],
        )
        if suite != "pooled":
            assert 0 < float(r11["all_six_rie_sr_hw"]) <= _max_half_width(2 * TASKS * 6)  # type: ignore[arg-type]
            for col in ("react_rie_sr_hw", "react_gap_hw", "react_delta_sr_hw"):
                assert 0 < float(r11[col]) <= _max_half_width(2 * TASKS)  # type: ignore[arg-type]
    pooled = row(ref, "table11", suite="pooled")
    # "The pooled cost of not being told the rules, 5.6 points, excludes zero"
    assert float(pooled["react_delta_sr"]) - float(pooled["react_delta_sr_hw"]) > 0  # type: ignore[arg-type]


def test_table5_is_cumulative_and_gives_the_texts_gains(ref: Reference) -> None:
    sr = {
        (r["configuration"], r["checkpoint"]): (float(r["vanilla_sr"]), float(r["mirror_sr"]))  # type: ignore[arg-type]
        for r in ref.table("table5").rows
    }
    for config in ["react", "reflexion", "xenon", "adam"]:
        for side in (0, 1):
            series = [sr[(config, cp)][side] for cp in (100, 150, 200)]
            assert series == sorted(series), (config, side)
    gains = {a: sr[(a, 200)][1] - sr[(a, 100)][1] for a in ["react", "reflexion", "xenon", "adam"]}
    assert {a: round(g, 1) for a, g in gains.items()} == {
        "react": 9.5,
        "reflexion": 8.5,
        "xenon": 49.4,
        "adam": 43.0,
    }
    assert max(["react", "reflexion", "xenon", "adam"], key=lambda a: sr[(a, 200)][1]) == "xenon"


def _p_matches(printed: str, p: float) -> bool:
    if printed.startswith("<"):
        return p < float(printed[1:])
    if printed.startswith(">="):
        return p >= float(printed[2:]) - 0.005
    if printed.startswith(">"):
        return p > float(printed[1:])
    decimals = len(printed.split(".")[1])
    return abs(p - float(printed)) <= 0.5 * 10**-decimals + 1e-12


def test_cochran_q_values_give_their_printed_p(ref: Reference) -> None:
    checked = 0
    for test in ref.cochran_q:
        if test["q"] is None:
            continue
        p = chi2_sf(float(test["q"]), int(test["df"]))  # type: ignore[arg-type]
        assert _p_matches(str(test["p"]), p), test
        checked += 1
    assert checked == 4
    # both M04 tests survive Bonferroni over the 12 within-suite tests
    for model in MODELS:
        m04 = next(t for t in ref.cochran_q if t["suite"] == "M04" and t["model"] == model)
        assert chi2_sf(float(m04["q"]), int(m04["df"])) * (ref.bonferroni_tests or 1) < 0.05  # type: ignore[arg-type]


def test_a_broken_reference_file_is_one_clear_error(tmp_path: Any) -> None:
    bad = tmp_path / "ref.yaml"
    bad.write_text("schema_version: 1\nsource: {title: x}\nmodels: {}\ntables: {t: {title: x}}\n")
    with pytest.raises(ReferenceDataError, match=r"tables\.t\.rows"):
        load_reference(str(bad))
    with pytest.raises(ReferenceDataError, match="cannot read"):
        load_reference(str(tmp_path / "absent.yaml"))


@pytest.mark.parametrize("given", ["missing.md", "no_tables.md"])
def test_the_paper_check_script_refuses_a_wrong_file_in_one_line(tmp_path: Any, given: str) -> None:
    """docs/analysis.md's `scripts/check_reference.py PAPER.md`, given a path that does not
    exist or a file without the paper's tables, printed a traceback."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "no_tables.md").write_text("# Notes\n\nNo tables here.\n", encoding="utf-8")
    script = Path(__file__).resolve().parents[1] / "scripts" / "check_reference.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / given)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert given in done.stderr
