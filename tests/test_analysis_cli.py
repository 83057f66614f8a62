"""``mirrorcraft analyze``: text and JSON output, degenerate inputs, one-line errors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from mirrorcraft import cli
from mirrorcraft.commands import COMMANDS, analyze_cmd, report_cmd
from tests.test_analysis_helpers import make_record, synthetic_study, write_db, write_jsonl


def run_cli(argv: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the real ``mirrorcraft`` entry point with analyze and report registered."""
    missing = [m for m in (analyze_cmd, report_cmd) if m not in COMMANDS]
    COMMANDS.extend(missing)  # the list the CLI builds its parser from
    try:
        code = cli.main(list(argv))
    finally:
        for module in missing:
            COMMANDS.remove(module)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def study_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    records, steps = synthetic_study(seed=5, worlds=("plains-1", "savanna-2"), reps=1)
    return write_db(tmp_path_factory.mktemp("cli") / "study.db", records, steps)


def test_text_output_has_every_section(study_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["analyze", str(study_db)], capsys)
    assert code == 0 and err == ""
    for title in (
        "Results by configuration and model",
        "Mirror performance and RIE by rule suite",
        "Disclosure split for react, pooled",
        "Disclosure split for react by model",
        "results by task",
        "results by biome",
        "results by model",
        "Estimates with 95% intervals",
        "Immediate Repeat Rate",
        "Recovery Latency",
        "Cochran's Q across compared configurations",
    ):
        assert title in out, title
    assert "horizon: no episode budget reaches" in out
    assert "unknown" in out  # xenon with deepseek has no known cost


def test_json_output_keys_are_stable(study_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["analyze", str(study_db), "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == [
        "schema",
        "strata",
        "episodes",
        "configurations",
        "suites",
        "breakdowns",
        "configuration_suites",
        "disclosure",
        "disclosure_tests",
        "within_suite",
        "horizon",
        "diagnostics",
        "controls",
        "accumulation",
        "usage",
    ]
    assert doc["schema"] == "mirrorcraft.analysis/2"
    row = doc["configurations"][0]
    assert set(row) == {
        "configuration", "agent", "disclosure", "model", "paired", "vanilla", "mirror",
        "unpaired", "rie_sc", "rie_sc_ci", "rie_sr", "rie_sr_ci", "comparisons", "actions",
        "cost_usd", "cost_unknown", "paid_calls", "cached_calls", "prompt_tokens",
        "completion_tokens", "cost_estimated",
    }  # fmt: skip
    assert set(row["rie_sr_ci"]) == {"half_width", "low", "high", "half_width_ac", "degenerate"}
    assert set(doc["within_suite"]) == {
        "threshold", "tasks", "compared", "rie", "tests", "family_size", "family",
    }  # fmt: skip
    assert doc["suites"][-1]["suite"] == "pooled"
    assert set(doc["breakdowns"]) == {"task", "biome", "model"}


def test_the_reading_of_the_papers_strata_is_an_option(
    study_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """App. C's intervals are "stratified by model and task" with "30 episodes per cell":
    the default keeps each configuration its own stratum, ``--strata model-task`` pools the
    configurations of a model and task. Only estimates that pool configurations move."""
    docs = {}
    for strata in ("configuration", "model-task"):
        code, out, err = run_cli(["analyze", str(study_db), "--json", "--strata", strata], capsys)
        assert code == 0 and err == ""
        docs[strata] = json.loads(out)
        assert docs[strata]["strata"] == strata
    per_cell, literal = docs["configuration"], docs["model-task"]
    assert (
        run_cli(["analyze", str(study_db), "--json"], capsys)[1]
        == json.dumps(per_cell, indent=1) + "\n"
    )  # the default is the per-configuration reading
    widths = [
        (a["rie_sr_ci"]["half_width"], b["rie_sr_ci"]["half_width"])
        for a, b in zip(per_cell["suites"], literal["suites"], strict=True)
    ]
    # three configurations pooled in every suite row: the literal reading's stratum also
    # holds the spread between them, so no interval is narrower and some are wider
    assert all(lit >= cell - 1e-9 for cell, lit in widths)
    assert any(lit > cell * 1.01 for cell, lit in widths)
    assert [r["rie_sr"] for r in per_cell["suites"]] == [r["rie_sr"] for r in literal["suites"]]
    # one configuration and model per row: the two readings are the same strata
    assert per_cell["configurations"] == literal["configurations"]
    assert per_cell["within_suite"]["tests"] == literal["within_suite"]["tests"]
    code, out, _ = run_cli(["analyze", str(study_db), "--strata", "model-task"], capsys)
    assert code == 0 and "stratified by model and task, configurations pooled" in out
    with pytest.raises(SystemExit) as exited:
        run_cli(["analyze", str(study_db), "--strata", "task"], capsys)
    assert exited.value.code == 2 and "invalid choice: 'task'" in capsys.readouterr().err


def test_horizon_table_when_budgets_allow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, _ = synthetic_study(
        seed=2, models=("m",), agents=("react", "xenon"), suites=("M01",), budget_override=200
    )
    path = write_jsonl(tmp_path / "h.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert "Cumulative SR (%) at action checkpoints" in out
    assert "Vanilla @100" in out and "Mirror @200" in out
    code, out, _ = run_cli(["analyze", str(path), "--checkpoints", "10,20"], capsys)
    assert "Vanilla @10" in out and "@100" not in out


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_empty_input_is_an_error_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    out_dir = ["--out", str(tmp_path / "out")] if command == "report" else []
    code, out, err = run_cli([command, str(empty), *out_dir], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "empty.jsonl: nothing to analyse: it holds no episode records" in err
    assert "--allow-empty" in err
    code, out, err = run_cli([command, str(empty), "--allow-empty", *out_dir], capsys)
    assert code == 0 and err == ""
    if command == "analyze":
        assert "0 episodes" in out and "no evaluation episodes" in out
        code, out, _ = run_cli(["analyze", str(empty), "--json", "--allow-empty"], capsys)
        assert json.loads(out)["configurations"] == []
    # a database whose only rows are infrastructure faults is empty too, and says so
    record = make_record()
    db = write_db(tmp_path / "faults.db", [record], status={record.episode_id: "infra_fault"})
    code, _, err = run_cli(["analyze", str(db)], capsys)
    assert code == 2 and "all 1 record(s) were left out" in err


def test_vanilla_only_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vanilla = write_jsonl(
        tmp_path / "v.jsonl",
        [
            make_record(task="iron_armor", score=100),
            make_record(task="iron_armor", score=35, repetition=1),
        ],
    )
    code, out, err = run_cli(["analyze", str(vanilla)], capsys)
    assert code == 0 and err == ""
    line = next(x for x in out.splitlines() if x.startswith("react "))
    assert line.split()[:4] == ["react", "m1", "67.5", "50.0"]
    assert "–" in line  # Mirror cells are missing, not zero
    assert "no Mirror episodes" in out


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_corrupt_database_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    bad = tmp_path / "results.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x13" * 4096)
    argv = [command, str(bad)] + (["--out", str(tmp_path / "out")] if command == "report" else [])
    code, out, err = run_cli(argv, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("mirrorcraft: error: ")
    assert "results.db" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_malformed_jsonl_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(make_record().to_json()) + "\n{broken\n", encoding="utf-8")
    argv = [command, str(path)] + (["--out", str(tmp_path / "out")] if command == "report" else [])
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert err.count("\n") == 1 and "r.jsonl:2: unreadable episode record: not valid JSON" in err


def test_bad_options_are_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", [make_record()])
    code, _, err = run_cli(["analyze", str(path), "--checkpoints", "x"], capsys)
    assert code == 2 and "--checkpoints" in err
    code, _, err = run_cli(["analyze", str(path), "--threshold", "120"], capsys)
    assert code == 2 and "--threshold" in err
    code, _, err = run_cli(["analyze", str(tmp_path / "nope.db")], capsys)
    assert code == 2 and "no such results file" in err


@pytest.mark.parametrize("command", ["analyze", "report"])
@pytest.mark.parametrize("value", ["", " , ", ",", "0,100"])
def test_an_explicit_empty_or_bad_checkpoints_value_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, value: str
) -> None:
    """``--checkpoints ""`` (an unset shell variable) quietly gave the default checkpoints."""
    path = write_jsonl(tmp_path / "r.jsonl", [make_record()])
    out = ["--out", str(tmp_path / "out")] if command == "report" else []
    code, text, err = run_cli([command, str(path), "--checkpoints", value, *out], capsys)
    assert code == 2 and text == ""
    assert err.count("\n") == 1 and "--checkpoints" in err and repr(value) in err
    assert not (tmp_path / "out").exists()


def test_a_split_without_vanilla_runs_says_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Disclosed-only input titled its split table "(Vanilla SR –%)": a number's sign where
    the table should say that there is no Vanilla run to split against."""
    disclosed = [
        make_record(rules=s, disclosure="disclosed", world=f"plains-{w}", score=100 * (w % 2))
        for s in ("M01", "M04")
        for w in (1, 2)
    ]
    hidden = [make_record(rules=r.rules, world=r.world, score=25) for r in disclosed]
    for records, said in (
        (disclosed, "(no Vanilla SR: react has no Vanilla or hidden-rule episodes)"),
        (disclosed + hidden, "(no Vanilla SR: react has no Vanilla episodes)"),
    ):
        path = write_jsonl(tmp_path / "r.jsonl", records)
        code, out, _ = run_cli(["analyze", str(path)], capsys)
        assert code == 0 and said in out and "–%" not in out


def test_printed_values_round_half_away_from_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """5 successes in 16 episodes is an SR of exactly 31.25%: the tables printed 31.2
    (Python rounds a tie half to even), where the paper rounds to the displayed precision,
    31.3. Text, Markdown, CSV and HTML agree; the JSON keeps 31.25."""
    from mirrorcraft.report.render import render_csv, render_html, render_markdown

    records = [
        make_record(world=f"plains-{i}", score=100 if i < 5 else 25, cost=0.0125) for i in range(16)
    ]
    path = write_jsonl(tmp_path / "r.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    line = next(x for x in out.splitlines() if x.startswith("react "))
    assert code == 0 and "31.3" in line.split() and "31.2" not in line.split()
    code, out, _ = run_cli(["analyze", str(path), "--json"], capsys)
    assert json.loads(out)["configurations"][0]["vanilla"]["sr"] == 31.25
    from mirrorcraft.report.render import Table, num, pvalue, signed

    assert (num(2.675, 2), num(-31.25), signed(0.05), pvalue(0.0125)) == (
        "2.68", "-31.3", "+0.1", "0.013",
    )  # fmt: skip
    table = Table("t", "T", ["a", "b"], [["x", num(31.25)]])
    for rendered in (render_markdown(table), render_csv(table), render_html(table)):
        assert "31.3" in rendered and "31.2" not in rendered


def _four_episode_spec(tmp_path: Path) -> Path:
    """A grid spec of four short episodes (random agent, two rule sets, two repetitions)."""
    import yaml

    spec = tmp_path / "spec.yaml"
    doc = {
        "schema_version": 1,
        "name": "short",
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M04"],
        "tasks": ["iron_armor"],
        "agents": ["random"],
        "repetitions": 2,
        "budget": 3,
    }
    spec.write_text(yaml.safe_dump(doc))
    return spec


def test_a_run_cut_short_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Tables from a ``--limit`` run used to read like a finished experiment's."""
    spec = _four_episode_spec(tmp_path)
    out = tmp_path / "out"
    base = ["run", str(spec), "--out", str(out), "--workers", "1", "--no-report"]
    assert run_cli([*base, "--limit", "3"], capsys)[0] == 0
    db = str(out / "results.sqlite")
    code, text, _ = run_cli(["analyze", db], capsys)
    assert code == 0 and "not run yet: 1 of the 4 episodes its spec plans" in text
    code, text, _ = run_cli(["analyze", db, "--json"], capsys)
    assert json.loads(text)["episodes"]["unfinished"] == {"missing": 1, "planned": 4}
    assert run_cli(base, capsys)[0] == 0  # the rest run; nothing is missing any more
    code, text, _ = run_cli(["analyze", db], capsys)
    assert code == 0 and "not run yet" not in text
    code, text, _ = run_cli(["analyze", db, "--json"], capsys)
    assert json.loads(text)["episodes"]["unfinished"] == {"missing": 0, "planned": 4}


def test_a_report_of_a_run_cut_short_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's own report and ``mirrorcraft report`` said nothing of missing episodes."""
    spec = _four_episode_spec(tmp_path)
    out = tmp_path / "out"
    base = ["run", str(spec), "--out", str(out), "--workers", "1"]
    assert run_cli([*base, "--limit", "3"], capsys)[0] == 0
    said = "not run yet: 1 of the 4 episodes its spec plans"
    report = out / "report"
    assert said in (report / "index.html").read_text(encoding="utf-8")
    stored = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert stored["episodes"]["unfinished"] == {"missing": 1, "planned": 4}
    again = tmp_path / "again"
    db = str(out / "results.sqlite")
    assert run_cli(["report", db, "--out", str(again), "--no-viewer"], capsys)[0] == 0
    assert said in (again / "index.html").read_text(encoding="utf-8")
    assert run_cli(base, capsys)[0] == 0  # the rest run: the report no longer says it
    assert "not run yet" not in (report / "index.html").read_text(encoding="utf-8")
    stored = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert stored["episodes"]["unfinished"] == {"missing": 0, "planned": 4}


def test_records_of_different_budgets_put_together_are_noted_as_pooled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exports of runs with different budgets, put in one file, were pooled in one table row
    with nothing said: the text, the JSON and the report now name the task and budgets."""
    records = [
        make_record(rules=rules, budget=budget, score=score)
        for budget in (50, 60)
        for rules, score in (("vanilla", 100), ("M01", 25))
    ]
    path = write_jsonl(tmp_path / "mixed.jsonl", records)
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert "note: mixed budgets: episodes of one task ran with different action budgets " in out
    assert "(diamond at 50, 60)" in out and "analyse each budget's records apart" in out
    code, out, _ = run_cli(["analyze", str(path), "--json"], capsys)
    assert json.loads(out)["episodes"]["mixed_budgets"] == {"diamond": [50, 60]}
    one = write_jsonl(tmp_path / "one.jsonl", records[:2])
    code, out, _ = run_cli(["analyze", str(one)], capsys)
    assert code == 0 and "mixed budgets" not in out
    code, out, _ = run_cli(["analyze", str(one), "--json"], capsys)
    assert json.loads(out)["episodes"]["mixed_budgets"] == {}
