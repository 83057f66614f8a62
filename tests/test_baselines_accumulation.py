"""Baselines in accumulation experiments and the shipped comparison spec, end to end offline."""

from __future__ import annotations

import json
import sqlite3
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml

from mirrorcraft.agents.mineevolve.store import KnowledgeStore
from mirrorcraft.cli import main
from mirrorcraft.evaluator.tasks import techtree_tasks
from mirrorcraft.runner.accumulation import AccumulationSpec, plan_streams

SHIPPED = Path(str(resources.files("mirrorcraft") / "data" / "experiments")) / (
    "mineevolve_baselines.yaml"
)
METHODS = ("mineevolve", "deps", "jarvis1", "optimus1", "optimus2")


def _records(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as con:
        return [json.loads(r) for (r,) in con.execute("SELECT record FROM episodes")]


def _small(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The shipped spec, shortened: 2 training episodes, six tasks (one per group but gold)."""
    spec = yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))
    spec["train"]["episodes"] = 2
    spec["train"]["tasks"] = ["obtain_stick", "obtain_stone_pickaxe"]
    spec["checkpoints"] = [2]
    spec["eval"]["tasks"] = [
        "obtain_crafting_table",
        "obtain_stone_pickaxe",
        "obtain_iron_ingot",
        "obtain_redstone",
        "obtain_diamond",
        "obtain_iron_helmet",
    ]
    path = tmp_path / "baselines.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path, spec


def test_the_shipped_spec_compares_every_method_on_all_seventy_tasks_under_one_cap() -> None:
    spec = AccumulationSpec.model_validate(yaml.safe_load(SHIPPED.read_text(encoding="utf-8")))
    assert tuple(v.agent for v in spec.variants) == METHODS
    assert spec.call_budget is not None and spec.eval.tasks == tuple(techtree_tasks())
    train, evals = plan_streams(spec)
    assert {s.agent for s in train} == {"mineevolve", "jarvis1", "optimus1"}
    episodes = [c for s in evals for c in s.conditions]
    assert len(episodes) == 5 * 70
    assert all(c.call_budget == spec.call_budget for s in (*train, *evals) for c in s.conditions)
    # Paired: each task's evaluation has one seed shared by every method.
    seeds: dict[str, set[int]] = {}
    for c in episodes:
        seeds.setdefault(c.task, set()).add(c.seed)
    assert all(len(s) == 1 for s in seeds.values())


def test_baselines_train_freeze_and_are_evaluated_beside_mineevolve(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _spec = _small(tmp_path)
    out = tmp_path / "o"
    assert main(["run", str(path), "--out", str(out), "--workers", "1", "--no-report"]) == 0
    stores = out / "stores"
    with KnowledgeStore.open(stores / "jarvis1--mock-planner@2.sqlite", read_only=True) as s:
        kinds = {op["record"]["kind"] for op in s.operations() if op["op"] == "put"}
        assert s.frozen and s.version == 2 and kinds == {"plan"}
    with KnowledgeStore.open(stores / "optimus1--mock-planner@2.sqlite", read_only=True) as s:
        kinds = {op["record"]["kind"] for op in s.operations() if op["op"] == "put"}
        assert kinds == {"edge", "experience"}
    assert not (stores / "deps--mock-planner@2.sqlite").exists()
    evals = _records(out / "results.sqlite")
    assert len(evals) == 5 * 6
    by = {(r["memory"]["variant"], r["task"]): r for r in evals}
    assert {v for v, _t in by} == set(METHODS)
    jarvis = by[("jarvis1", "obtain_stone_pickaxe")]["memory"]
    assert jarvis["store_at_start"]["plan"] >= 1 and jarvis["store_updates"] is False
    assert by[("optimus1", "obtain_iron_ingot")]["memory"]["store_at_start"]["edge"] > 0
    assert by[("deps", "obtain_diamond")]["memory"]["store"] is None
    assert all(r["call_budget"] == 120 for r in evals)
    assert len({r["seed"] for r in evals if r["task"] == "obtain_diamond"}) == 1

    capsys.readouterr()
    assert main(["analyze", str(out / "results.sqlite")]) == 0
    text = capsys.readouterr().out
    table = text.split("Tech-tree success rate (%) by task group")[1].split("\n\n")[0]
    header = next(line for line in table.splitlines() if line.startswith("Method"))
    for column in ("wooden", "stone", "iron", "redstone", "diamond", "armour"):
        assert column in header
    assert "Easy avg." in header and "Hard avg." in header and "Overall" in header
    rows = [line.split()[0] for line in table.splitlines() if "@2" in line]
    assert sorted(rows) == sorted(f"{m}@2" for m in METHODS)
    overhead = text.split("Memory size and cost per method")[1].split("\n\n")[0]
    for method in ("mineevolve", "jarvis1", "optimus1"):
        assert method in overhead
    assert "deps" not in overhead and "optimus2" not in overhead

    capsys.readouterr()
    assert main(["analyze", str(out / "results.sqlite"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["accumulation"]
    rows = {r["method"]: r for r in doc["methods"]["rows"]}
    assert doc["methods"]["easy_groups"] == ["wooden", "stone"]
    assert doc["methods"]["hard_groups"] == ["iron", "redstone", "diamond", "armour"]
    assert set(rows) == {f"{m}@2" for m in METHODS}
    for r in rows.values():  # one task per group here, so the averages are group means
        hard = [r["groups"][g] for g in ("iron", "redstone", "diamond", "armour")]
        assert r["hard"] == pytest.approx(sum(hard) / 4)
        assert r["easy"] == pytest.approx((r["groups"]["wooden"] + r["groups"]["stone"]) / 2)


def test_baselines_without_memory_cannot_train(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, spec = _small(tmp_path)
    spec["variants"] = [{"name": "deps", "agent": "deps"}]
    path.write_text(yaml.safe_dump(spec))
    assert main(["run", str(path), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "deps keeps no memory across episodes; give it train: none" in err
    spec["variants"] = [{"name": "j", "agent": "jarvis1", "switches": "no_curator"}]
    path.write_text(yaml.safe_dump(spec))
    assert main(["run", str(path), "--out", str(tmp_path / "x")]) == 2
    assert "switches apply to mineevolve only" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("agent", "ops"),
    [
        # MineEvolve's operations given to JARVIS-1: its episodes used to end as agent errors
        # and were scored 0 (the run finished "successfully")
        ("jarvis1", [{"op": "retire", "id": "skill_0001"}]),
        # JARVIS-1's records given to MineEvolve: every episode used to be retried as a worker
        # fault ("out of memory?")
        ("mineevolve", [{"op": "put", "id": "plan_0001", "record": {"kind": "plan"}}]),
    ],
)
def test_a_start_from_store_of_another_kind_of_memory_is_refused_before_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, ops: list[dict[str, Any]]
) -> None:
    foreign = tmp_path / "foreign.sqlite"
    with KnowledgeStore.open(foreign) as store:
        store.commit("e0", "vanilla", ops)
    before = foreign.read_bytes()
    path, spec = _small(tmp_path)
    spec["variants"] = [{"name": "v", "agent": agent, "start_from": str(foreign)}]
    path.write_text(yaml.safe_dump(spec))
    assert main(["run", str(path), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert f"variant v: start_from: {foreign}: holds memory {agent} cannot read" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x" / "train.sqlite").exists()
    assert foreign.read_bytes() == before
