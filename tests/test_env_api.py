"""The Gymnasium-shaped API, checked generically over every registered environment id."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from mirrorcraft.body.observation import Observation
from mirrorcraft.env import (
    EnvIdError,
    MirrorCraftEnv,
    StartInventoryError,
    make,
    parse_env_id,
    registered_ids,
)
from mirrorcraft.evaluator.tasks import UnknownTaskError
from mirrorcraft.world.registry import UnknownWorldError

OBS_KEYS = {
    "step",
    "inventory",
    "enchanted_items",
    "durability",
    "equipped",
    "position",
    "biome",
    "survival",
    "experience",
    "task",
    "completed_advancements",
    "nearby_blocks",
    "nearby_drops",
    "nearby_entities",
    "facilities",
    "last_result",
    "budget",
    "skills",
}


def check_env(env_id: str, steps: int = 3) -> None:
    env = make(env_id)
    obs, info = env.reset(seed=7)
    assert isinstance(obs, Observation) and isinstance(info, dict)
    doc = obs.to_json()
    assert set(doc) == OBS_KEYS
    assert json.loads(json.dumps(doc)) == doc  # plain JSON
    assert doc["task"]["next_milestone"] == doc["task"]["milestones"][0]["id"]
    assert isinstance(obs.render_text(), str) and "TASK:" in obs.render_text()
    rng = random.Random(env_id)
    for _ in range(steps):
        block = rng.choice([n.id for n in obs.nearby_blocks] or ["dirt"])
        action = rng.choice(
            [
                {"skill": "mine", "args": {"block": block}},
                {"skill": "explore", "args": {"target": "cow"}},
                {"skill": "wait", "args": {}},
                {
                    "skill": "craft_grid",
                    "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
                },
            ]
        )
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, Observation) and isinstance(reward, int) and reward >= 0
        assert isinstance(terminated, bool) and isinstance(truncated, bool)
        assert {"score", "success", "new_milestones", "result"} <= set(info)
        text = json.dumps(info)
        assert "M0" not in text and "vanilla" not in text  # info never names the rule set
    again, _ = env.reset(seed=7)
    first, _ = make(env_id).reset(seed=7)
    assert again.to_json() == first.to_json()


HORIZON_SAMPLE = ["jungle-h4/diamond", "jungle-h4@M02/enchantment", "taiga-h2@M05/iron_armor"]
"""A few horizon-study ids: generating all 25 horizon worlds here would cost half a minute."""


@pytest.mark.parametrize("env_id", registered_ids(studies=("main",)) + HORIZON_SAMPLE)
def test_generic_env_check(env_id: str) -> None:
    check_env(env_id, steps=2)


def test_ids_cover_worlds_rules_and_tasks() -> None:
    ids = registered_ids()
    # the main study's 210 ids first and unchanged, then the horizon study's 25 worlds
    assert len(ids) == 10 * 7 * 3 + 25 * 7 * 3
    assert ids[:210] == registered_ids(studies=("main",))
    assert len(set(ids)) == len(ids) and all(i in ids for i in HORIZON_SAMPLE)
    assert "plains-1/diamond" in ids and "plains-1@M04/diamond" in ids
    assert "savanna-h5@M06/enchantment" in ids
    spec = parse_env_id("savanna-2@M06/enchantment")
    assert (spec.world, spec.rules, spec.task) == ("savanna-2", "M06", "enchantment")


def test_bad_ids_fail_clearly() -> None:
    with pytest.raises(EnvIdError):
        parse_env_id("plains-1")
    for not_text in (None, 5, b"plains-1/diamond", ("plains-1", "diamond")):
        with pytest.raises(EnvIdError, match="string"):
            make(not_text)  # type: ignore[arg-type]
    with pytest.raises(UnknownWorldError):
        make("mars-1/diamond")
    with pytest.raises(UnknownTaskError) as raised:
        make("plains-1/flying")
    # make() takes one task id: its message lists ids, not the selectors a spec takes
    assert "obtain_<item>" in str(raised.value) and "selector" not in str(raised.value)
    from mirrorcraft.evaluator.tasks import expand_task_selectors

    with pytest.raises(UnknownTaskError, match="or a selector: progression"):
        expand_task_selectors(["flying"])


def test_reward_is_the_score_increase_and_success_terminates() -> None:
    env = make("plains-1/iron_armor", start_inventory={"iron_ingot": 4, "crafting_table": 1})
    env.reset(seed=1)
    grid = [["iron_ingot", None, "iron_ingot"], ["iron_ingot", None, "iron_ingot"]]
    _o, reward, terminated, _t, info = env.step(
        {"skill": "craft_grid", "args": {"station": "crafting_table", "grid": grid}}
    )
    assert info["result"]["reason"] == "needs_table" and reward == 0 and not terminated
    env.step({"skill": "place", "args": {"block": "crafting_table"}})
    _o, reward, terminated, truncated, info = env.step(
        {"skill": "craft_grid", "args": {"station": "crafting_table", "grid": grid}}
    )
    assert (
        reward == 100 - 65 and terminated and not truncated and info["success"]
    )  # ingots at the start gave 65
    assert info["new_milestones"] == ["story/obtain_armor"]


def test_an_episode_is_freed_as_soon_as_it_is_dropped_not_by_the_collector() -> None:
    """Nothing of an episode (body, world state and its grid, evaluator) is held in a
    reference cycle: a reset frees the last one at once, even with the collector off.
    The body once kept a strong reference to itself through its path-planning cache."""
    import gc

    env = make("plains-1@M02/iron_armor", budget=40)
    env.reset(seed=3)
    for block in ("oak_log", "dirt", "stone", "coal_ore"):
        env.step({"skill": "mine", "args": {"block": block, "count": 2}})
    assert env.episode is not None and env.episode.body._clearable_now is not None
    kinds = tuple(type(o) for o in (env.episode.state, env.episode.body, env.episode.evaluator))
    gc.collect()
    gc.disable()
    try:
        before = _live(kinds)
        env.reset(seed=4)  # one of each made, the old ones freed without the collector
        assert _live(kinds) == before
    finally:
        gc.enable()


def _live(kinds: tuple[type, ...]) -> list[int]:
    """How many objects of each type exist (the step's classes may be compiled by mypyc,
    which cannot be weakly referenced, so objects are counted rather than watched)."""
    import gc

    objects = gc.get_objects()
    counts = [sum(type(o) is k for o in objects) for k in kinds]
    objects.clear()  # it may hold frames that hold it: a cycle, with the collector off
    return counts


def test_a_start_inventory_is_the_one_asked_for_or_refused() -> None:
    """The debugging inventory of ``make`` is checked as ``play --inventory`` is: ids lose
    their ``minecraft:`` namespace (an item named with it was once a different, useless
    item), and unknown items, bad counts and what does not fit are refused rather than
    given, dropped or cut short without a word."""
    obs, _ = make("plains-1/diamond", start_inventory={"minecraft:oak_log": 2}).reset(seed=0)
    assert obs.inventory == {"oak_log": 2}
    bad: list[object] = [
        {"unobtainium": 3},
        {"oak_log": -3},
        {"oak_log": 0},
        {"oak_log": 10**9},
        {"oak_log": 2.5},
        {"oak_log": True},
        {"oak_log": 1, "minecraft:oak_log": 1},
        {"": 1},
        {"iron_pickaxe": 37},  # one per slot: 36 fit
        "oak_log",
    ]
    for inventory in bad:
        with pytest.raises(StartInventoryError) as caught:
            make("plains-1/diamond", start_inventory=inventory)  # type: ignore[arg-type]
        assert isinstance(caught.value, ValueError)
        assert str(caught.value).startswith("start_inventory: ")


def test_close_ends_the_episode_and_lets_it_go() -> None:
    """``close()`` (what Gymnasium loops and wrappers call at the end) exists, frees the
    episode, and a ``with`` block calls it."""
    import gc

    gc.collect()
    gc.disable()
    try:
        with make("plains-1/diamond", budget=5) as env:
            env.reset(seed=0)
            env.step({"skill": "wait", "args": {}})
            assert env.episode is not None
            kinds = (type(env.episode), type(env.episode.state))
            live = _live(kinds)
        assert env.episode is None and _live(kinds) == [n - 1 for n in live]
    finally:
        gc.enable()
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"skill": "wait", "args": {}})
    env.close()  # twice is fine
    obs, _ = env.reset(seed=0)
    assert obs.step == 0


def test_a_seed_is_a_whole_number() -> None:
    """Episode draws are keyed by the seed's text: ``seed=1.0``, ``True`` or ``"1"`` once
    gave an episode other than seed 1's (or, for a string, a TypeError on the next plain
    ``reset()``). They are refused; numpy's integers play as the same whole number."""
    import numpy as np

    env = make("plains-1/diamond", budget=5)
    for seed in (1.0, 1.5, True, "1", object()):
        with pytest.raises(ValueError, match="seed"):
            env.reset(seed=seed)  # type: ignore[arg-type]
    actions = [{"skill": "mine", "args": {"block": "log", "count": 2}}] * 2

    def played(seed: object) -> list[object]:
        obs, _ = env.reset(seed=seed)  # type: ignore[arg-type]
        return [obs.to_json()] + [env.step(a)[0].to_json() for a in actions]

    assert played(np.int64(3)) == played(3)


def test_an_edited_pack_is_seen_by_the_next_make(tmp_path: Path) -> None:
    """Editing a datapack and making an environment from it again in the same process (a
    notebook, an agent-development loop) plays the edited rules, not the first ones."""
    pack = tmp_path / "flint"
    (pack / "data/minecraft/loot_tables/blocks").mkdir(parents=True)
    (pack / "pack.mcmeta").write_text(json.dumps({"pack": {"pack_format": 10}}))

    def gravel_drops(count: int) -> object:
        entry = {
            "type": "minecraft:item",
            "name": "minecraft:flint",
            "functions": [{"function": "minecraft:set_count", "count": count}],
        }
        table = {"type": "minecraft:block", "pools": [{"rolls": 1, "entries": [entry]}]}
        (pack / "data/minecraft/loot_tables/blocks/gravel.json").write_text(json.dumps(table))
        env = make(f"plains-1@{pack}/diamond", start_inventory={"gravel": 1, "wooden_shovel": 1})
        env.reset(seed=0)
        env.step({"skill": "place", "args": {"block": "gravel"}})
        return env.step({"skill": "mine", "args": {"block": "gravel"}})[4]["result"]["produced"]

    assert gravel_drops(1) == {"flint": 1}
    assert gravel_drops(3) == {"flint": 3}
    assert gravel_drops(1) == {"flint": 1}


def test_an_env_copies_and_pickles_in_the_state_it_is_in() -> None:
    """``copy.deepcopy`` (a search that tries actions ahead) and ``pickle`` once failed
    with "cannot pickle 'mappingproxy' object". A copy is in the same state as the
    original, plays on exactly as it would, and leaves the original alone."""
    import copy
    import pickle

    route = Path(__file__).resolve().parents[1] / "examples" / "diamond_route.jsonl"
    lines = route.read_text().splitlines()
    actions = [json.loads(line) for line in lines if line.startswith("{")]

    def played(env: MirrorCraftEnv, todo: list[dict[str, object]]) -> list[str]:
        return [
            json.dumps([out.to_json() if isinstance(out, Observation) else out for out in step])
            for step in (env.step(a) for a in todo)
        ]

    env = make("plains-1@M04/diamond", budget=60)
    unstarted = copy.deepcopy(env)
    assert unstarted.reset(seed=5)[0].to_json() == env.reset(seed=5)[0].to_json()
    reused: dict[str, object] = {}
    for a in actions[:8]:
        reused.clear()
        reused.update(a)  # one dict changed between steps: a copy replays what was played
        env.step(reused)
    copies = [copy.deepcopy(env), copy.copy(env), pickle.loads(pickle.dumps(env))]
    assert env.episode is not None
    now = env.episode.observe().to_json()
    assert all(c.episode is not None and c.episode.observe().to_json() == now for c in copies)
    ahead = [played(c, actions[8:14]) for c in copies]
    assert env.episode.observe().to_json() == now  # the copies' steps left it alone
    assert ahead[0] == ahead[1] == ahead[2] == played(env, actions[8:14])
