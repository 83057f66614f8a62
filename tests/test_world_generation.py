"""World generation: deterministic, cached, resources in reach, ores underground."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from mirrorcraft.rules.game import load_game_data
from mirrorcraft.world.generate import generate
from mirrorcraft.world.registry import (
    UnknownWorldError,
    biome_spec,
    load_world,
    palette_for,
    world_ids,
    world_table,
)
from mirrorcraft.world.state import WorldState

NEEDED_BLOCKS = [
    ("#logs", None),
    ("stone", None),
    ("coal_ore", "deepslate_coal_ore"),
    ("iron_ore", "deepslate_iron_ore"),
    ("diamond_ore", "deepslate_diamond_ore"),
    ("lapis_ore", "deepslate_lapis_ore"),
    ("obsidian", None),
    ("sugar_cane", None),
    ("water", None),
]


def test_ten_worlds_two_per_biome() -> None:
    table = world_table()
    main = world_ids()
    assert len(main) == 10 and all(table[w].study == "main" for w in main)
    biomes = sorted(table[w].biome for w in main)
    assert biomes == sorted(["plains", "taiga", "snowy_plains", "jungle", "savanna"] * 2)
    # the main study's worlds are unchanged by the horizon study's (ids, biomes and seeds)
    assert {w: (table[w].biome, table[w].seed) for w in main} == {
        f"{b}-{k}": (b, 1000 * i + 100 + k)
        for i, b in enumerate(["plains", "taiga", "snowy_plains", "jungle", "savanna"], 1)
        for k in (1, 2)
    }


def test_the_horizon_study_has_25_worlds_of_its_own() -> None:
    table = world_table()
    horizon = world_ids("horizon")
    assert len(horizon) == 25 and len(table) == 35
    biomes = [table[w].biome for w in horizon]
    assert all(
        biomes.count(b) == 5 for b in ["plains", "taiga", "snowy_plains", "jungle", "savanna"]
    )
    seeds = [e.seed for e in table.values()]
    assert len(set(seeds)) == len(seeds)  # no seed is reused
    assert set(world_ids(None)) == set(table)
    with pytest.raises(UnknownWorldError, match="unknown world study"):
        world_ids("moon")


@pytest.mark.parametrize("world_id", ["plains-h3", "savanna-h5"])
def test_horizon_worlds_generate_with_every_task_resource(world_id: str) -> None:
    """Two of the 25 here (the controls check all of them: mirrorcraft controls --study horizon)."""
    test_every_world_has_every_task_resource_and_ores_are_underground(world_id)
    entry = world_table()[world_id]
    assert load_world(world_id).world.biome == entry.biome


def test_generation_is_deterministic_and_seed_dependent() -> None:
    entry = world_table()["taiga-1"]
    palette = palette_for(load_game_data())
    a = generate("taiga-1", biome_spec(entry.biome), entry.seed, palette)
    b = generate("taiga-1", biome_spec(entry.biome), entry.seed, palette)
    c = generate("taiga-1", biome_spec(entry.biome), entry.seed + 1, palette)
    digest = lambda w: hashlib.sha256(w.grid.tobytes()).hexdigest()  # noqa: E731
    assert digest(a) == digest(b) and a.mobs == b.mobs and a.spawn == b.spawn
    assert digest(a) != digest(c)
    assert load_world("taiga-1") is load_world("taiga-1")  # generated once per process


@pytest.mark.parametrize("world_id", world_ids())
def test_every_world_has_every_task_resource_and_ores_are_underground(world_id: str) -> None:
    loaded = load_world(world_id)
    w = loaded.world
    names = {w.palette.names[i] for i in np.unique(w.grid).tolist()}
    assert any(n.endswith("_log") for n in names)
    for main, deep in NEEDED_BLOCKS:
        if main == "#logs":
            continue
        assert main in names or (deep and deep in names), f"{world_id} lacks {main}"
    assert {m.type for m in w.mobs} >= {"cow"}
    # Ores never show at the surface: every ore block is below its column's top block.
    ore_ids = [w.palette.ids[n] for n in names if n.endswith("_ore")]
    xs, zs, ys = np.nonzero(np.isin(w.grid, ore_ids))
    assert xs.size > 0
    assert np.all(ys + w.min_y < w.heightmap[xs, zs])
    # The spawn stands on dry ground.
    x, y, z = w.spawn
    state = WorldState.fresh(loaded)
    assert state.block((x, y - 1, z)) not in ("water", "air")


def test_each_episode_starts_from_a_fresh_copy() -> None:
    loaded = load_world("plains-1")
    a = WorldState.fresh(loaded)
    pos = loaded.world.spawn
    a.set_block((pos[0], pos[1] - 1, pos[2]), "air")
    a.mobs[0].alive = False
    b = WorldState.fresh(loaded)
    assert b.block((pos[0], pos[1] - 1, pos[2])) != "air"
    assert b.mobs[0].alive
    assert not loaded.world.grid.flags.writeable  # the shared world cannot be changed by accident


def test_world_controls_are_recorded_in_the_spec() -> None:
    for biome in ("plains", "taiga", "snowy_plains", "jungle", "savanna"):
        rt = biome_spec(biome).runtime
        assert rt.difficulty == "peaceful" and not rt.daylight_cycle and rt.experience_level == 100
        assert set(rt.effects) == {"haste", "speed", "resistance", "strength"}
