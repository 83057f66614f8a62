"""Each shortcut of the performance work gives exactly what the long way gives.

The fixtures in test_perf_reference.py pin whole episodes; these tests pin the pieces:
the incremental census against a full recomputation, remembered loot rolls against
fresh ones, the encounter log's skipped replays against real replays, the planner's
compiled costs against ``_method_cost``, and the disk-cached, copy-on-write worlds
against freshly generated ones.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from mirrorcraft.agents.knowledge import build_belief
from mirrorcraft.agents.plan_types import Memory, goal_of
from mirrorcraft.agents.planner import INF, Planner
from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.body.draws import LazyKeyedRandom, keyed_random
from mirrorcraft.evaluator.encounters import EncounterLog
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.world import cache
from mirrorcraft.world.registry import biome_spec, mob_variants, palette_for, world_table
from mirrorcraft.world.state import WorldState
from tests.simtools import act, episode

SUITES = ("M01", "M02", "M03", "M04", "M05", "M06")


def _full_census(ep):  # type: ignore[no-untyped-def]
    b, obs = ep.body, ep.observer
    return b.state.index.nearest_each(
        b.state.grid, b.state.placed, obs._observable_ids, b.pos, b.config.observe_radius
    )


@pytest.mark.parametrize("world", ["plains-1", "jungle-2", "taiga-1"])
def test_incremental_census_equals_a_full_recomputation(world: str) -> None:
    ep = episode(world, inventory={"iron_pickaxe": 4, "dirt": 64, "cobblestone": 64}, budget=400)
    rng = random.Random(world)
    targets = ["stone", "dirt", "log", "coal_ore", "iron_ore", "sand", "gravel", "leaves"]
    checked_in_place = 0
    for _ in range(60):
        roll = rng.random()
        before = ep.body.pos
        if roll < 0.6:
            act(ep, "mine", block=rng.choice(targets), count=1)
        elif roll < 0.85:
            act(ep, "place", block=rng.choice(["dirt", "cobblestone"]))
        else:
            act(ep, "prepare_access", target=rng.choice(targets))
        got = ep.observer._census()
        assert got == _full_census(ep), f"census differs after step {ep.used}"
        checked_in_place += ep.body.pos == before
    assert checked_in_place > 5  # the incremental path was exercised


def test_the_census_spares_equal_a_full_recomputation_while_blocks_go_and_come() -> None:
    """Mining one id again and again from one spot takes its nearest from the kept spares;
    placing a block of that id must drop them (it may be nearer than any spare)."""
    ep = episode("plains-1", inventory={"iron_pickaxe": 4, "stone": 64}, budget=400)
    rng = random.Random(3)
    used_spares = in_place = 0
    for _ in range(120):
        before = ep.body.pos
        if rng.random() < 0.7:
            act(ep, "mine", block="stone", count=1)
        else:
            act(ep, "place", block="stone")
        stone = ep.body.state.loaded.world.palette.ids["stone"]
        had = list(ep.observer._spares.get(stone, ()))
        got = ep.observer._census()
        assert got == _full_census(ep), f"census differs after step {ep.used}"
        if ep.body.pos == before:
            in_place += 1
            used_spares += bool(had) and ep.observer._spares.get(stone, []) != []
    assert in_place > 30 and used_spares > 10  # both paths were exercised


def test_blocks_that_appear_after_the_spares_were_kept_are_not_missed() -> None:
    ep = episode("plains-1", budget=10)
    state, obs = ep.body.state, ep.observer
    x, y, z = ep.body.pos
    stone = state.loaded.world.palette.ids["stone"]
    obs._census()
    (nearest,) = state.nearest(["stone"], ep.body.pos, ep.body.config.observe_radius)
    state.set_block(nearest.pos, "air")
    obs._census()
    assert obs._spares.get(stone)  # the lookup kept spares
    above = [(x, y + 1, z), (x, y + 2, z)]  # squared distances 1 and 4, nearer than any spare
    assert min(d2 for d2, _ in obs._spares[stone]) > 4 and all(
        state.block(p) == "air" for p in above
    )
    for p in above:
        state.set_block(p, "stone")
    assert obs._census()[stone] == 1
    state.set_block(above[0], "air")
    assert obs._census() == _full_census(ep) and obs._census()[stone] == 4


def test_remembered_loot_rolls_equal_fresh_rolls() -> None:
    rules = resolve_rules("M04")
    rng = random.Random(5)
    blocks = ["stone", "coal_ore", "iron_ore", "oak_log", "oak_leaves", "gravel", "grass_block"]
    tools = [None, ItemStack("iron_pickaxe"), ItemStack("iron_pickaxe", damage=40)]
    for i in range(300):
        block = rng.choice(blocks)
        table = rules.block_table(block)
        assert table is not None
        tool = rng.choice(tools)
        ctx = rules.block_context(block, tool)
        parts = (9, i, f"k{i % 7}")
        remembered = rules.roll(table, ctx, LazyKeyedRandom(*parts))
        fresh = rules.roll(table, ctx, keyed_random(*parts))  # a plain Random is never memoised
        assert remembered == fresh, (block, tool)
    assert rules._loot_memo  # some rolls (stone, logs) draw nothing and were remembered
    # Rolls that draw numbers (leaves, gravel) are never remembered.
    assert not any(key[1].endswith(("oak_leaves", "gravel")) for key in rules._loot_memo)


def test_mob_rolls_with_random_counts_are_not_remembered() -> None:
    rules = vanilla_rules()
    table = rules.entity_table("cow")
    assert table is not None
    ctx = LootContext(this_entity=EntityState("cow"), killer_is_player=True)
    counts = {
        tuple((s.item, s.count) for s in rules.roll(table, ctx, LazyKeyedRandom(1, i, "e")))
        for i in range(40)
    }
    assert len(counts) > 1


@pytest.mark.parametrize("suite", SUITES)
def test_skipped_replays_are_exactly_the_unchanged_tables(suite: str) -> None:
    vanilla, active = vanilla_rules(), resolve_rules(suite)
    log = EncounterLog(vanilla, active)
    changed = {
        loc
        for (cat, loc), doc in active.documents.items()
        if cat == "loot_tables" and vanilla.documents.get((cat, loc)) != doc
    }
    for location in active.loot_tables:
        if location in changed:
            assert not log.same_table(location), location
    # A table judged the same rolls the same drops under both rule sets.
    rng = random.Random(suite)
    same = sorted(loc for loc in active.loot_tables if log.same_table(loc))
    for location in rng.sample(same, 15):
        ctx = LootContext(tool=ItemStack("iron_pickaxe"), this_entity=EntityState("player"))
        for i in range(3):
            a = active.roll(active.loot_tables[location], ctx, keyed_random(1, i, location))
            v = vanilla.roll(vanilla.loot_tables[location], ctx, keyed_random(1, i, location))
            assert a == v, location


def test_compiled_unit_costs_equal_method_costs() -> None:
    for rules_name in ("vanilla", "M02", "M05"):
        rules = resolve_rules(rules_name)
        ep = episode("savanna-1", rules_name, inventory={"oak_log": 3, "cobblestone": 5, "coal": 2})
        act(ep, "mine", block="log", count=2)
        obs = ep.observe()
        planner = Planner(build_belief(rules), Memory())
        goal = goal_of(rules, get_task("diamond").final.advancement)
        planner.decide(obs, goal)  # settles planner.unit with the compiled costs
        cost, _tools = planner._cost_function()
        produced, _uses = planner._compiled
        compared = 0
        for item, entries in produced.items():
            for entry, way in zip(entries, planner.b.produced_by.get(item, ()), strict=True):
                want = planner._method_cost(way, item, 1)
                got = cost(entry)
                if want >= INF:
                    assert got >= INF, (item, way)
                else:
                    assert got == want, (item, way)
                    compared += 1
        assert compared > 20


def test_explore_costs_in_one_loop_equal_explore_cost() -> None:
    """``Planner.explore_costs`` (what the compiled unit costs read) gives, slot by slot,
    what ``explore_cost`` gives, for visible, absent, cooling-down, seen and unseen
    blocks and mobs."""
    import random

    import numpy as np

    rules = resolve_rules("vanilla")
    obs = episode("savanna-1", "vanilla").observe()
    rng = random.Random(5)
    names = [*sorted(rules.game.blocks)[:60], "cow", "pig", "zombie", "sheep"]
    met: set[float] = set()
    for _ in range(200):
        planner = Planner(build_belief(rules), Memory(step=rng.randint(0, 30)))
        planner.decide(obs, goal_of(rules, get_task("diamond").final.advancement))
        pick = lambda k: set(rng.sample(names, k))  # noqa: E731
        planner.near = {n: 1.0 for n in pick(8)}
        planner.entities = pick(2)
        planner.mem.absent, planner.mem.seen = pick(6), pick(20)
        planner.mem.explore_cooldown = {n: rng.randint(0, 40) for n in pick(8)}
        wanted = [(i + 1, n, rng.choice(["block", "mob"])) for i, n in enumerate(names)]
        out = np.full(len(wanted) + 1, -1.0)
        planner.explore_costs(wanted, out)
        assert out[0] == -1.0
        assert [out[i] for i, _, _ in wanted] == [planner.explore_cost(n, k) for _, n, k in wanted]
        met |= {float(out[i]) for i, _, _ in wanted}
    assert met == {0.0, INF, 40.0, 1.5, 4.0}


def test_cached_world_is_the_generated_world(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mirrorcraft.rules.game import load_game_data
    from mirrorcraft.world.generate import generate

    monkeypatch.setenv(cache.ENV, str(tmp_path / "worlds"))
    game = load_game_data()
    entry = world_table()["snowy_plains-2"]
    args = ("snowy_plains-2", biome_spec(entry.biome), entry.seed, palette_for(game))
    fresh = generate(*args, mob_variants(game))
    stored, grid_file = cache.generate_cached(*args, mob_variants(game))
    loaded, again = cache.generate_cached(*args, mob_variants(game))
    assert grid_file is not None and again == grid_file
    for world in (stored, loaded):
        assert np.array_equal(world.grid, fresh.grid)
        assert np.array_equal(world.heightmap, fresh.heightmap)
        assert (world.spawn, world.mobs, world.ponds) == (fresh.spawn, fresh.mobs, fresh.ponds)
        assert world.fingerprint == fresh.fingerprint
    # A damaged entry is not trusted: it is replaced by a freshly generated world.
    (grid_file.parent / "meta.json").write_text("{not json")
    repaired, path = cache.generate_cached(*args, mob_variants(game))
    assert np.array_equal(repaired.grid, fresh.grid) and path is not None
    # So is a grid changed on disk with its shape and ids intact (one cell of stone made
    # diamond ore): it loaded as this world, under this world's fingerprint.
    cell = np.load(path, mmap_mode="r+", allow_pickle=False)
    x, z, y = (int(v) for v in np.argwhere(cell == cell.max())[0])
    cell[x, z, y] = cell[x, z, y] - 1 if cell[x, z, y] else 1
    cell.flush()
    del cell
    healed, _ = cache.generate_cached(*args, mob_variants(game))
    assert np.array_equal(healed.grid, fresh.grid)


def test_episode_grids_are_private_copies(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mirrorcraft.world.registry import load_custom_world

    monkeypatch.setenv(cache.ENV, str(tmp_path / "worlds"))
    entry = world_table()["plains-2"]
    loaded = load_custom_world("plains-2-copy", biome_spec(entry.biome), entry.seed)
    assert loaded.grid_file is not None
    on_disk = loaded.grid_file.read_bytes()
    a, b = WorldState.fresh(loaded), WorldState.fresh(loaded)
    x, z = 5, 7
    y = a.surface_y(x, z)
    original = a.block((x, y, z))
    a.set_block((x, y, z), "air")
    assert a.block((x, y, z)) == "air"
    assert b.block((x, y, z)) == original
    assert loaded.world.grid[x, z, y - loaded.world.min_y] == a.loaded.world.palette.ids[original]
    assert loaded.grid_file.read_bytes() == on_disk
    monkeypatch.setenv(cache.ENV, "off")
    plain = load_custom_world("plains-2-copy", biome_spec(entry.biome), entry.seed)
    assert plain.grid_file is None
    assert np.array_equal(WorldState.fresh(plain).grid, loaded.world.grid)


def _plain_nearby_drops(ep):  # type: ignore[no-untyped-def]
    """The nearby-drops field as the observation computed it before piles were kept."""
    b = ep.body
    dr2 = b.config.drop_radius**2
    mins: dict[str, int] = {}
    counts: dict[str, int] = {}
    for d in b.state.drops:
        d2 = sum((u - v) ** 2 for u, v in zip(d.pos, b.pos, strict=True))
        if d2 <= dr2:
            mins[d.item] = min(d2, mins.get(d.item, d2))
            counts[d.item] = counts.get(d.item, 0) + d.count
    return sorted(
        ((item, round(mins[item] ** 0.5, 1), counts[item]) for item in mins),
        key=lambda t: (t[1], t[0]),
    )


def test_nearby_drops_from_piles_equal_a_plain_count() -> None:
    # A nearly full inventory: what is mined lands on the ground; some of it is picked up.
    filler = {f"{c}_wool": 64 for c in ("white", "red", "blue", "green", "black", "brown")}
    filler.update({f"{c}_concrete": 64 for c in ("white", "red", "blue", "green", "black")})
    filler.update({f"{c}_terracotta": 64 for c in ("white", "red", "blue", "green", "black")})
    filler.update({f"{c}_stained_glass": 64 for c in ("white", "red", "blue", "green", "black")})
    filler.update({f"{c}_carpet": 64 for c in ("white", "red", "blue", "green", "black")})
    filler.update({f"{c}_bed": 1 for c in ("white", "red", "blue")})
    filler.update({"iron_pickaxe": 2, "iron_shovel": 1, "iron_axe": 1})
    filler.update({"dirt": 63, "cobblestone": 63, "sand": 63})  # every slot taken
    ep = episode("plains-1", inventory=filler, budget=300)
    rng = random.Random(11)
    picked = 0
    for _ in range(100):
        roll = rng.random()
        if roll < 0.55:
            act(ep, "mine", block=rng.choice(["stone", "dirt", "log", "sand"]), count=2)
        elif roll < 0.75:  # frees room in a stack, so a later pickup can succeed
            act(ep, "place", block=rng.choice(["cobblestone", "dirt", "sand"]))
        else:
            out = act(ep, "collect", item=rng.choice(["cobblestone", "dirt", "sand"]))
            picked += out.result.ok
        got = [(n.id, n.distance, n.count) for n in ep.observe().nearby_drops]
        assert got == _plain_nearby_drops(ep)
    assert ep.body.state.drops and picked > 0 and ep.body.state.drops_changed == picked


def test_nearby_drops_read_by_section_equal_a_plain_count_across_section_edges() -> None:
    """Piles are kept by 16-column section; the observation reads the sections its radius
    touches: drops just inside and just outside the radius, in every neighbouring section
    and far away, give what a scan of every drop gives, wherever the body stands."""
    from mirrorcraft.world.state import GroundDrop

    ep = episode("plains-1", budget=50)
    state, rng = ep.body.state, random.Random(5)
    for _ in range(3000):
        pos = (rng.randrange(state.size), rng.randrange(-60, 120), rng.randrange(state.size))
        state.drops.append(GroundDrop(rng.choice(["dirt", "stone", "sand"]), 1, pos, ()))
    r = int(ep.body.config.drop_radius)
    for spot in [(16, 70, 16), (15, 70, 31), (31 - r, 64, 32 + r), (r, 70, state.size - 1)]:
        for dx, dz in ((r, 0), (0, -r), (r - 1, 1)):  # on and near the radius
            state.drops.append(GroundDrop("gravel", 2, (spot[0] + dx, spot[1], spot[2] + dz), ()))
        ep.body.pos = spot
        got = [(n.id, n.distance, n.count) for n in ep.observe().nearby_drops]
        assert got == _plain_nearby_drops(ep)
        assert any(item == "gravel" for item, _d, _n in got)


def test_a_cache_folder_others_may_write_is_not_used(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    monkeypatch.setenv(cache.ENV, str(folder))
    entry = world_table()["plains-1"]
    from mirrorcraft.rules.game import load_game_data

    game = load_game_data()
    world, grid_file = cache.generate_cached(
        "plains-1", biome_spec(entry.biome), entry.seed, palette_for(game), mob_variants(game)
    )
    assert grid_file is None and not any(folder.iterdir())
    assert world.grid.shape[0] > 0
