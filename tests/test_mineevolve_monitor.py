"""MineEvolve's monitor and inducer triggers: progress, stagnation, failure types, when to learn."""

from __future__ import annotations

from dataclasses import replace

from mirrorcraft.agents.mineevolve.checks import parse_check, satisfied
from mirrorcraft.agents.mineevolve.config import make_config
from mirrorcraft.agents.mineevolve.feedback import Feedback, Monitor, is_stagnant, progress_value
from mirrorcraft.agents.mineevolve.inducer import remedy_due, success_segment
from mirrorcraft.agents.mineevolve.plan import Subgoal, parse_subgoal
from tests.simtools import episode

CFG = make_config()


def _subgoal(action: dict, checks: list[dict], max_actions: int = 4) -> Subgoal:
    sg = parse_subgoal({"action": action, "checks": checks}, 0, max_actions)
    assert isinstance(sg, Subgoal), sg
    return sg


def _fb(success: bool, stagnant: bool = False, fid: str = "e") -> Feedback:
    return Feedback(
        fid, "x", "sig", "mine", "stone", success, {}, {}, "NONE", (), 0.5, stagnant, (0, 0, 0)
    )


def _monitor() -> Monitor:
    return Monitor(CFG.monitor, CFG.failure_type)


def test_progress_weights_and_caps() -> None:
    m = CFG.monitor
    assert progress_value(m, 0.0, 0, 0.0) == 0.0
    assert progress_value(m, 1000.0, 1000, 5.0) == 1.0
    w = m.weights
    only_move = progress_value(m, m.movement_scale, 0, 0.0)
    assert abs(only_move - w["movement"] / sum(w.values())) < 1e-3
    half_inv = progress_value(m, 0.0, 1, 0.0)
    assert abs(half_inv - 0.5 * w["inventory"] / sum(w.values())) < 1e-3


def test_stagnation_needs_low_progress_and_no_completion() -> None:
    t = CFG.monitor.stagnation_threshold
    assert is_stagnant(CFG.monitor, t / 2, success=False)
    assert not is_stagnant(CFG.monitor, t / 2, success=True)
    assert not is_stagnant(CFG.monitor, t + 0.01, success=False)


def test_monitor_types_a_missing_tool_failure_as_stagnant() -> None:
    ep = episode(inventory={})
    obs = ep.observe()
    sg = _subgoal(
        {"skill": "mine", "args": {"block": "stone"}},
        [{"type": "inv_gain", "item": "cobblestone", "n": 1}],
    )
    mon = _monitor()
    mon.begin(sg, obs)
    out = ep.step(sg.action)
    assert not out.result.ok and out.result.reason == "needs_tool"
    mon.record(out.result)
    fb = mon.close(out.observation)
    assert not fb.success and fb.failure_type == "MISSING_TOOL"
    assert fb.reasons == ("needs_tool",) and fb.stagnant and fb.progress < 0.1
    assert fb.view("binary") == {"id": fb.id, "subgoal": fb.subgoal, "y": 0}
    assert {"f", "p", "stagnant", "delta_inv", "delta_state"} <= set(fb.view("typed"))


def test_monitor_success_and_inventory_delta() -> None:
    ep = episode(inventory={"oak_log": 2})
    obs = ep.observe()
    grid = [["oak_log", None], [None, None]]
    sg = _subgoal(
        {"skill": "craft_grid", "args": {"station": "inventory", "grid": grid}},
        [{"type": "inv_gain", "item": "oak_planks", "n": 4}],
    )
    mon = _monitor()
    mon.begin(sg, obs)
    assert not satisfied(sg.checks, obs, None, obs)
    out = ep.step(sg.action)
    mon.record(out.result)
    assert satisfied(sg.checks, out.observation, True, obs)
    fb = mon.close(out.observation)
    assert fb.success and fb.failure_type == "NONE" and fb.progress == 1.0 and not fb.stagnant
    assert fb.delta_inv == {"oak_log": -1, "oak_planks": 4}


def test_unexpected_output_is_its_own_failure_type() -> None:
    ep = episode(rules="M01", inventory={"oak_log": 2})
    obs = ep.observe()
    mon = _monitor()
    sg = _subgoal(
        {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["oak_log", None]]}},
        [{"type": "inv_gain", "item": "diamond", "n": 1}],
    )
    mon.begin(sg, obs)
    out = ep.step(sg.action)
    assert out.result.ok
    mon.record(out.result)
    fb = mon.close(out.observation)
    assert not fb.success and fb.failure_type == "UNEXPECTED_OUTPUT"


def test_failure_types_come_from_the_settings() -> None:
    assert CFG.failure_type("needs_table") == "MISSING_STATION"
    assert CFG.failure_type("target_unreachable") == "NAV_STUCK"
    assert CFG.failure_type("something_new") == "OTHER"
    assert CFG.failure_type("") == "NONE"


def test_one_isolated_failure_is_not_a_remedy() -> None:
    ind = CFG.inducer
    assert not remedy_due(ind, [_fb(False)])
    assert not remedy_due(ind, [_fb(True), _fb(True), _fb(False)])
    assert remedy_due(ind, [_fb(False), _fb(True), _fb(False)])
    assert not remedy_due(ind, [_fb(False), _fb(False), _fb(True)])  # the latest succeeded


def test_threshold_follows_the_configured_rate() -> None:
    strict = make_config(overrides={"inducer": {"window": 4, "failure_rate": 0.75}}).inducer
    assert not remedy_due(strict, [_fb(False), _fb(True), _fb(False)])
    assert remedy_due(strict, [_fb(False), _fb(False), _fb(True), _fb(False)])


def test_stagnation_triggers_at_once_except_with_binary_feedback() -> None:
    ind = CFG.inducer
    assert remedy_due(ind, [_fb(False, stagnant=True)])
    assert not remedy_due(ind, [_fb(False, stagnant=True)], mode="binary")


def test_skill_segments() -> None:
    ind = CFG.inducer
    item = _subgoal({"skill": "wait", "args": {}}, [{"type": "inv_gain", "item": "stick", "n": 1}])
    other = _subgoal({"skill": "wait", "args": {}}, [{"type": "action_ok"}])
    assert success_segment(ind, [(_fb(True), item)]) == []  # too short
    seg = success_segment(ind, [(_fb(False), item), (_fb(True), other), (_fb(True), item)])
    assert [sg for _, sg in seg] == [other, item]
    assert success_segment(ind, [(_fb(True), item), (_fb(True), other)]) == []  # no item made
    long = [(_fb(True), item)] * 9
    assert len(success_segment(ind, long)) == ind.max_skill_segment


def test_checks_parse_strictly() -> None:
    assert (
        parse_check({"type": "inv_ge", "item": "stick", "n": 0})
        == "n must be an integer from 1 to 2304"
    )
    assert isinstance(parse_check({"type": "teleport"}), str)
    assert isinstance(parse_check({"type": "facility"}), str)
    assert parse_check({"type": "inv_ge", "item": "minecraft:stick", "n": 2}).target == "stick"  # type: ignore[union-attr]


def test_subgoals_reject_unexecutable_actions() -> None:
    bad = parse_subgoal(
        {"action": {"skill": "fly", "args": {}}, "checks": [{"type": "action_ok"}]}, 0, 4
    )
    assert isinstance(bad, str) and "fly" in bad
    assert "checks" in str(parse_subgoal({"action": {"skill": "wait", "args": {}}}, 0, 4))
    ok = parse_subgoal(
        {"skill": "wait", "args": {}, "checks": [{"type": "action_ok"}], "max_actions": 99}, 0, 4
    )
    assert isinstance(ok, Subgoal) and ok.max_actions == 4
    assert replace(ok, id="x").signature() == ok.signature()
