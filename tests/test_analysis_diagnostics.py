"""IRR, RL and horizon checkpoints on hand-made trajectories."""

from __future__ import annotations

import pytest

from mirrorcraft.analysis.diagnostics import (
    checkpoint_sr,
    diagnose,
    diagnose_by_suite,
    encounter_outcomes,
    equal_suite_mean,
    rule_encounters,
    success_step,
)
from mirrorcraft.runner.records import EpisodeRecord
from tests.test_analysis_helpers import make_record

A, B, C = ["mine", "iron_ore"], ["craft_grid", "x"], ["smelt", "raw_iron"]


def test_first_encounter_per_rule_defines_the_rule_encounter() -> None:
    r = make_record(
        rules="M01",
        trace=[0] * 6,
        signatures=[A] * 6,
        encounters=[(4, "r1"), (2, "r1"), (3, "r2"), (5, "r2")],
    )
    assert [(e.step, e.rule) for e in rule_encounters(r)] == [(2, "r1"), (3, "r2")]


def test_one_suite_change_over_many_resources_is_one_rule() -> None:
    """M06's first rule (every kind of log drops planks and sticks) writes one loot table per
    log, and M01's raw-iron rule one recipe per station. Mining oak and then birch logs, or
    smelting in a furnace and then a blast furnace, met one changed rule each, not two: the
    second action counted as a further rule encounter, with its own IRR and RL."""
    oak, birch = "loot_tables/minecraft:blocks/oak_log", "loot_tables/minecraft:blocks/birch_log"
    r = make_record(
        rules="M06", trace=[0] * 5, signatures=[A] * 5, encounters=[(1, oak), (3, birch)]
    )
    assert [(e.step, e.rule) for e in rule_encounters(r)] == [(1, oak)]
    assert [o.rule for o in encounter_outcomes(r)] == ["M06 rule 1"]
    furnace = "recipes/minecraft:iron_ingot_from_smelting_raw_iron"
    blast = "recipes/minecraft:iron_ingot_from_blasting_raw_iron"
    paper = "recipes/minecraft:paper"
    r = make_record(
        rules="M01",
        trace=[0] * 5,
        signatures=[C] * 5,
        encounters=[(2, furnace), (3, blast), (4, paper)],
    )
    assert [o.rule for o in encounter_outcomes(r)] == ["M01 rule 3", "M01 rule 4"]
    # a datapack without a manifest: each changed resource stays its own rule
    r = make_record(
        rules="my_pack", trace=[0] * 5, signatures=[A] * 5, encounters=[(1, oak), (3, birch)]
    )
    assert len(rule_encounters(r)) == 2


def test_the_simulator_logs_one_rule_encounter_per_suite_change() -> None:
    from mirrorcraft.runner.records import EncounterRecord
    from tests.simtools import act, episode

    ep = episode(rules="M06", seed=1)
    for block in ("oak_log", "birch_log", "oak_log"):
        assert act(ep, "mine", block=block, count=1).result.ok
    logged = ep.evaluator.encounters.encounters
    assert len({e.rule for e in logged}) == 2  # two loot tables
    r = make_record(rules="M06", trace=[0] * 3, signatures=[A] * 3)
    r.encounters = [EncounterRecord(e.step, e.rule, e.kind, list(e.signature)) for e in logged]
    assert [e.step for e in rule_encounters(r)] == [1]


def test_irr_counts_same_signature_next_action() -> None:
    r = make_record(
        rules="M01",
        trace=[0, 0, 0, 0, 0],
        signatures=[A, A, B, C, C],
        encounters=[(1, "r1"), (2, "r2"), (4, "r3")],
    )
    outs = encounter_outcomes(r)
    assert [o.repeated for o in outs] == [True, False, True]
    d = diagnose([r])
    assert d.irr == pytest.approx(200 / 3) and d.irr_n == 3


def test_encounter_on_the_last_action_has_no_irr() -> None:
    r = make_record(rules="M01", trace=[0, 10, 10], signatures=[A, A, A], encounters=[(3, "r1")])
    (out,) = encounter_outcomes(r)
    assert out.repeated is None
    assert out.latency is None  # score never rises above 10 afterwards
    d = diagnose([r])
    assert d.irr is None and d.irr_n == 0 and d.rl is None and d.encounters == 1


def test_rl_counts_actions_to_the_first_score_increase() -> None:
    # encounter at action 3; score before it (after action 2) is 10; first > 10 at action 6
    r = make_record(
        rules="M01", trace=[10, 10, 10, 10, 10, 25, 25], signatures=[A] * 7, encounters=[(3, "r1")]
    )
    (out,) = encounter_outcomes(r)
    assert out.latency == 3


def test_rl_is_zero_when_the_encounter_action_raises_the_score() -> None:
    r = make_record(rules="M01", trace=[0, 0, 15, 15], signatures=[A] * 4, encounters=[(3, "r1")])
    (out,) = encounter_outcomes(r)
    assert out.latency == 0


def test_rl_on_the_first_action_starts_from_zero() -> None:
    r = make_record(rules="M01", trace=[10, 10], signatures=[A, B], encounters=[(1, "r1")])
    (out,) = encounter_outcomes(r)
    assert out.latency == 0 and out.repeated is False


def test_score_never_rising_excludes_the_encounter_from_rl() -> None:
    never = make_record(
        rules="M01", trace=[10, 10, 10, 10], signatures=[A] * 4, encounters=[(2, "r1")]
    )
    rises = make_record(
        rules="M01", trace=[0, 0, 0, 15], signatures=[A] * 4, encounters=[(2, "r2")], repetition=1
    )
    d = diagnose([never, rises])
    assert d.rl == 2.0 and d.rl_n == 1 and d.encounters == 2


def test_encounters_outside_the_trace_are_ignored() -> None:
    r = make_record(rules="M01", trace=[0, 0], signatures=[A, A], encounters=[(0, "a"), (9, "b")])
    assert encounter_outcomes(r) == []


def test_per_suite_and_equal_suite_mean() -> None:
    m1 = make_record(rules="M01", trace=[0, 0, 0], signatures=[A, A, A], encounters=[(1, "r")])
    m2a = make_record(rules="M02", trace=[0, 0, 0], signatures=[A, B, B], encounters=[(1, "r")])
    m2b = make_record(
        rules="M02", trace=[0, 0, 0], signatures=[A, B, B], encounters=[(1, "r")], repetition=1
    )
    van = make_record(trace=[0, 0], signatures=[A, A])
    per = diagnose_by_suite([m1, m2a, m2b, van])
    assert set(per) == {"M01", "M02"}
    assert per["M01"].irr == 100.0 and per["M02"].irr == 0.0
    # equal weight per suite, not per encounter (which would give 33.3)
    assert equal_suite_mean(per[s].irr for s in per) == 50.0
    assert equal_suite_mean([None, None]) is None


def test_success_step_reads_the_final_milestone() -> None:
    r = make_record(task="diamond", trace=[0] * 10, milestones={"story/mine_diamond": 7})
    assert success_step(r) == 7
    iron = make_record(
        task="iron_armor", milestones={"story/obtain_armor": 4}, trace=[0, 0, 0, 100]
    )
    assert success_step(iron) == 4
    enchant = make_record(task="enchantment", milestones={"story/mine_diamond": 3}, trace=[75] * 3)
    assert success_step(enchant) is None
    other = make_record(task="iron_armor", trace=[0, 100, 100], milestones={})
    other.task = "unknown_task"
    assert success_step(other) == 2  # falls back to the Score trace


def test_horizon_checkpoints() -> None:
    def ep(step: int | None, rep: int, budget: int = 200) -> EpisodeRecord:
        ms = {} if step is None else {"story/mine_diamond": step}
        return make_record(task="diamond", milestones=ms, budget=budget, repetition=rep)

    records = [ep(90, 0), ep(100, 1), ep(101, 2), ep(160, 3), ep(None, 4)]
    assert checkpoint_sr(records, 100) == pytest.approx(40.0)  # step <= c counts
    assert checkpoint_sr(records, 150) == pytest.approx(60.0)
    assert checkpoint_sr(records, 200) == pytest.approx(80.0)
    short = [ep(30, 0, budget=50)]
    assert checkpoint_sr(short, 100) is None  # no budget reaches the checkpoint
    assert checkpoint_sr(short + records, 100) == pytest.approx(40.0)
