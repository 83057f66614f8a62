"""``analyze --compare paper``: your numbers beside the paper's, row for row, in text, JSON
and the HTML report; rows only one side has are marked and kept."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.analysis.compare import BOTH, PAPER_ONLY, YOURS_ONLY, compare
from mirrorcraft.analysis.paired import SR, PairIndex, rie
from mirrorcraft.analysis.reference import load_reference
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.runner.records import EpisodeRecord
from tests.test_analysis_cli import run_cli
from tests.test_analysis_helpers import make_record, write_db

TASKS = ("iron_armor", "diamond", "enchantment")


def cell(
    wins: int,
    n: int,
    *,
    rules: str = "vanilla",
    task: str = "diamond",
    agent: str = "react",
    model: str = "gemini-3.1-flash-lite",
    disclosure: str = "hidden",
) -> list[EpisodeRecord]:
    """n episodes of one condition (one per world and repetition), ``wins`` of them successes."""
    return [
        make_record(
            world=f"plains-{1 + i % 2}",
            repetition=i // 2,
            rules=rules,
            task=task,
            agent=agent,
            model=model,
            disclosure=disclosure,
            score=100 if i < wins else 0,
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def records() -> list[EpisodeRecord]:
    out: list[EpisodeRecord] = []
    for task in TASKS:
        out += cell(20, 30, task=task)  # react, gemini: Vanilla SR 66.7
        for suite in ("M01", "M04"):
            out += cell(10, 30, task=task, rules=suite)
            out += cell(15, 30, task=task, rules=suite, disclosure="disclosed")
        out += cell(30, 30, task=task, agent="vanilla-planner", model="none")  # not in the paper
        out += cell(5, 30, task=task, model="my-local-model")  # a model no family claims
    return out


@pytest.fixture(scope="module")
def doc(records: list[EpisodeRecord]) -> dict[str, Any]:
    return compare(records, load_reference())


def find(doc: dict[str, Any], table: str, quantity: str, **key: Any) -> dict[str, Any]:
    rows = [
        r
        for r in doc["rows"]
        if r["table"] == table
        and r["quantity"] == quantity
        and all(r["row"].get(k) == v for k, v in key.items())
    ]
    assert len(rows) == 1, (table, quantity, key, rows)
    return rows[0]


def test_models_are_matched_by_family(doc: dict[str, Any]) -> None:
    assert doc["model_families"] == {
        "gemini-3.1-flash-lite": "gemini",
        "none": "none",
        "my-local-model": "my-local-model",
    }
    assert load_reference().family("DeepSeek-Flash") == "deepseek"


def test_a_matched_row_has_your_value_interval_difference_and_coverage(
    doc: dict[str, Any],
) -> None:
    row = find(
        doc, "table2", "vanilla_sr", configuration="react", disclosure="hidden", model="gemini"
    )
    assert row["counterpart"] == BOTH and row["paper"] == 66.7
    assert row["yours"] == pytest.approx(200 / 3) and row["n"] == 90
    # stratified by model and task: three strata of 30 with p = 2/3, weights 1/3
    hw = 1.959964 * math.sqrt(3 * (1 / 3) ** 2 * (2 / 3) * (1 / 3) / 30) * 100
    assert row["yours_hw"] == pytest.approx(hw)
    assert row["difference"] == pytest.approx(200 / 3 - 66.7)
    assert row["paper_in_ci"] is True
    mirror = find(
        doc, "table2", "mirror_sr", configuration="react", disclosure="hidden", model="gemini"
    )
    assert mirror["yours"] == pytest.approx(100 / 3) and mirror["paper"] == 54.8
    assert mirror["paper_in_ci"] is False  # 54.8 is far outside 33.3 ± 7
    rie_row = find(
        doc, "table2", "rie_sr", configuration="react", disclosure="hidden", model="gemini"
    )
    assert rie_row["yours"] == pytest.approx(100 / 3)
    assert rie_row["paper"] == 11.9 and rie_row["difference"] == pytest.approx(100 / 3 - 11.9)


def test_rows_only_one_side_has_are_marked_not_dropped(doc: dict[str, Any]) -> None:
    direct = find(doc, "table2", "vanilla_sr", configuration="direct", model="deepseek")
    assert direct["counterpart"] == PAPER_ONLY and direct["yours"] is None
    planner = find(doc, "table2", "vanilla_sr", configuration="vanilla-planner", model="none")
    assert planner["counterpart"] == YOURS_ONLY and planner["paper"] is None
    assert planner["yours"] == pytest.approx(100.0)
    local = find(doc, "table2", "vanilla_sr", configuration="react", model="my-local-model")
    assert local["counterpart"] == YOURS_ONLY
    # every cell of Table 2 of the paper appears (14 rows; disclosed rows have 4 cells)
    paper_cells = [r for r in doc["rows"] if r["table"] == "table2" and r["paper"] is not None]
    assert len(paper_cells) == 12 * 8 + 2 * 4
    for table in ("table3", "table4", "table5", "table10", "table11", "cochran_q", "text"):
        assert any(r["table"] == table for r in doc["rows"]), table
    counts = doc["counts"]
    assert counts[BOTH] + counts[PAPER_ONLY] + counts[YOURS_ONLY] == len(doc["rows"])


def test_suite_rows_and_the_disclosure_split(
    records: list[EpisodeRecord], doc: dict[str, Any]
) -> None:
    m04 = find(doc, "table3", "rie_sr", suite="M04")
    hidden = [r for r in records if r.disclosure == "hidden" and r.agent == "react"]
    index = PairIndex(hidden)
    expected = rie(index, SR, suites=["M04"])
    assert expected is not None and m04["yours"] == pytest.approx(expected.value)
    assert m04["paper"] == 19.0 and m04["n"] == expected.comparisons
    m02 = find(doc, "table3", "rie_sr", suite="M02")
    assert m02["counterpart"] == PAPER_ONLY  # not run here
    split = {q: find(doc, "table4", q, suite="M04") for q in ("rie_sr", "gap", "delta_sr")}
    assert split["rie_sr"]["yours"] == pytest.approx(
        split["gap"]["yours"] + split["delta_sr"]["yours"]
    )
    assert split["gap"]["yours"] == pytest.approx(200 / 3 - 50)
    assert find(doc, "table4", "disclosed_sr", suite="M04")["yours"] == pytest.approx(50.0)
    by_model = find(doc, "table10", "gap", suite="M04", model="gemini")
    assert by_model["counterpart"] == BOTH and by_model["paper"] == 27.8
    t11 = find(doc, "table11", "all_six_rie_sr", suite="M04")
    assert t11["paper_hw"] == 2.9 and t11["yours_hw"] > 0


def test_analyze_compare_prints_the_side_by_side_tables(
    tmp_path: Path, records: list[EpisodeRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    db = write_db(tmp_path / "r.db", records)
    code, out, err = run_cli(["analyze", str(db), "--compare", "paper"], capsys)
    assert code == 0 and err == ""
    assert "your models by paper family: gemini-3.1-flash-lite -> gemini" in out
    assert "Table 2: Results by configuration and disclosure condition, beside yours" in out
    line = next(
        x for x in out.splitlines() if x.startswith("react, hidden, gemini") and "Vanilla SR" in x
    )
    assert line.split()[-7:] == ["66.7", "66.7", "[56.9,", "76.4]", "0.0", "yes", "both"]
    assert "paper only" in out and "yours only" in out
    code, out, _ = run_cli(["analyze", str(db), "--compare", "paper", "--json"], capsys)
    parsed = json.loads(out)
    assert parsed["schema"] == "mirrorcraft.compare/1" and parsed["rows"]


def test_a_bad_reference_is_one_clear_error(
    tmp_path: Path, records: list[EpisodeRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    db = write_db(tmp_path / "r.db", records[:10])
    code, _out, err = run_cli(
        ["analyze", str(db), "--compare", str(tmp_path / "nope.yaml")], capsys
    )
    assert code == 2 and "cannot read reference file" in err and "Traceback" not in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 3\n")
    code, _out, err = run_cli(["analyze", str(db), "--compare", str(bad)], capsys)
    assert code == 2 and "bad.yaml" in err and len(err.strip().splitlines()) == 1


def test_the_report_has_the_side_by_side_page(
    tmp_path: Path, records: list[EpisodeRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    db = write_db(tmp_path / "r.db", records)
    out = tmp_path / "report"
    code, _o, err = run_cli(["report", str(db), "--out", str(out), "--no-viewer"], capsys)
    assert code == 0, err
    page = (out / "compare.html").read_text()
    assert "Table 4: ReAct SR with hidden or disclosed rules by suite, beside yours" in page
    assert "paper only" in page and "yours only" in page and "Paper in your CI" in page
    index = (out / "index.html").read_text()
    assert 'href="compare.html"' in index and "Beside the paper: overview" in index
    assert json.loads((out / "compare.json").read_text())["rows"]
    plain = tmp_path / "plain"
    code, _o, _e = run_cli(
        ["report", str(db), "--out", str(plain), "--compare", "none", "--no-viewer"], capsys
    )
    assert code == 0 and not (plain / "compare.html").exists()


def test_a_zero_width_interval_does_not_place_the_paper_outside_it() -> None:
    """Two pairs whose episodes all succeed: your binomial intervals have zero width, which
    tests nothing, so the paper's value is neither inside nor outside them."""
    recs = cell(2, 2) + cell(2, 2, rules="M01")
    doc = compare(recs, load_reference())
    for table, quantity in (("table3", "mirror_sr"), ("table3", "rie_sr")):
        row = find(doc, table, quantity, suite="M01")
        assert row["counterpart"] == BOTH and row["paper"] is not None
        assert row["yours_hw"] == 0.0
        assert row["paper_in_ci"] is None
    assert doc["counts"]["with_interval"] == 0
    from mirrorcraft.report.compare_tables import comparison_tables

    t3 = next(t for t in comparison_tables(doc) if t.key == "compare_table3")
    assert any("zero width" in n for n in t3.notes)


def test_the_oracle_control_enters_no_compared_number() -> None:
    """The oracle is told the rules in force: it is a control, never one of the configurations
    evaluated without rule descriptions that Table 3 pools, nor a member of a compared set."""
    recs: list[EpisodeRecord] = []
    for task in ("iron_armor", "diamond"):
        for agent in ("vanilla-planner", "adaptive-planner"):
            recs += cell(4, 4, task=task, agent=agent, model="none")
            recs += cell(1, 4, task=task, agent=agent, model="none", rules="M01")
        recs += cell(4, 4, task=task, agent="oracle", model="none")
        recs += cell(4, 4, task=task, agent="oracle", model="none", rules="M01")
    doc = compare(recs, load_reference())
    # Table 3 over the two planners only: Vanilla 16/16, M01 4/16 successes, so the Mirror SR
    # is 25% and RIE_SR 75 points (with the oracle's 8 of 8 in M01 they would be 50% and 50).
    assert find(doc, "table3", "mirror_sr", suite="M01")["yours"] == pytest.approx(25.0)
    assert find(doc, "table3", "rie_sr", suite="M01")["yours"] == pytest.approx(75.0)
    assert find(doc, "table11", "all_six_rie_sr", suite="M01")["yours"] == pytest.approx(75.0)
    assert not any(r["row"].get("configuration") == "oracle" for r in doc["rows"])
    assert doc["model_families"] == {"none": "none"}
    # the compare page and `analyze` agree on the within-suite test (two planners, not three)
    analysed = summarize(recs)["within_suite"]["tests"]
    assert [t["agents"] for t in analysed] == [["vanilla-planner", "adaptive-planner"]]
    assert compare(recs, load_reference()) == compare(
        [r for r in recs if r.agent != "oracle"], load_reference()
    )


def test_table5_averages_the_tasks_over_the_same_trajectories() -> None:
    """Table 5 is SR at checkpoints of the same trajectories, averaged over tasks: Diamond
    with four episodes weighs as much as Iron Armor with two, and an episode whose budget
    stops short of 200 actions is not one of the trajectories."""
    recs: list[EpisodeRecord] = []
    steps = {"diamond": (90, 120, 190, None), "iron_armor": (50, None)}
    for task, reached in steps.items():
        for rep, step in enumerate(reached):
            trace = [0] * (step - 1) + [100] if step else [35 if task == "iron_armor" else 25] * 200
            recs.append(
                make_record(
                    task=task,
                    repetition=rep,
                    trace=trace,
                    budget=200,
                    model="gemini-3.1-flash-lite",
                )
            )
    # a shorter run of the same configuration that succeeds at once: not a 200-action trajectory
    recs.append(make_record(task="iron_armor", repetition=9, trace=[100], budget=150,
                            model="gemini-3.1-flash-lite"))  # fmt: skip
    doc = compare(recs, load_reference())

    def sr(cp: int) -> dict[str, Any]:
        return find(
            doc, "table5", "vanilla_sr", configuration="react", model="gemini", checkpoint=cp
        )

    # Diamond 1/4, 2/4, 3/4 of its episodes by actions 100, 150, 200; Iron Armor 1/2 throughout
    assert sr(100)["yours"] == pytest.approx((25 + 50) / 2)
    assert sr(150)["yours"] == pytest.approx((50 + 50) / 2)
    assert sr(200)["yours"] == pytest.approx((75 + 50) / 2)
    # the interval is stratified by task: (p(1-p)/n summed over the tasks) / 2**2
    hw = 1.959964 * math.sqrt((0.25 * 0.75 / 4 + 0.5 * 0.5 / 2) / 4) * 100
    assert sr(100)["yours_hw"] == pytest.approx(hw) and sr(100)["n"] == 6


def test_an_unbalanced_run_shows_the_numbers_analyze_shows() -> None:
    """A partial run (a repetition never rerun, a pair missing in one suite): the Vanilla,
    Mirror, Hidden and Disclosed columns beside the paper are the ones `analyze` prints, the
    means over the comparisons of the row's RIE, so Vanilla - Mirror = RIE and Disclosed -
    Hidden = delta SR there too (they were plain means over every episode: 60.0 beside
    `analyze`'s 58.3)."""
    model = "gemini-3.1-flash-lite"

    def eps(world: str, rules: str, scores: list[int], disclosure: str = "hidden") -> list[Any]:
        return [
            make_record(world=world, rules=rules, model=model, disclosure=disclosure,
                        repetition=i, score=s)
            for i, s in enumerate(scores)
        ]  # fmt: skip

    recs = (
        eps("plains-1", "vanilla", [100, 70])
        + eps("plains-1", "M01", [100, 25])
        + eps("plains-1", "M01", [100, 100, 25], "disclosed")
        + eps("plains-2", "vanilla", [100, 100])
        + eps("plains-2", "M04", [100, 25, 100])
        + eps("plains-2", "M01", [25])
        + eps("plains-3", "M01", [100, 100, 100])  # no Vanilla twin
    )
    doc = compare(recs, load_reference())
    summary = summarize(recs)
    react = next(
        r
        for r in summary["configurations"]
        if r["agent"] == "react" and r["disclosure"] == "hidden"
    )
    key = {"configuration": "react", "disclosure": "hidden", "model": "gemini"}
    row = {q: find(doc, "table2", q, **key) for q in ("vanilla_sr", "mirror_sr", "rie_sr")}
    assert row["mirror_sr"]["yours"] == pytest.approx(react["mirror"]["sr"])
    assert row["vanilla_sr"]["yours"] == pytest.approx(react["vanilla"]["sr"])
    assert row["vanilla_sr"]["yours"] - row["mirror_sr"]["yours"] == pytest.approx(
        row["rie_sr"]["yours"]
    )
    assert find(doc, "table2", "mirror_score", **key)["yours"] == pytest.approx(
        react["mirror"]["score"]
    )
    for suite in summary["suites"]:
        mirror = find(doc, "table3", "mirror_sr", suite=suite["suite"])
        assert mirror["yours"] == pytest.approx(suite["mirror"]["sr"]), suite["suite"]
    split = next(r for r in summary["disclosure"] if r["suite"] == "M01")
    hidden = find(doc, "table4", "hidden_sr", suite="M01")["yours"]
    disclosed = find(doc, "table4", "disclosed_sr", suite="M01")["yours"]
    assert (hidden, disclosed) == (pytest.approx(split["hidden_sr"]), pytest.approx(
        split["disclosed_sr"]))  # fmt: skip
    assert disclosed - hidden == pytest.approx(
        find(doc, "table4", "delta_sr", suite="M01")["yours"]
    )
    assert find(doc, "table4", "vanilla_sr", suite="vanilla")["yours"] == pytest.approx(
        split["vanilla_sr"]
    )


def test_an_interval_past_0_or_100_is_shown_cut_and_marked() -> None:
    """A Vanilla SR of 3 in 4: the Wald interval is [32.6, 117.4], and the compare view
    printed it so, an SR above 100%. The view now shows [32.6, 100.0] (clipped) with a note;
    the JSON keeps the raw ends and says that they were cut."""
    recs = cell(3, 4) + cell(1, 4, rules="M01")
    doc = compare(recs, load_reference())
    key = {"configuration": "react", "disclosure": "hidden", "model": "gemini"}
    row = find(doc, "table2", "vanilla_sr", **key)
    assert row["yours_high"] == pytest.approx(117.4, abs=0.05)  # raw, as computed
    assert row["yours_clipped"] is True
    mirror = find(doc, "table2", "mirror_sr", **key)  # 25% over 4: [-17.4, 67.4]
    assert mirror["yours_low"] < 0 and mirror["yours_clipped"] is True
    assert find(doc, "table2", "actions", **key)["yours_clipped"] is False
    from mirrorcraft.report.compare_tables import comparison_tables
    from mirrorcraft.report.render import render_text

    t2 = next(t for t in comparison_tables(doc) if t.key == "compare_table2")
    text = render_text(t2)
    assert "[32.6, 100.0] (clipped)" in text and "[0.0, 67.4] (clipped)" in text
    assert "117.4" not in text and "-17.4" not in text
    assert any(n.startswith("(clipped):") for n in t2.notes)
