"""The real-server episode without Node or a server: a scripted bridge and advancement source.

Observations and results have the embedded schema; milestones come only from the
advancement source; malformed bridge answers are infrastructure faults; the hidden
encounter log compares server results with vanilla rules."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.backends.mineflayer.advancements import (
    FileAdvancements,
    RconAdvancements,
    offline_uuid,
    read_advancement_file,
)
from mirrorcraft.backends.mineflayer.bridge import (
    CODE_KINDS,
    BridgeError,
    BridgeUnavailable,
    find_bridge_dir,
)
from mirrorcraft.backends.mineflayer.convert import bridge_config, build_observation, build_result
from mirrorcraft.backends.mineflayer.episode import MineflayerEpisode
from mirrorcraft.backends.mineflayer.fakes import FakeBridge, gain, result
from mirrorcraft.backends.mineflayer.rcon import RconClient
from mirrorcraft.backends.mineflayer.rcon_server import RconServer
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.actions import skill_specs
from mirrorcraft.body.config import default_body_config
from mirrorcraft.body.observation import Budget, ProgressView
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.faults import InfrastructureFault
from tests.simtools import episode as sim_episode


class Granted:
    """An advancement source the test grants advancements on, as the server would."""

    def __init__(self) -> None:
        self.have: set[str] = set()
        self.asked: list[list[str]] = []

    def completed(self, advancements: Iterable[str]) -> set[str]:
        wanted = list(advancements)
        self.asked.append(wanted)
        return {a for a in wanted if a in self.have}


def _craft(bridge: FakeBridge, args: dict[str, Any]) -> dict[str, Any]:
    # The "server" of this test crafts an enchanting table from the book grid (M02's change).
    gain(bridge, "enchanting_table")
    return result(
        "craft_grid",
        args,
        produced={"enchanting_table": 1},
        consumed={"paper": 3, "leather": 1},
        details={"result": {"enchanting_table": 1}},
    )


def make(
    task: str = "diamond", mirror: bool = False, **acts: Any
) -> tuple[MineflayerEpisode, FakeBridge, Granted]:
    bridge = FakeBridge(acts=acts)
    source = Granted()
    ep = MineflayerEpisode(
        bridge, source, get_task(task), vanilla_rules(), biome="plains", mirror=mirror
    )  # type: ignore[arg-type]
    return ep, bridge, source


def test_observations_have_the_embedded_schema() -> None:
    ep, _, _ = make()
    real, sim = ep.observe().to_json(), sim_episode("plains-1").observe().to_json()
    assert list(real) == list(sim)
    for key in ("survival", "experience", "task", "budget", "position"):
        assert set(real[key]) == set(sim[key])
    assert real["skills"] == sim["skills"] == list(skill_specs())
    assert real["task"] == sim["task"]  # same route, nothing done yet
    assert real["nearby_entities"] == [{"type": "cow", "count": 1, "nearest_distance": 6.3}]
    assert real["biome"] == "plains"


def test_grouping_and_rounding_match_the_embedded_body() -> None:
    raw = FakeBridge().observation()
    raw["drops"] = [
        {"item": "dirt", "count": 2, "d2": 8},
        {"item": "dirt", "count": 1, "d2": 3},
        {"item": "apple", "count": 1, "d2": 3},
    ]
    raw["entities"] = [
        {"type": "sheep", "d2": 9},
        {"type": "cow", "d2": 9},
        {"type": "sheep", "d2": 4},
    ]
    raw["blocks"] = [{"block": "furnace", "d2": 2}, {"block": "stone", "d2": 2}]
    view = ProgressView("diamond", "Diamond", (), None, 0, ())
    obs = build_observation(
        raw,
        step=0,
        biome="plains",
        facilities=("furnace",),
        progress=view,
        budget=Budget(5, 0),
        last=None,
    )
    assert [(d.id, d.count, d.distance) for d in obs.nearby_drops] == [
        ("apple", 1, 1.7),
        ("dirt", 3, 1.7),
    ]
    assert [(e.id, e.count, e.distance) for e in obs.nearby_entities] == [
        ("sheep", 2, 2.0),
        ("cow", 1, 3.0),
    ]
    assert [f.id for f in obs.facilities] == ["furnace"]
    raw["position"] = ["x", 1, 2]
    with pytest.raises(InfrastructureFault, match="malformed observation"):
        build_observation(
            raw,
            step=0,
            biome="plains",
            facilities=(),
            progress=view,
            budget=Budget(5, 0),
            last=None,
        )


def test_tool_durability_from_the_bridge_has_the_embedded_schema() -> None:
    view = ProgressView("diamond", "Diamond", (), None, 0, ())

    def obs(raw: dict[str, Any]):  # type: ignore[no-untyped-def]
        return build_observation(
            raw,
            step=0,
            biome="plains",
            facilities=(),
            progress=view,
            budget=Budget(5, 0),
            last=None,
        )

    raw = FakeBridge().observation()
    assert "durability" not in raw and obs(raw).durability == []  # an older bridge
    raw["durability"] = [
        {"item": "wooden_pickaxe", "remaining": 40, "max": 59, "enchantments": {"unbreaking": 1}},
        {"item": "iron_pickaxe", "remaining": 237, "max": 250},
        {"item": "wooden_pickaxe", "remaining": 12, "max": 59},
    ]
    got = obs(raw).durability
    assert got == [
        {"item": "iron_pickaxe", "remaining": 237, "max": 250},
        {"item": "wooden_pickaxe", "remaining": 12, "max": 59},
        {"item": "wooden_pickaxe", "remaining": 40, "max": 59, "enchantments": {"unbreaking": 1}},
    ]
    # The embedded body reports the same copies in the same order and shape.
    from mirrorcraft.backends.rulesets import vanilla_rules
    from mirrorcraft.body.inventory import Inventory
    from mirrorcraft.body.wear import durability_view
    from mirrorcraft.rules.items import ItemStack

    game = vanilla_rules().game
    inv = Inventory(game.items)
    inv.add(ItemStack("wooden_pickaxe", 1, (("unbreaking", 1),), 19))
    inv.add(ItemStack("iron_pickaxe", 1, (), 13))
    inv.add(ItemStack("wooden_pickaxe", 1, (), 47))
    assert durability_view(game, inv.counts) == got
    raw["durability"] = [{"item": "iron_pickaxe", "remaining": "lots", "max": 250}]
    with pytest.raises(InfrastructureFault, match="malformed observation"):
        obs(raw)


def test_milestones_come_from_the_server_not_the_inventory() -> None:
    def mine(bridge: FakeBridge, args: dict[str, Any]) -> dict[str, Any]:
        gain(bridge, "diamond", 3)
        return result(
            "mine",
            args,
            produced={"diamond": 3},
            details={
                "blocks": ["diamond_ore"],
                "drops": {"diamond": 3},
                "path_drops": {},
                "requested": 1,
            },
        )

    ep, _bridge, source = make(mine=mine)
    out = ep.step({"skill": "mine", "args": {"block": "diamond_ore"}})
    assert out.observation.inventory == {"diamond": 3} and out.score == 0 and not out.terminated
    source.have |= {"story/mine_stone", "story/mine_diamond"}
    out = ep.step({"skill": "wait", "args": {}})
    assert out.result.reason == "no_target_nearby"  # the scripted bridge knows no wait
    assert (
        out.score == 100
        and out.terminated
        and out.new_milestones == ("story/mine_diamond", "story/mine_stone")
    )
    assert ep.evaluator.milestones.milestone_steps() == {
        "story/mine_stone": 2,
        "story/mine_diamond": 2,
    }
    assert "story/root" in source.asked[0] and not any(":" in a for a in source.asked[0])
    with pytest.raises(RuntimeError):
        ep.step({"skill": "wait", "args": {}})


def test_invalid_actions_never_reach_the_bridge_and_cost_an_action() -> None:
    ep, bridge, _ = make()
    sim = sim_episode("plains-1")
    for bad in (
        {"skill": "fly"},
        {"skill": "mine", "args": {"block": 3}},
        "mine",
        {"skill": "craft_grid", "args": {"station": "inventory", "grid": ["a"]}},
    ):
        a, b = ep.step(bad).result, sim.step(bad).result
        assert a.to_json() == b.to_json()
    assert ep.used == 4 and not any(m == "act" for m, _ in bridge.calls)


def test_malformed_bridge_results_are_faults() -> None:
    good = result("equip", {"item": "dirt"}, details={"slot": "hand"})
    assert build_result(good, {"item": "dirt"}).ok
    with pytest.raises(InfrastructureFault, match="malformed result"):
        build_result({"skill": "equip"}, {})
    with pytest.raises(InfrastructureFault, match="unknown failure reason"):
        build_result({**good, "ok": False, "reason": "out_of_cheese"}, {})
    with pytest.raises(InfrastructureFault, match="produced"):
        build_result({**good, "produced": {"dirt": "two"}}, {})


def test_the_encounter_log_compares_server_results_with_vanilla() -> None:
    ep, _, _ = make("enchantment", mirror=True, craft_grid=_craft)
    grid = [["paper", "paper"], ["paper", "leather"]]
    out = ep.step({"skill": "craft_grid", "args": {"station": "inventory", "grid": grid}})
    assert out.result.produced == {"enchanting_table": 1}
    [enc] = ep.evaluator.encounters.encounters
    assert (
        enc.kind == "craft" and enc.vanilla == ("book", 1) and enc.actual == ("enchanting_table", 1)
    )
    assert enc.rule == "recipes/minecraft:book" and enc.signature[0] == "craft_grid"
    vanilla_twin, _, _ = make("enchantment", mirror=False, craft_grid=_craft)
    vanilla_twin.step({"skill": "craft_grid", "args": {"station": "inventory", "grid": grid}})
    assert (
        vanilla_twin.evaluator.encounters.encounters == []
    )  # the log is kept for Mirror runs only


def test_bridge_configuration_comes_from_the_same_files_as_the_body() -> None:
    cfg = bridge_config(default_body_config(), vanilla_rules())
    assert set(cfg["skills"]) == set(skill_specs())
    count = next(a for a in cfg["skills"]["mine"]["args"] if a["name"] == "count")
    assert (count["min"], count["max"], count["default"]) == (1, 4, 1)
    assert (
        "oak_log" in cfg["body"]["aliases"]["log"]
        and "deepslate_iron_ore" in cfg["body"]["observable_blocks"]
    )
    assert cfg["fuel_ticks"]["coal"] == 1600 and cfg["fuel_order"][0] == "coal"
    assert cfg["world_bounds"] == {"min_x": -64, "max_x": 63, "min_z": -64, "max_z": 63}
    json.dumps(cfg)  # it travels as JSON


# -- advancement readers ------------------------------------------------------------------
def test_offline_uuids_match_the_server() -> None:
    assert offline_uuid("Notch") == "b50ad385-829d-3141-a216-7e7d7539ba7f"


def test_the_advancement_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / f"{offline_uuid('agent')}.json"
    path.write_text(
        json.dumps(
            {
                "minecraft:story/mine_stone": {
                    "criteria": {"get_stone": "2026-01-01 00:00:00 +0000"},
                    "done": True,
                },
                "minecraft:story/smelt_iron": {"criteria": {}, "done": False},
                "minecraft:recipes/misc/charcoal": {"criteria": {"x": "t"}, "done": True},
                "techtree:stick": {"criteria": {"obtain": "t"}, "done": True},
                "DataVersion": 3120,
            }
        )
    )
    assert read_advancement_file(path) == {"story/mine_stone", "techtree:stick"}
    assert read_advancement_file(tmp_path / "missing.json") == set()
    path.write_text("{broken")
    with pytest.raises(InfrastructureFault, match="cannot read the advancement file"):
        read_advancement_file(path)


def test_advancements_are_read_through_rcon(tmp_path: Path) -> None:
    granted = {"minecraft:story/mine_stone"}

    def handle(command: str) -> str:
        if command.startswith("execute if entity @a[name=agent,advancements={"):
            adv = command.split("{", 1)[1].split("=", 1)[0]
            return "Test passed, count: 1" if adv in granted else "Test failed"
        if command == "save-all flush":
            (tmp_path / "advancements").mkdir(exist_ok=True)
            doc = {a: {"criteria": {}, "done": True} for a in granted}
            (tmp_path / "advancements" / f"{offline_uuid('agent')}.json").write_text(
                json.dumps(doc)
            )
            return "Saved the game"
        if command.startswith("advancement revoke agent only minecraft:story/nope"):
            return "Unknown advancement: minecraft:story/nope"
        return "Couldn't revoke advancement"

    server = RconServer("pw", handle)
    try:
        with RconClient("127.0.0.1", server.port, "pw") as rcon:
            reader = RconAdvancements(rcon, "agent")
            assert reader.completed(["story/mine_stone", "story/smelt_iron"]) == {
                "story/mine_stone"
            }
            reader.check_available(["story/mine_stone"])
            with pytest.raises(InfrastructureFault, match="not available"):
                reader.check_available(["story/nope"])
            files = FileAdvancements(rcon, tmp_path, "agent")
            assert files.completed(["story/mine_stone", "story/smelt_iron"]) == {"story/mine_stone"}
        with RconClient("127.0.0.1", server.port, "pw") as rcon:
            weird = RconAdvancements(rcon, "agent")
            granted.clear()
            server.handler = lambda _c: "Unknown or incomplete command"
            with pytest.raises(InfrastructureFault, match="unexpected answer"):
                weird.completed(["story/mine_stone"])
    finally:
        server.close()
    with pytest.raises(ValueError, match="player names"):
        RconAdvancements(None, "bad name!")  # type: ignore[arg-type]


# -- deaths ---------------------------------------------------------------------------------------
class _Script:
    """An agent that plays a fixed list of actions, then stops."""

    name = "script"
    cross_episode_memory = False

    def __init__(self, actions: list[dict[str, Any]]):
        self.actions = list(actions)

    def start(self, ctx: Any) -> None:
        return None

    async def act(self, obs: Any) -> Any:
        from mirrorcraft.agents.base import Decision

        return Decision(self.actions.pop(0)) if self.actions else None

    def finish(self, obs: Any) -> None:
        return None


def test_a_death_mid_episode_ends_it_as_an_outcome() -> None:
    import asyncio

    from mirrorcraft.runner.episode import EpisodeSpec, run_episode
    from mirrorcraft.world.registry import load_world

    ep, bridge, _ = make()
    bridge.die_at_act = 2  # the player dies during the second call
    task = get_task("diamond")
    spec = EpisodeSpec("e1", "x", "plains-1", "vanilla", task, "script", "", "hidden", 0, 1)
    agent = _Script([{"skill": "wait", "args": {"ticks": 5}}] * 5)
    record, steps = asyncio.run(
        run_episode(
            spec,
            agent,  # type: ignore[arg-type]
            load_world("plains-1"),
            vanilla_rules(),
            vanilla_rules(),
            backend_episode=ep,  # type: ignore[arg-type]
        )
    )
    assert record.termination == "death" and record.actions_used == 2 and len(steps) == 2
    assert steps[-1].result["reason"] == "died"
    assert not ep.observe().alive
    assert agent.actions == [{"skill": "wait", "args": {"ticks": 5}}] * 3  # nothing after death


# -- harvest predictions: the bridge's and the embedded rules' agree -------------------------------
def _bridge_harvest(spec: dict[str, Any], pairs: list[tuple[str, str | None]]) -> list[bool]:
    answer: list[bool] = _bridge_ask(spec, pairs, "h.canHarvest(b, t)")
    return answer


def _bridge_ask(spec: dict[str, Any], pairs: list[Any], expression: str) -> list[Any]:
    """``expression`` (over ``h``, a Harvest of ``spec``, and each pair's ``b``, ``t``, and
    ``x`` for any further fields) for every pair, from the bridge's own code."""
    import shutil
    import subprocess

    from mirrorcraft.backends.mineflayer.bridge import find_bridge_dir

    if shutil.which("node") is None:
        pytest.skip("node is not on PATH")
    script = (
        "const { Harvest } = require('./src/harvest');"
        "let raw = ''; process.stdin.on('data', d => { raw += d });"
        "process.stdin.on('end', () => { const q = JSON.parse(raw); const h = new Harvest(q.spec);"
        f"process.stdout.write(JSON.stringify(q.pairs.map(([b, t, ...x]) => {expression}))) }})"
    )
    out = subprocess.run(
        ["node", "-e", script],
        cwd=find_bridge_dir(),
        input=json.dumps({"spec": spec, "pairs": pairs}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    answer: list[Any] = json.loads(out.stdout)
    return answer


@pytest.mark.parametrize("edited", [False, True])
def test_the_bridge_predicts_harvesting_exactly_as_the_embedded_rules(
    edited: bool, tmp_path: Path
) -> None:
    from mirrorcraft.backends.mineflayer.convert import harvest_config
    from mirrorcraft.rules.ruleset import RuleSet

    rules = vanilla_rules()
    if edited:  # a custom suite moves iron ore to diamond tier and stone to the axe
        tags = tmp_path / "p" / "data" / "minecraft" / "tags" / "blocks"
        (tags / "mineable").mkdir(parents=True)
        (tmp_path / "p" / "pack.mcmeta").write_text(
            '{"pack": {"pack_format": 10, "description": "t"}}'
        )
        (tags / "needs_diamond_tool.json").write_text('{"values": ["minecraft:iron_ore"]}')
        (tags / "mineable" / "axe.json").write_text('{"values": ["minecraft:stone"]}')
        rules = RuleSet.load([tmp_path / "p"], name="edited")
        assert rules.can_harvest("stone", "stone_axe") and not rules.can_harvest(
            "iron_ore", "iron_pickaxe"
        )
    tools: list[str | None] = [None, *sorted(rules.game.tools)]
    blocks = sorted(b for b, info in rules.game.blocks.items() if info.diggable)
    pairs = [(b, t) for b in blocks for t in tools]
    predicted = _bridge_harvest(harvest_config(rules), pairs)
    expected = [rules.can_harvest(b, t) for b, t in pairs]
    wrong = [pairs[i] for i, (p, e) in enumerate(zip(predicted, expected, strict=True)) if p != e]
    assert wrong == []


def test_the_bridge_times_digging_exactly_as_the_embedded_clock() -> None:
    """The embedded clock (simulator version 5) and the real-server bridge's dig-time
    prediction use one formula: every diggable block x tool, with Efficiency and Haste."""
    from mirrorcraft.backends.mineflayer.convert import harvest_config

    rules = vanilla_rules()
    tools: list[str | None] = [None, *sorted(rules.game.tools)]
    blocks = sorted(b for b, info in rules.game.blocks.items() if info.diggable)
    cases = [
        (b, t, rules.game.blocks[b].hardness, e, h)
        for b in blocks
        for t in tools
        for e, h in ((0, 0), (0, 1), (3, 1))
    ]
    predicted = _bridge_ask(
        harvest_config(rules),
        cases,
        "h.digTicks(b, x[0], t, { efficiency: x[1], haste: x[2] })",
    )
    # JSON has no Infinity: the bridge's "never breaks" arrives as null.
    got = [-1 if p is None else p for p in predicted]
    expected = [rules.dig_ticks(b, t, e, h) for b, t, _hard, e, h in cases]
    wrong = [(cases[i], g, x) for i, (g, x) in enumerate(zip(got, expected, strict=True)) if g != x]
    assert wrong == []
    assert sum(1 for x in expected if x > 0) > 1000  # most cases take time


def test_every_bridge_error_code_has_a_fault_kind_and_none_is_a_connection_fault_by_default() -> (
    None
):
    """Every code in bridge/src/protocol.js is classed explicitly; before, every code but
    ``timeout`` was a ``connection`` fault, so a bridge of another version or a refused setting
    was retried as if the line had dropped."""
    protocol = (find_bridge_dir() / "src" / "protocol.js").read_text()
    block = protocol.split("const CODES = Object.freeze({", 1)[1].split("})", 1)[0]
    codes = set(re.findall(r"'([a-z_]+)'", block))
    assert codes and codes <= set(CODE_KINDS), codes - set(CODE_KINDS)
    kinds = {code: BridgeError("x", code).kind for code in codes}
    assert kinds["timeout"] == "timeout"
    assert kinds["disconnected"] == "connection"
    assert kinds["unknown_method"] == kinds["invalid_params"] == "config"
    assert kinds["unsupported"] == kinds["internal"] == kinds["bad_json"] == "server"
    assert BridgeError("x", "exited").kind == "connection"
    assert BridgeError("x", "something new").kind == "server"
    assert BridgeUnavailable("node missing").kind == "config"
