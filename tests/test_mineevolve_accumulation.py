"""An accumulation experiment end to end with the offline mock model: grow, freeze, reuse, resume."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from mirrorcraft.agents.mineevolve.store import FrozenStoreError, KnowledgeStore
from mirrorcraft.cli import main
from mirrorcraft.runner.accumulation import AccumulationSpec, plan_streams
from tests.test_mineevolve_store import leave_an_unfinished_transaction

SPEC: dict[str, Any] = {
    "schema_version": 1,
    "kind": "accumulation",
    "name": "acc-test",
    "models": [{"name": "mock-planner"}],
    "variants": ["full", {"name": "cold_start", "train": "none"}],
    "train": {
        "worlds": ["plains-1"],
        "rules": ["vanilla"],
        "tasks": ["iron_armor"],
        "episodes": 3,
        "hold_out": False,
    },
    "checkpoints": [0, 3],
    "eval": {"worlds": ["plains-2"], "rules": ["vanilla", "M04"], "tasks": ["iron_armor"]},
}


def _records(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT record FROM episodes WHERE status = 'ok'").fetchall()
    return [json.loads(r) for (r,) in rows]


def _run(tmp_path: Path, spec: dict[str, Any], name: str = "out") -> int:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return main(["run", str(path), "--out", str(tmp_path / name), "--workers", "1"])


def _command(tmp_path: Path, spec: dict[str, Any]) -> list[str]:
    """``run`` of ``spec`` into ``tmp_path/out``, one worker, no report."""
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(spec))
    return ["run", str(path), "--out", str(tmp_path / "out"), "--workers", "1", "--no-report"]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_store_grows_is_frozen_and_is_used_later(tmp_path: Path) -> None:
    assert _run(tmp_path, SPEC) == 0
    out = tmp_path / "out"
    stores = out / "stores"
    with KnowledgeStore.open(stores / "full--mock-planner.sqlite", read_only=True) as s:
        assert s.version == 3 and s.stats()["skills"] > 0
        assert set(s.regimes().values()) == {"vanilla"}
    snap0, snap3 = stores / "full--mock-planner@0.sqlite", stores / "full--mock-planner@3.sqlite"
    for snap, version in ((snap0, 0), (snap3, 3)):
        with KnowledgeStore.open(snap) as s:
            assert s.frozen and s.version == version
            with pytest.raises(FrozenStoreError):
                s.commit("x", "vanilla", [])
    train = sorted(_records(out / "train.sqlite"), key=lambda r: r["memory"]["position"])
    assert [r["memory"]["store_version"] for r in train] == [0, 1, 2]
    assert train[0]["memory"]["store_at_start"]["skill"] == 0
    assert train[-1]["memory"]["store_at_start"]["skill"] > 0
    evals = _records(out / "results.sqlite")
    assert len(evals) == 2 * 2 * 2  # variants x checkpoints x rule sets
    by = {(r["memory"]["variant"], r["memory"]["checkpoint"], r["rules"]): r for r in evals}
    late = by[("full", 3, "vanilla")]["memory"]
    assert late["store_at_start"]["skill"] > 0 and late["retrieved_tokens_mean"] > 0
    assert late["store_updates"] is False and late["store_at_end"] == late["store_at_start"]
    for key in (("full", 0, "vanilla"), ("cold_start", 3, "vanilla")):
        assert by[key]["memory"]["store_at_start"]["skill"] == 0
    # Paired: every evaluation of a condition shares its seed across variants and checkpoints.
    assert len({r["seed"] for r in evals}) == 1
    assert (out / "report" / "tables" / "accumulation_growth.md").exists()
    assert (out / "report" / "tables" / "accumulation_regimes.md").exists()
    frozen = {p.name: _digest(p) for p in (snap0, snap3)}
    # A rerun does nothing new and never touches the frozen snapshots.
    assert _run(tmp_path, SPEC) == 0
    assert frozen == {p.name: _digest(p) for p in (snap0, snap3)}
    assert len(_records(out / "results.sqlite")) == len(evals)


def test_interrupted_training_resumes_from_the_recorded_prefix(tmp_path: Path) -> None:
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    spec["eval"] = {**SPEC["eval"], "rules": ["vanilla"]}
    assert _run(tmp_path, spec) == 0
    out = tmp_path / "out"
    store = out / "stores" / "full--mock-planner.sqlite"
    (out / "stores" / "full--mock-planner@3.sqlite").unlink()
    last = max(_records(out / "train.sqlite"), key=lambda r: r["memory"]["position"])
    with sqlite3.connect(out / "train.sqlite") as con:  # as if killed after the store commit
        con.execute("DELETE FROM episodes WHERE episode_id = ?", (last["episode_id"],))
        con.execute("DELETE FROM steps WHERE episode_id = ?", (last["episode_id"],))
    with KnowledgeStore.open(store, read_only=True) as s:
        assert s.version == 3
    assert _run(tmp_path, spec) == 0
    with KnowledgeStore.open(store, read_only=True) as s:
        assert s.version == 3 and s.episode_ids()[-1] == last["episode_id"]
    assert len(_records(out / "train.sqlite")) == 3
    assert (out / "stores" / "full--mock-planner@3.sqlite").exists()


def test_evaluation_with_updates_carries_a_copy_of_the_snapshot(tmp_path: Path) -> None:
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    spec["eval"] = {**SPEC["eval"], "updates": True, "repetitions": 2, "rules": ["M04"]}
    assert _run(tmp_path, spec) == 0
    stores = tmp_path / "out" / "stores"
    with KnowledgeStore.open(stores / "full--mock-planner@3.sqlite", read_only=True) as snap:
        assert snap.version == 3
    carried = stores / "full--mock-planner@3--M04.carried.sqlite"
    with KnowledgeStore.open(carried, read_only=True) as s:
        assert s.version == 5 and all(e.startswith("eval:") for e in s.episode_ids()[3:])
        regimes = dict(s.db.execute("SELECT version, regime FROM episodes").fetchall())
        assert [regimes[v] for v in (1, 4, 5)] == ["vanilla", "M04", "M04"]
    evals = sorted(_records(tmp_path / "out" / "results.sqlite"), key=lambda r: r["repetition"])
    assert [r["memory"]["store_version"] for r in evals] == [3, 4]


def test_spec_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = {**SPEC, "checkpoints": [0, 5]}
    assert _run(tmp_path, bad, "bad") == 2
    assert "checkpoint 5 is beyond its 3 training episodes" in capsys.readouterr().err
    held = {**SPEC, "train": {**SPEC["train"], "hold_out": True}}
    assert _run(tmp_path, held, "held") == 2
    assert "held out" in capsys.readouterr().err


def test_training_streams_are_identical_across_variants() -> None:
    spec = AccumulationSpec.model_validate({**SPEC, "variants": ["full", "no_curator"]})
    train, evals = plan_streams(spec)
    a, b = ([(c.world, c.task, c.seed) for c in s.conditions] for s in train)
    assert a == b and len(evals) == 2 * 2 * 2


def test_shared_stores_and_static_stores(tmp_path: Path) -> None:
    spec = {
        **SPEC,
        "variants": [
            "full",
            {"name": "carried", "store_of": "full", "eval_updates": True},
            {"name": "static", "switches": "full", "freeze_after": 1},
        ],
        "checkpoints": [3],
    }
    spec["eval"] = {**SPEC["eval"], "rules": ["vanilla"]}
    assert _run(tmp_path, spec) == 0
    out = tmp_path / "out"
    stores = sorted(p.name for p in (out / "stores").iterdir())
    assert "carried--mock-planner.sqlite" not in stores  # it trains nothing of its own
    assert "carried--mock-planner@3--vanilla.carried.sqlite" in stores
    with KnowledgeStore.open(out / "stores" / "static--mock-planner.sqlite", read_only=True) as s:
        assert s.version == 3
        ops = s.db.execute("SELECT version, COUNT(*) FROM ops GROUP BY version").fetchall()
        assert [v for v, _n in ops] == [1]  # only the first episode changed the store
    evals = {r["memory"]["variant"]: r for r in _records(out / "results.sqlite")}
    assert evals["carried"]["memory"]["store_at_start"] == evals["full"]["memory"]["store_at_start"]
    assert evals["carried"]["memory"]["store_updates"] is True
    assert evals["full"]["memory"]["store_updates"] is False


@pytest.mark.parametrize("name", ["accumulation", "ablations", "curriculum", "transfer"])
def test_shipped_specs_plan_paired_held_out_evaluations(name: str) -> None:
    from mirrorcraft.commands.run_cmd import default_spec_path

    path = default_spec_path().parent / f"mineevolve_{name}.yaml"
    spec = AccumulationSpec.model_validate(yaml.safe_load(path.read_text()))
    train, evals = plan_streams(spec)
    assert train and evals
    eval_tasks = set(spec.eval.tasks)
    for stream in train:
        assert len({c.episode_id for c in stream.conditions}) == len(stream.conditions)
        trained = spec.train_for(next(v for v in spec.variants if v.name == stream.variant))
        if trained is not None and trained.hold_out:
            assert not eval_tasks & {c.task for c in stream.conditions}
    seeds: dict[tuple[str, str, int], set[int]] = {}
    for stream in evals:
        for c in stream.conditions:
            seeds.setdefault((c.world, c.task, c.repetition), set()).add(c.seed)
    assert all(len(s) == 1 for s in seeds.values())


def test_a_stream_that_starts_from_a_store_of_the_same_stream_keeps_every_episode(
    tmp_path: Path,
) -> None:
    """Training on from a store that the same training stream wrote (continuing an earlier
    experiment): the copied episodes share their ids with the new ones, and every new episode
    must still be committed after them."""
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    spec["eval"] = {**SPEC["eval"], "rules": ["vanilla"]}
    assert _run(tmp_path, spec, "first") == 0
    prepared = tmp_path / "first" / "stores" / "full--mock-planner@3.sqlite"
    more = {**spec, "name": "acc-more", "variants": [{"name": "full", "start_from": str(prepared)}]}
    assert _run(tmp_path, more, "more") == 0
    stores = tmp_path / "more" / "stores"
    with KnowledgeStore.open(stores / "full--mock-planner.sqlite", read_only=True) as s:
        assert s.base_version == 3 and s.version == 6
        assert len(set(s.episode_ids())) == 6
    with KnowledgeStore.open(stores / "full--mock-planner@3.sqlite", read_only=True) as s:
        assert s.version == 6
    train = sorted(
        _records(tmp_path / "more" / "train.sqlite"), key=lambda r: r["memory"]["position"]
    )
    assert [r["memory"]["store_version"] for r in train] == [3, 4, 5]
    # A rerun finds every episode done and the store consistent with them.
    assert _run(tmp_path, more, "more") == 0


def test_analyze_says_how_much_of_an_accumulation_run_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An interrupted stream's tables used to read like a finished experiment's: analyze
    counted the missing episodes of grid specs only."""
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    out = tmp_path / "out"
    base = _command(tmp_path, spec)
    assert main([*base, "--limit", "2"]) == 0  # two of the three training episodes
    capsys.readouterr()
    assert main(["analyze", str(out / "train.sqlite")]) == 0
    assert "not run yet: 1 of the 3 episodes its spec plans" in capsys.readouterr().out
    reported = base[:-1]  # the run's own report says so too
    assert main([*reported, "--limit", "2"]) == 0  # the last one, and one of two evaluations
    capsys.readouterr()
    index = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "not run yet: 1 of the 2 episodes its spec plans" in index
    assert main(["analyze", str(out / "results.sqlite"), "--json"]) == 0
    episodes = json.loads(capsys.readouterr().out)["episodes"]
    assert episodes["unfinished"] == {"missing": 1, "planned": 2}
    assert main(base) == 0
    capsys.readouterr()
    for db, planned in (("results.sqlite", 2), ("train.sqlite", 3)):
        assert main(["analyze", str(out / db), "--json"]) == 0
        episodes = json.loads(capsys.readouterr().out)["episodes"]
        assert episodes["unfinished"] == {"missing": 0, "planned": planned}


def test_a_carried_store_that_lost_its_evaluation_episodes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Evaluation with updates used to go on from a fresh copy of the snapshot when its
    carried store was gone, so later episodes ran without what the recorded ones learned."""
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    spec["eval"] = {**SPEC["eval"], "updates": True, "repetitions": 2, "rules": ["M04"]}
    assert _run(tmp_path, spec) == 0
    out = tmp_path / "out"
    carried = out / "stores" / "full--mock-planner@3--M04.carried.sqlite"
    carried.unlink()
    evals = sorted(_records(out / "results.sqlite"), key=lambda r: r["repetition"])
    with sqlite3.connect(out / "results.sqlite") as con:  # the second one is still to run
        con.execute("DELETE FROM episodes WHERE episode_id = ?", (evals[1]["episode_id"],))
        con.execute("DELETE FROM steps WHERE episode_id = ?", (evals[1]["episode_id"],))
    capsys.readouterr()
    assert _run(tmp_path, spec) == 2
    err = capsys.readouterr().err
    assert f"{carried} holds 0 evaluation episodes but 1 are recorded" in err
    assert len(_records(out / "results.sqlite")) == 1


def test_a_damaged_store_stops_the_run_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store whose operations cannot be replayed used to fail every episode that read it,
    as worker faults ("out of memory?"), retried in every run."""
    spec = {**SPEC, "variants": ["full"], "checkpoints": [1, 3]}
    spec["eval"] = {**SPEC["eval"], "rules": ["vanilla"]}
    out = tmp_path / "out"
    base = _command(tmp_path, spec)
    assert main([*base, "--limit", "2"]) == 0
    stores = out / "stores"
    for name, advice in (
        ("full--mock-planner@1.sqlite", "remove it and rerun"),
        ("full--mock-planner.sqlite", "restore it from a copy"),
    ):
        good = (stores / name).read_bytes()
        with sqlite3.connect(stores / name) as con:
            con.execute("UPDATE meta SET value = '0' WHERE key = 'frozen'")
            con.execute("UPDATE ops SET op = '{not json' WHERE version = 1")
        capsys.readouterr()
        assert main(base) == 2
        err = capsys.readouterr().err
        assert f"{stores / name}: holds memory mineevolve cannot read" in err and advice in err
        assert [line for line in err.splitlines() if "error" in line] == [err.splitlines()[-1]]
        with sqlite3.connect(out / "train.sqlite") as con:
            assert con.execute("SELECT COUNT(*) FROM faults").fetchone() == (0,)
        (stores / name).write_bytes(good)
    (stores / "full--mock-planner@1.sqlite").unlink()
    assert main(base) == 0  # the snapshot is made again from the training store
    assert len(_records(out / "train.sqlite")) == 3


def test_a_store_left_mid_commit_by_a_killed_run_is_recovered_not_refused(
    tmp_path: Path,
) -> None:
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    spec["eval"] = {**SPEC["eval"], "rules": ["vanilla"]}
    out = tmp_path / "out"
    base = _command(tmp_path, spec)
    assert main([*base, "--limit", "2"]) == 0
    store = out / "stores" / "full--mock-planner.sqlite"
    with KnowledgeStore.open(store, read_only=True) as s:
        kept = s.operations()
    leave_an_unfinished_transaction(store)
    assert main(base) == 0
    with KnowledgeStore.open(store, read_only=True) as s:
        assert s.version == 3 and s.operations()[: len(kept)] == kept
    assert len(_records(out / "train.sqlite")) == 3


def test_a_file_where_the_stores_folder_goes_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to say only 'File exists (.../stores)'."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "stores").write_text("not a folder")
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    assert _run(tmp_path, spec) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("mirrorcraft: error")]
    assert len(errors) == 1 and "stores is a file" in errors[0] and "Traceback" not in err
    assert (out / "stores").read_text() == "not a folder"


def test_analyze_totals_the_training_episodes_usage_with_the_evaluation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``analyze results.sqlite`` of an accumulation run summed only the evaluation episodes'
    calls, tokens and cost: the training stream's (in ``train.sqlite``), often most of
    the bill, were in no total, and its training-stream table was empty."""
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    out = tmp_path / "out"
    assert main(_command(tmp_path, spec)) == 0
    capsys.readouterr()
    train, evaluation = _records(out / "train.sqlite"), _records(out / "results.sqlite")
    assert main(["analyze", str(out / "results.sqlite"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    usage = doc["usage"]
    calls = sum(r["model_calls"] for r in train) + sum(r["model_calls"] for r in evaluation)
    assert usage["total"]["episodes"] == len(train) + len(evaluation) == 5
    assert usage["total"]["model_calls"] == calls
    assert usage["training"]["episodes"] == 3
    assert usage["training"]["model_calls"] == sum(r["model_calls"] for r in train) > 0
    assert {r["phase"] for r in usage["by_agent_model"]} == {"evaluation", "training"}
    assert usage["faults"] is not None
    assert [t["episodes"] for t in doc["accumulation"]["training"]] == [3]
    # The spec's checkpoints (3 training episodes) are no action counts: the horizon table
    # used to show "SR at action 3" from them.
    assert doc["horizon"]["requested"] == [100, 150, 200]
    assert main(["analyze", str(out / "results.sqlite")]) == 0
    text = capsys.readouterr().out.split("for the whole run", 1)[1]
    assert "and its 3 training episode(s) (train.sqlite)" in text
    # The training database alone is still analysed as itself.
    assert main(["analyze", str(out / "train.sqlite"), "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)["usage"]
    assert alone["training"] is None and alone["total"]["episodes"] == 3
    # A damaged training database is named, with what to do.
    (out / "train.sqlite").write_text("garbage", encoding="utf-8")
    assert main(["analyze", str(out / "results.sqlite")]) == 2
    err = capsys.readouterr().err
    assert "train.sqlite" in err and "move it away to analyse the evaluation alone" in err


def test_a_misspelt_ablation_is_refused_not_run_as_full(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'static_stor' (or 'no_adapter') named no MineEvolve variant, so it silently ran the
    full switches and its results were reported under the ablation's name."""
    for typo, meant in (("static_stor", "static_store"), ("no_adapter", "no_adaptor")):
        bad = {**SPEC, "variants": [typo]}
        assert _run(tmp_path, bad, typo) == 2
        err = capsys.readouterr().err
        assert f"did you mean '{meant}'" in err and "switches: full" in err
        assert not (tmp_path / typo / "train.sqlite").exists()
    named = {"name": "static_stor", "switches": "full", "train": "none"}
    spec = AccumulationSpec.model_validate({**SPEC, "variants": ["full_b", named, "cold"]})
    assert [spec.switches(v) for v in spec.variants] == ["full", "full", "full"]


def test_two_models_whose_store_files_would_be_one_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Store file names keep only letters, digits and _.@-: models 'org/model' and
    'org_model' trained into one file, each stream committing into (and, on its first
    episode, truncating) the other's store. The run is refused before any call."""
    spec = {
        **SPEC,
        "models": [
            {"name": "org/model", "base_url": "http://127.0.0.1:9/v1"},
            {"name": "org_model", "base_url": "http://127.0.0.1:9/v1"},
        ],
    }
    assert _run(tmp_path, spec) == 2
    err = capsys.readouterr().err
    assert "'org/model' and variant 'full' with model 'org_model' would write one" in err
    assert "full--org_model.sqlite" in err and "rename one of the models" in err
    assert not (tmp_path / "out" / "stores").exists()


def test_a_stream_whose_start_from_failed_starts_from_it_on_the_rerun(tmp_path: Path) -> None:
    """A start_from copy that failed (a full disk, a run killed while copying) left the
    variant's store empty, and the rerun, seeing the file, trained from nothing instead of
    from the store the spec names, without a word."""
    spec = {**SPEC, "variants": ["full"], "checkpoints": [3]}
    spec["eval"] = {**SPEC["eval"], "rules": ["vanilla"]}
    assert _run(tmp_path, spec, "first") == 0
    prepared = tmp_path / "first" / "stores" / "full--mock-planner@3.sqlite"
    more = {**spec, "name": "acc-more", "variants": [{"name": "full", "start_from": str(prepared)}]}
    left = tmp_path / "more" / "stores" / "full--mock-planner.sqlite"
    KnowledgeStore.open(left).close()  # what the failed first attempt left
    assert _run(tmp_path, more, "more") == 0
    with KnowledgeStore.open(left, read_only=True) as s:
        assert s.base_version == 3 and s.version == 6
