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
