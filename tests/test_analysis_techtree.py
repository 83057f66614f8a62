"""The MineEvolve paper's table shape: group rates, Easy/Hard/Overall at the task level, memory cost."""

from __future__ import annotations

from mirrorcraft.analysis import summarize
from mirrorcraft.report.tables import build_tables
from tests.test_analysis_helpers import make_record


def _rec(task: str, success: bool, agent: str = "deps", rep: int = 0, **memory: object):
    r = make_record(task=task, agent=agent, score=100 if success else 0, repetition=rep)
    r.memory = dict(memory)
    return r


def test_averages_weight_tasks_not_episodes_and_split_easy_from_hard() -> None:
    records = [
        # iron: one task at 50% over two episodes, one at 100% over one episode
        _rec("obtain_iron_ingot", True, rep=0),
        _rec("obtain_iron_ingot", False, rep=1),
        _rec("obtain_bucket", True),
        # wooden (easy): 0%
        _rec("obtain_stick", False),
        # a progression task is not a tech-tree task and stays out of the table
        _rec("diamond", True),
    ]
    doc = summarize(records)["accumulation"]["methods"]
    assert doc["groups"] == ["wooden", "iron"]
    assert doc["easy_groups"] == ["wooden"] and doc["hard_groups"] == ["iron"]
    [row] = doc["rows"]
    assert row["method"] == "deps" and row["tasks"] == 3 and row["episodes"] == 4
    assert row["groups"] == {"wooden": 0.0, "iron": 75.0}
    assert row["hard"] == 75.0 and row["easy"] == 0.0
    assert row["overall"] == 50.0  # (0 + 50 + 100) / 3, not 2 of 4 episodes
    assert row["call_budget_ends"] is None  # no cap was set


def test_every_method_is_a_row_and_memory_methods_get_a_cost_row() -> None:
    plain = [_rec("obtain_stick", True, agent=a) for a in ("deps", "optimus2")]
    memory = {
        "store_at_start": {"plan": 0},
        "store_at_end": {"plan": 1},
        "retrieved_tokens_mean": 12.0,
        "retrieval_ms_mean": 0.5,
        "memory_calls": 0,
    }
    jarvis = _rec("obtain_stick", True, agent="jarvis1", **memory)
    capped = _rec("obtain_bucket", False, agent="deps")
    capped.termination, capped.call_budget = "call_budget", 40
    summary = summarize([*plain, jarvis, capped])
    methods = {r["method"]: r for r in summary["accumulation"]["methods"]["rows"]}
    assert set(methods) == {"deps", "optimus2", "jarvis1"}
    assert methods["deps"]["call_budget_ends"] == 50.0 and methods["deps"]["call_budget"] == [40]
    [cost] = summary["accumulation"]["overhead"]
    assert cost["variant"] == "jarvis1" and cost["checkpoint"] is None
    assert cost["entries"] == 0 and cost["entries_at_end"] == 1 and cost["kinds"] == {"plan": 0}
    keys = [t.key for t in build_tables(summary)]
    assert "techtree_methods" in keys and "accumulation_overhead" in keys
    table = next(t for t in build_tables(summary) if t.key == "techtree_methods")
    assert table.columns[:1] == ["Method"] and table.columns[-5:-2] == [
        "Easy avg.",
        "Hard avg.",
        "Overall",
    ]


def test_accumulation_tables_keep_each_models_stream_apart() -> None:
    """An accumulation spec may name several models; each trains its own store, but the
    checkpoint, strategy and training tables grouped by variant alone, so one row
    averaged two models' success and showed one model's store as the variant's."""
    records, train = [], []
    for model, success in (("m1", True), ("m2", False)):
        for rep in range(2):
            r = _rec("obtain_bucket", success, agent="mineevolve:full@3", rep=rep)
            r.model = model
            r.memory = {"phase": "eval", "variant": "full", "checkpoint": 3}
            r.memory["store_at_start"] = {"skill": 4 if success else 1}
            records.append(r)
        for position in range(3):
            t = _rec("obtain_stick", success, agent="mineevolve:full:train", rep=position)
            t.model = model
            entries = {"skill": (10 if success else 2) + position}
            t.memory = {"phase": "train", "variant": "full", "position": position}
            t.memory["store_at_end"] = entries
            train.append(t)
    summary = summarize(records, train_records=train)
    acc = summary["accumulation"]
    growth = {r["model"]: r["overall"] for r in acc["growth"]["rows"]}
    assert growth == {"m1": 100.0, "m2": 0.0}  # not one row at 50%
    assert {(r["model"], r["sr"]) for r in acc["regimes"]} == {("m1", 100.0), ("m2", 0.0)}
    assert {(r["model"], r["final"]) for r in acc["strategies"]} == {("m1", 100.0), ("m2", 0.0)}
    assert {(r["model"], r["entries"]) for r in acc["overhead"]} == {("m1", 4.0), ("m2", 1.0)}
    streams = {r["model"]: r for r in acc["training"]}
    assert streams["m1"]["episodes"] == 3 and streams["m1"]["curve"] == [100.0] * 3
    assert streams["m1"]["entries"] == 12 and streams["m2"]["entries"] == 4
    tables = {t.key: t for t in build_tables(summary)}
    for key in ("accumulation_growth", "accumulation_overhead", "accumulation_training"):
        assert tables[key].columns[1] == "Model", key
