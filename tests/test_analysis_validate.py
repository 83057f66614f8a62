"""Records that contradict themselves are refused (exit 2, naming where) or left out with
``--skip-invalid``; infrastructure records are left out and counted; empty input is refused."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.analysis.loading import RecordsError, load_results
from mirrorcraft.analysis.validate import Declared
from mirrorcraft.runner.records import EpisodeRecord, StepRecord
from tests.test_analysis_cli import run_cli
from tests.test_analysis_helpers import make_record, synthetic_study, write_db

GOOD = make_record(task="iron_armor", trace=[0, 15, 35, 35], world="plains-1")


def _doc(**change: Any) -> dict[str, Any]:
    doc = GOOD.to_json()
    doc.update(change)
    return doc


def _jsonl(tmp_path: Path, *docs: dict[str, Any]) -> Path:
    path = tmp_path / "r.jsonl"
    good = make_record(task="iron_armor", score=100, world="taiga-1").to_json()
    lines = [json.dumps(good)] + [json.dumps(d) for d in docs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _refused(tmp_path: Path, doc: dict[str, Any]) -> str:
    with pytest.raises(RecordsError) as info:
        load_results(_jsonl(tmp_path, doc))
    message = str(info.value)
    assert "r.jsonl:2: inconsistent episode record: " in message
    return message


def test_the_good_record_passes(tmp_path: Path) -> None:
    assert len(load_results(_jsonl(tmp_path, _doc())).records) == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"score": 65}, "score 65 but the recorded milestones give 35"),
        ({"success": True}, "success is true but score is 35"),
        (
            {"milestones": {**GOOD.milestones, "story/smelt_iron": 4}},
            "score 35 but the recorded milestones give 65",
        ),
        (
            {"milestones": {**GOOD.milestones, "minecraft:story/obtain_armor": 4}},
            "",  # replaced below with the task's own final advancement
        ),
        ({"budget": 3}, "actions_used 4 is outside 0..budget 3"),
        ({"score_trace": [0, 15, 35]}, "score_trace has 3 entries for 4 actions"),
        ({"signatures": [["wait"]] * 5}, "signatures has 5 entries for 4 actions"),
        ({"score_trace": [0, 35, 35, 35]}, "score_trace says 35 after action 2"),
        ({"milestones": {"story/mine_stone": 9, "story/upgrade_tools": 3}}, "outside 0..4"),
        ({"encounters": [{"step": 7, "rule": "x", "kind": "craft", "signature": []}]}, "1..4"),
        ({"termination": "success"}, "termination 'success' but success is false"),
        ({"rules": "Vanilla"}, "did you mean 'vanilla'?"),
        ({"rules": "m04"}, "did you mean 'M04'?"),
        ({"rules": "M07"}, "rules 'M07' is not a known rule set"),
        ({"is_mirror": True}, "is_mirror is true but rules is 'vanilla'"),
        ({"task": "Diamond"}, "did you mean 'diamond'?"),
        ({"agent": "ReAct"}, "did you mean 'react'?"),
        ({"agent": "gpt-agent"}, "declare one with --agent"),
        ({"termination": "Budget"}, "did you mean 'budget'?"),
        ({"termination": "crashed"}, "termination 'crashed' is not a known outcome or fault"),
        ({"disclosure": "disclosed"}, "a Vanilla episode cannot have disclosed rules"),
        (
            {"ruleset_fingerprint": "aaa", "vanilla_fingerprint": "bbb"},
            "rule-set fingerprint is not the vanilla one",
        ),
        ({"model_calls": 2, "cached_calls": 3}, "cached_calls 3 exceeds model_calls 2"),
        ({"estimated_calls": 1}, "estimated_calls 1 exceeds model_calls 0"),
        ({"cost_usd": -5}, "cost_usd -5 is negative"),  # was averaged into Cost as -5.0
    ],
)
def test_each_inconsistency_is_refused_by_line(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    if not message:  # the final advancement of Iron Armor without success
        from mirrorcraft.evaluator.tasks import get_task

        final = get_task("iron_armor").final.advancement
        change = {"milestones": {**GOOD.milestones, final: 4}}
        message = f"the final advancement {final} was reached but success is false"
    assert message in _refused(tmp_path, _doc(**change))


def test_one_world_has_one_biome(tmp_path: Path) -> None:
    other = _doc(episode_id="x2", biome="jungle", repetition=1)
    with pytest.raises(RecordsError, match="world 'plains-1' has biome 'jungle' here but 'plains'"):
        load_results(_jsonl(tmp_path, _doc(), other))


def test_user_rule_sets_are_declared_or_recorded_by_the_runner(tmp_path: Path) -> None:
    custom = _doc(rules="my-pack", is_mirror=True)  # a Mirror rule set
    with pytest.raises(RecordsError, match="declare a user rule set with --rule-set"):
        load_results(_jsonl(tmp_path, custom))
    loaded = load_results(_jsonl(tmp_path, custom), declared=Declared(frozenset({"my-pack"})))
    assert {r.rules for r in loaded.records} == {"vanilla", "my-pack"}
    # a rule set the runner loaded carries a fingerprint other than vanilla's
    recorded = _doc(
        rules="packs/my.zip", is_mirror=True, ruleset_fingerprint="f1", vanilla_fingerprint="f0"
    )
    assert len(load_results(_jsonl(tmp_path, recorded)).records) == 2
    # an agent declared by the user, and the accumulation runner's labelled names
    assert load_results(
        _jsonl(tmp_path, _doc(agent="mine")), declared=Declared(agents=frozenset({"mine"}))
    )
    assert load_results(_jsonl(tmp_path, _doc(agent="mineevolve:full@3")))


def test_database_step_rows_must_match_actions_used(tmp_path: Path) -> None:
    records, steps = synthetic_study(
        seed=1, models=("m",), agents=("react",), worlds=("plains-1",), suites=("M01",), reps=1
    )
    victim = records[0]
    short = {**steps, victim.episode_id: steps[victim.episode_id][:-1]}
    path = write_db(tmp_path / "r.db", records, short)
    # A step row deleted after the run: left out and counted (the runner reruns it).
    loaded = load_results(path)
    assert victim.episode_id not in {r.episode_id for r in loaded.records}
    assert loaded.excluded == {"trace_mismatch": 1}
    n = victim.actions_used
    renumbered: dict[str, list[StepRecord]] = {
        **steps,
        victim.episode_id: [
            StepRecord(**{**s.to_json(), "step": s.step + 1}) for s in steps[victim.episode_id]
        ],
    }
    with pytest.raises(RecordsError, match=f"numbered 2..{n + 1} instead of 1..{n}"):
        load_results(write_db(tmp_path / "s.db", records, renumbered))
    # a database without any step rows (traces absent) is accepted
    assert len(load_results(write_db(tmp_path / "t.db", records)).records) == len(records)


def test_inconsistent_database_record_names_the_episode(tmp_path: Path) -> None:
    bad = make_record(task="iron_armor", score=100, world="taiga-1")
    bad.success = False
    path = write_db(tmp_path / "r.db", [GOOD, bad])
    with pytest.raises(RecordsError, match=rf"r\.db: episode '{bad.episode_id}': inconsistent"):
        load_results(path)


def test_infrastructure_terminations_in_jsonl_are_left_out_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    faults = [
        _doc(episode_id=f"f{i}", termination=kind, score=0, success=False, milestones={})
        for i, kind in enumerate(("infra_fault", "disconnected", "disconnected"))
    ]
    path = _jsonl(tmp_path, _doc(), *faults)
    loaded = load_results(path)
    assert len(loaded.records) == 2
    assert loaded.excluded == {"disconnected": 2, "infra_fault": 1}
    code, out, _ = run_cli(["analyze", str(path)], capsys)
    assert code == 0
    assert "left out: 2 infrastructure record(s) (disconnected), never scored" in out
    assert "2 episodes (2 Vanilla" in out
    code, out, _ = run_cli(["analyze", str(path), "--json"], capsys)
    assert json.loads(out)["episodes"]["excluded"] == {"disconnected": 2, "infra_fault": 1}


def _mixed(tmp_path: Path) -> Path:
    return _jsonl(
        tmp_path,
        _doc(),
        _doc(episode_id="bad-1", score=65),
        _doc(episode_id="bad-2", rules="Vanilla"),
    )


@pytest.mark.parametrize("command", ["analyze", "report"])
def test_cli_refuses_inconsistent_records_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out_dir = ["--out", str(tmp_path / "out")] if command == "report" else []
    code, out, err = run_cli([command, str(_mixed(tmp_path)), *out_dir], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "r.jsonl:3: inconsistent episode record: score 65" in err
    assert "(1 more record(s) like it; --skip-invalid leaves them out)" in err
    assert not (tmp_path / "out").exists()


def test_skip_invalid_reports_and_leaves_them_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _mixed(tmp_path)
    code, out, err = run_cli(["analyze", str(path), "--skip-invalid"], capsys)
    assert code == 0 and err == ""
    assert "left out: 2 inconsistent record(s) (--skip-invalid):" in out
    assert "r.jsonl:3: score 65 but the recorded milestones give 35" in out
    assert "r.jsonl:4: rules 'Vanilla' is not a known rule set" in out
    assert "2 episodes (2 Vanilla" in out
    code, out, _ = run_cli(["analyze", str(path), "--skip-invalid", "--json"], capsys)
    doc = json.loads(out)
    assert [i["episode_id"] for i in doc["episodes"]["invalid"]] == ["bad-1", "bad-2"]
    assert doc["configurations"][0]["vanilla"]["episodes"] == 2
    code, out, _ = run_cli(
        ["report", str(path), "--skip-invalid", "--out", str(tmp_path / "rep")], capsys
    )
    assert code == 0
    html = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "2 inconsistent record(s) left out" in html


def test_every_record_left_out_is_still_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_doc(score=65)) + "\n", encoding="utf-8")
    code, _, err = run_cli(["analyze", str(path), "--skip-invalid"], capsys)
    assert code == 2 and "all 1 record(s) were left out" in err
    code, out, _ = run_cli(["analyze", str(path), "--skip-invalid", "--allow-empty"], capsys)
    assert code == 0 and "left out: 1 inconsistent record(s)" in out


def test_as_a_user_meets_it_in_a_subprocess(tmp_path: Path) -> None:
    path = _mixed(tmp_path)
    cmd = [sys.executable, "-m", "mirrorcraft.cli", "analyze", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("mirrorcraft: error: ") and "Traceback" not in done.stderr
    done = subprocess.run(
        [*cmd, "--skip-invalid"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and "left out: 2 inconsistent record(s)" in done.stdout


def test_records_written_by_the_test_helpers_are_consistent() -> None:
    """The builders every analysis test uses produce records the validator accepts."""
    from mirrorcraft.analysis.validate import record_problems
    from tests.test_analysis_helpers import table4_records

    records: list[EpisodeRecord] = table4_records()
    records += synthetic_study(seed=4, reps=1)[0]
    problems = {r.episode_id: record_problems(r) for r in records}
    assert not {k: v for k, v in problems.items() if v}


def test_a_database_row_that_is_not_an_episode_keeps_its_old_message(tmp_path: Path) -> None:
    path = write_db(tmp_path / "r.db", [GOOD])
    con = sqlite3.connect(path)
    with con:
        con.execute("INSERT INTO episodes VALUES ('zz', 'ok', '[]')")
    con.close()
    with pytest.raises(
        RecordsError, match="episode 'zz': bad episode record: expected a JSON object"
    ):
        load_results(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ruleset_fingerprint": "v2", "vanilla_fingerprint": "v2"}, "rule set 'vanilla' has"),
        ({"world_fingerprint": "w2"}, "world 'plains-1' under 'vanilla' has fingerprint 'w2'"),
        ({"body_fingerprint": "b2"}, "the body (simulator version, body or skill settings) has"),
        ({"task_fingerprint": "t2"}, "task 'iron_armor' has fingerprint 't2' here but 't1'"),
    ],
)
def test_records_of_differently_built_rules_or_worlds_are_not_pooled(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    """Two exports concatenated (another software version, an edited suite): the same name
    with two fingerprints would pool different rules or worlds into one row."""
    built = {
        "ruleset_fingerprint": "v1",
        "vanilla_fingerprint": "v1",
        "world_fingerprint": "w1",
        "body_fingerprint": "b1",
        "task_fingerprint": "t1",
    }
    first = _doc(**built)
    other = _doc(**{**built, **change, "episode_id": "x2", "repetition": 1})
    with pytest.raises(RecordsError, match="cannot be pooled") as info:
        load_results(_jsonl(tmp_path, first, other))
    assert message in str(info.value)


def test_one_configurations_episodes_prompted_differently_are_not_pooled(tmp_path: Path) -> None:
    """Episodes of one configuration from two software versions whose prompts were built
    differently (a template file edited, or the rendering code: ``prompt_version``) would be
    pooled into one row; a key only one of them names (an older record) is not compared."""
    hashes = {"common": "c1", "react": "r1", "observation": "o1"}
    old = _doc(agent="react", template_hashes=hashes)
    same = _doc(
        agent="react",
        template_hashes={**hashes, "prompt_version": "1"},
        episode_id="x2",
        repetition=1,
    )
    assert len(load_results(_jsonl(tmp_path, old, same)).records) == 3  # with _jsonl's own
    for change, named in (({"prompt_version": "2"}, "prompt_version"), ({"react": "r2"}, "react")):
        other = _doc(
            agent="react",
            template_hashes={**hashes, "prompt_version": "1", **change},
            episode_id="x3",
            repetition=2,
        )
        with pytest.raises(RecordsError, match="cannot be pooled") as info:
            load_results(_jsonl(tmp_path, same, other))
        assert "configuration 'react' (hidden) was prompted differently" in str(info.value)
        assert f": {named} differ" in str(info.value)
    # Another configuration's prompts are its own.
    direct = _doc(agent="direct", template_hashes={"direct": "d1"}, episode_id="x4")
    assert len(load_results(_jsonl(tmp_path, same, direct)).records) == 3


def test_one_suite_name_has_one_rule_set(tmp_path: Path) -> None:
    m04 = {"rules": "M04", "is_mirror": True, "vanilla_fingerprint": "v1"}
    first = _doc(**m04, ruleset_fingerprint="s1")
    edited = _doc(**m04, ruleset_fingerprint="s2", episode_id="x2", repetition=1)
    with pytest.raises(RecordsError, match="rule set 'M04' has fingerprint 's2' here but 's1'"):
        load_results(_jsonl(tmp_path, first, edited))
    loaded = load_results(_jsonl(tmp_path, first, edited), skip_invalid=True)
    assert [i.episode_id for i in loaded.invalid] == ["x2"]
    newer = _doc(rules="M01", is_mirror=True, vanilla_fingerprint="v9", episode_id="x5")
    with pytest.raises(RecordsError, match="the vanilla rules has fingerprint 'v9' here but 'v1'"):
        load_results(_jsonl(tmp_path, first, newer))
    # The same rule set in every record (and records without fingerprints) pass.
    same = _doc(**m04, ruleset_fingerprint="s1", episode_id="x3", repetition=2)
    bare = _doc(rules="M04", is_mirror=True, episode_id="x4", repetition=3)
    assert len(load_results(_jsonl(tmp_path, first, same, bare)).records) == 4
