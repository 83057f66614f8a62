"""The second round of simulator shortcuts gives exactly what the long way gives.

Inventory totals, stacks and used slots kept per version against plain recomputation;
the surface approach's column read in one slice against the cell-by-cell climb; search
hits built from lists against per-index conversion; the nearby census against a
brute-force scan of the whole cube around the body.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import numpy as np

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body import paths
from mirrorcraft.body.draws import canon_stacks
from mirrorcraft.body.inventory import Inventory, stack_of
from mirrorcraft.body.paths import Approach, Blocked, _line_approach, _surface_approach
from mirrorcraft.body.wear import apply_wear, copies
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.world.index import BlockIndex, Hit, Pos
from mirrorcraft.world.placed import PlacedBlocks
from mirrorcraft.world.state import WorldState
from tests.simtools import act, episode


def _plain_slots(inv: Inventory) -> int:
    return sum(-(-c // max(inv.stack_sizes.get(k[0], 64), 1)) for k, c in inv.counts.items())


def _plain_totals(inv: Inventory) -> dict[str, int]:
    out: dict[str, int] = {}
    for (name, _e, _d), c in inv.counts.items():
        out[name] = out.get(name, 0) + c
    return dict(sorted(out.items()))


def _plain_stacks(inv: Inventory) -> list[ItemStack]:
    out = []
    for key, count in sorted(inv.counts.items()):
        size = max(inv.stack_sizes.get(key[0], 64), 1)
        while count > 0:
            out.append(stack_of(key, min(count, size)))
            count -= size
    return out


def test_inventory_caches_equal_plain_recomputation() -> None:
    rules = vanilla_rules()
    inv = Inventory(rules.game.items, 12)
    rng = random.Random(5)
    items = ["dirt", "cobblestone", "ender_pearl", "iron_pickaxe", "stone_axe", "oak_log"]
    seen_names, seen_kinds = frozenset[str](), inv.kinds
    for _ in range(600):
        op = rng.random()
        item = rng.choice(items)
        if op < 0.45:
            inv.add(ItemStack(item, rng.randint(1, 70)))
        elif op < 0.65:
            keys = inv.keys_of(item)
            if keys:
                inv.take(rng.choice(keys), rng.randint(1, 40))
        elif op < 0.8:
            have = inv.total(item)
            if have:
                inv.remove(item, rng.randint(1, have))
        else:
            tools = [k for k in inv.counts if k[0] in rules.game.durability]
            if tools:
                apply_wear(inv, rules.game, rng.choice(tools), rng.randint(1, 90), None)
        assert inv.used_slots() == _plain_slots(inv)
        got = inv.totals()
        assert got == _plain_totals(inv) and list(got) == list(_plain_totals(inv))
        got["dirt"] = -1  # callers own the dict they get
        assert inv.totals() == _plain_totals(inv)
        assert inv.stacks() == _plain_stacks(inv)
        names = frozenset(k[0] for k in inv.counts)
        if names != seen_names:  # ``kinds`` moves exactly when the owned item ids change
            assert inv.kinds != seen_kinds
            seen_names, seen_kinds = names, inv.kinds
        else:
            assert inv.kinds == seen_kinds
    assert inv.used_slots() > 0


def _surface_the_long_way(
    state: WorldState,
    start: Pos,
    target: Pos,
    reach: float,
    can_clear: Callable[[str], bool],
    max_digs: int,
) -> Approach | Blocked | None:
    """The surface approach as it was written first: the climb read cell by cell (with
    blocks enough to pillar up the column)."""
    up: list[Pos] = []
    up_from: list[Pos] = []
    x, y, z = start
    top = state.surface_y(x, z)
    for cy in range(y + 1, top + 2):
        c = (x, cy, z)
        if state.in_bounds(c) and state.block_id(c) not in state.passable_ids:
            if not can_clear(state.block(c)):
                return Blocked(c, state.block(c))
            up.append(c)
            up_from.append((x, max(y, cy - 2), z))
    ground = [
        state.surface_y(x + dx, z + dz)
        for dx, dz in ((1, 0), (-1, 0), (0, 1), (0, -1))
        if 0 <= x + dx < state.size and 0 <= z + dz < state.size
    ]
    out_y = max([top + 1, *([min(ground)] if ground else [])])
    pillars = tuple(
        (sum(1 for f in up_from if f[1] <= fy), (x, fy, z))
        for fy in range(y, out_y)
        if state.in_bounds((x, fy, z)) and state.block((x, fy, z)) != "water"
    )
    tx, _ty, tz = target
    above = (tx, state.surface_y(tx, tz) + 1, tz)
    if not state.in_bounds(above):
        return None
    if above == target:
        for dx, dz in ((1, 0), (0, 1), (-1, 0), (0, -1)):
            nx, nz = tx + dx, tz + dz
            if 0 <= nx < state.size and 0 <= nz < state.size:
                stand = (nx, state.surface_y(nx, nz) + 1, nz)
                return Approach(stand, tuple(up), tuple(up_from), pillars)
        return None
    down = _line_approach(state, above, target, reach, can_clear, max_digs - len(up))
    if isinstance(down, Blocked):
        return down
    return Approach(down.stand, (*up, *down.digs), (*up_from, *down.froms), pillars)


def test_surface_approach_equals_the_cell_by_cell_climb() -> None:
    ep = episode("plains-1")
    state = ep.body.state
    rng = random.Random(3)
    blocked_some = climbed = 0
    fussy = {"stone", "deepslate", "granite"}
    for i in range(400):
        x, z = rng.randrange(state.size), rng.randrange(state.size)
        y = rng.randint(state.min_y, state.surface_y(x, z) + 3)
        tx, tz = rng.randrange(state.size), rng.randrange(state.size)
        ty = rng.randint(state.min_y, state.surface_y(tx, tz) + 1)
        clear: Callable[[str], bool] = (lambda n: True) if i % 2 else (lambda n: n not in fussy)
        args = (state, (x, y, z), (tx, ty, tz), 4.5, clear, 1000)
        got, want = _surface_approach(*args, 10**6), _surface_the_long_way(*args)
        assert got == want, (x, y, z, tx, ty, tz)
        blocked_some += isinstance(got, Blocked)
        climbed += isinstance(got, Approach) and bool(got.digs) and got.digs[0][:1] == (x,)
    assert blocked_some > 10 and climbed > 10


def _hits_the_long_way(index, sub, origin, ids, pos, limit, horizontal_only, k):  # type: ignore[no-untyped-def]
    px, py, pz = pos
    pyi = py - index.min_y
    x0, z0, y0 = origin
    ids_arr = np.array(sorted(ids), dtype=np.uint16)
    xs, zs, ys = np.nonzero(sub == ids_arr[0] if len(ids) == 1 else np.isin(sub, ids_arr))
    if not xs.size:
        return []
    dx, dy, dz = xs + x0 - px, ys + y0 - pyi, zs + z0 - pz
    horiz = dx * dx + dz * dz
    d2s = horiz + dy * dy
    ok = np.nonzero((horiz if horizontal_only else d2s) <= limit)[0]
    keep = max(32, k)
    if ok.size > keep:
        keys = index._order_keys(d2s[ok], xs[ok] + x0, ys[ok] + y0, zs[ok] + z0)
        ok = ok[np.argpartition(keys, keep)[:keep]]
    return [
        Hit(
            int(d2s[i]),
            (int(xs[i]) + x0, int(ys[i]) + y0 + index.min_y, int(zs[i]) + z0),
            int(sub[xs[i], zs[i], ys[i]]),
        )
        for i in ok.tolist()
    ]


def test_search_hits_equal_per_index_conversion() -> None:
    ep = episode("taiga-1")
    state = ep.body.state
    index, ids = state.index, state.loaded.world.palette.ids
    rng = random.Random(9)
    groups = [["stone"], ["dirt", "grass_block"], ["stone", "andesite", "gravel"]]
    groups = [[ids[n] for n in g if n in ids] for g in groups]
    found = 0
    for _ in range(150):
        x, z = rng.randrange(6, state.size - 6), rng.randrange(6, state.size - 6)
        yi = rng.randrange(6, state.grid.shape[2] - 6)
        pos = (x, yi + state.min_y, z)
        sub = state.grid[x - 6 : x + 7, z - 6 : z + 7, yi - 6 : yi + 7]
        for g in groups:
            for horizontal in (False, True):
                args = (sub, (x - 6, z - 6, yi - 6), g, pos, 36, horizontal, 8)
                got = index._hits_in(*args)
                assert got == _hits_the_long_way(index, *args)
                assert all(type(v) is int for h in got for v in (h.d2, *h.pos, h.block_id))
                found += len(got)
    assert found > 1000


def test_rare_search_equals_a_brute_force_scan() -> None:
    ep = episode("plains-1", inventory={"iron_pickaxe": 2})
    for _ in range(6):
        act(ep, "mine", block="coal_ore", count=2)
    state = ep.body.state
    ids = state.loaded.world.palette.ids
    want_ids = [ids["coal_ore"], ids["iron_ore"]]
    for b in want_ids:
        assert state.index.is_rare(b)
    pos, radius = ep.body.pos, 24.0
    got = state.index.nearest(state.grid, state.placed, want_ids, pos, radius, k=10_000)
    xs, zs, ys = np.nonzero(np.isin(state.grid, want_ids))
    brute = sorted(
        Hit(
            (int(x) - pos[0]) ** 2 + (int(y) + state.min_y - pos[1]) ** 2 + (int(z) - pos[2]) ** 2,
            (int(x), int(y) + state.min_y, int(z)),
            int(state.grid[x, z, y]),
        )
        for x, y, z in zip(xs, ys, zs, strict=True)
    )
    brute = [h for h in brute if h.d2 <= radius * radius]
    key = [(h.d2, h.pos[1], h.pos[0], h.pos[2], h.block_id) for h in brute]
    assert [(h.d2, h.pos[1], h.pos[0], h.pos[2], h.block_id) for h in got] == sorted(key)
    assert len(got) > 3


def test_census_equals_a_brute_force_scan() -> None:
    ep = episode("jungle-2", inventory={"iron_pickaxe": 4, "dirt": 64, "cobblestone": 64})
    rng = random.Random(2)
    obs = ep.observer
    radius = ep.body.config.observe_radius
    for step in range(25):
        if step % 3 == 2:
            act(ep, "place", block=rng.choice(["dirt", "cobblestone"]))
        else:
            act(ep, "mine", block=rng.choice(["stone", "log", "dirt", "coal_ore"]), count=1)
        state, pos = ep.body.state, ep.body.pos
        got = state.index.nearest_each(state.grid, state.placed, obs._observable_ids, pos, radius)
        r = int(np.ceil(radius))
        x0, z0 = max(pos[0] - r, 0), max(pos[2] - r, 0)
        y0 = max(pos[1] - state.min_y - r, 0)
        cube = state.grid[
            x0 : pos[0] + r + 1, z0 : pos[2] + r + 1, y0 : pos[1] - state.min_y + r + 1
        ]
        gx, gz, gy = np.indices(cube.shape)
        d2 = (gx + x0 - pos[0]) ** 2 + (gz + z0 - pos[2]) ** 2
        d2 = d2 + (gy + y0 + state.min_y - pos[1]) ** 2
        want: dict[int, int] = {}
        for b in obs._observable_ids:
            near = d2[(cube == b) & (d2 <= int(radius * radius))]
            if near.size:
                want[b] = int(near.min())
        assert got == want, f"census differs after step {step}"


def _plan_the_long_way(state, start, target, reach, can_clear, max_digs, blocks):  # type: ignore[no-untyped-def]
    """``plan_approach`` with the way over the surface always searched to the full cap."""
    direct = _line_approach(state, start, target, reach, can_clear, max_digs)
    short = 0
    if isinstance(direct, Approach):
        pillars = paths._line_pillars(state, start, target, direct)
        short = len(pillars) if len(pillars) > blocks else 0
        direct = Approach(direct.stand, direct.digs, direct.froms, pillars)
    climbs = target[1] - start[1] > reach
    holds = (
        isinstance(direct, Approach)
        and not short
        and (not climbs or paths._keeps_reach(state, direct, target, reach))
    )
    if isinstance(direct, Approach) and holds and not direct.digs:
        return direct
    around = _surface_approach(state, start, target, reach, can_clear, max_digs, blocks)
    if isinstance(around, Approach) and (
        isinstance(direct, Blocked) or not holds or len(around.digs) < len(direct.digs)
    ):
        return around
    if short:
        return Blocked(start, state.block(start), needs_blocks=short)
    return direct


def test_capped_surface_search_makes_the_same_plans() -> None:
    ep = episode("taiga-1")
    state = ep.body.state
    rng = random.Random(4)
    kinds: set[str] = set()
    for i in range(500):
        x, z = rng.randrange(state.size), rng.randrange(state.size)
        y = rng.randint(state.surface_y(x, z) - 12, state.surface_y(x, z) + 1)
        tx = min(max(x + rng.randint(-14, 14), 0), state.size - 1)
        tz = min(max(z + rng.randint(-14, 14), 0), state.size - 1)
        ty = rng.randint(state.surface_y(tx, tz) - 14, state.surface_y(tx, tz) + 1)
        cap = rng.choice([1000, 12, 3])
        clear: Callable[[str], bool] = (lambda n: True) if i % 3 else (lambda n: n != "stone")
        args = (state, (x, y, z), (tx, ty, tz), 4.5, clear, cap, rng.choice([0, 3, 1000]))
        got, want = paths.plan_approach(*args), _plan_the_long_way(*args)
        assert got == want, args[1:3]
        kinds.add(type(got).__name__ + ("-dug" if getattr(got, "digs", ()) else ""))
    assert {"Approach", "Approach-dug", "Blocked"} <= kinds


def test_remembered_harvest_answers_and_tool_copies_equal_fresh_ones() -> None:
    rules = vanilla_rules()
    tools = [None, *sorted(rules.game.tools)]
    for block in sorted(rules.game.blocks):
        for tool in tools:
            first = rules.can_harvest(block, tool)
            assert first == rules._can_harvest(block, tool) == rules.can_harvest(block, tool)
    inv = Inventory(rules.game.items)
    inv.add(ItemStack("iron_pickaxe", 3))
    inv.add(ItemStack("iron_pickaxe", 1, (("efficiency", 2),)))
    rng = random.Random(1)
    for _ in range(200):
        keys = copies(inv, "iron_pickaxe")
        plain = sorted(
            (k for k in inv.counts if k[0] == "iron_pickaxe"),
            key=lambda k: (len(k[1]), k[1], k[2]),
            reverse=True,
        )
        assert keys == plain
        if not keys:
            break
        keys.clear()  # callers own the list they get
        assert copies(inv, "iron_pickaxe") == plain
        apply_wear(inv, rules.game, rng.choice(plain), rng.randint(1, 40), None)


def _rare_the_long_way(index, grid, bid, pos, radius, k):  # type: ignore[no-untyped-def]
    """Nearest blocks of one rare id measured over every generated position of it, all of
    them sorted by (distance, y, x, z): no cut."""
    px, py, pz = pos
    pyi = py - index.min_y
    idx, xs, ys, zs = index.rare[bid]
    dx, dy, dz = xs - px, ys - pyi, zs - pz
    d2s = dx * dx + dz * dz + dy * dy
    sel = np.nonzero(d2s <= int(radius * radius))[0]
    sel = sel[grid.ravel()[idx[sel]] == bid]
    hits = [
        Hit(int(d2s[i]), (int(xs[i]), int(ys[i]) + index.min_y, int(zs[i])), bid)
        for i in sel.tolist()
    ]
    hits.sort(key=lambda h: (h.d2, h.pos[1], h.pos[0], h.pos[2], h.block_id))
    return hits[:k]


def test_rare_search_with_a_cut_equals_the_plain_scan() -> None:
    ep = episode("jungle-1", inventory={"iron_pickaxe": 2, "iron_axe": 2})
    for _ in range(4):
        act(ep, "mine", block="log", count=3)
        act(ep, "mine", block="coal_ore", count=2)
    state = ep.body.state
    index, ids = state.index, state.loaded.world.palette.ids
    rare = [b for n, b in ids.items() if b in index.rare and index.counts.get(b, 0) > 50][:6]
    assert len(rare) >= 3
    rng = random.Random(8)
    found = 0
    for _ in range(80):
        x, z = rng.randrange(state.size), rng.randrange(state.size)
        pos = (x, rng.randint(state.min_y, state.surface_y(x, z) + 2), z)
        for b in rare:
            for k, radius in ((1, 8.0), (2, 16.0), (8, 32.0), (1, 32.0)):
                got = index.nearest(state.grid, PlacedBlocks(), [b], pos, radius, k)
                assert got == _rare_the_long_way(index, state.grid, b, pos, radius, k)
                found += len(got)
    assert found > 500


def test_rare_search_keeps_the_first_blocks_in_order_among_equally_near_ones() -> None:
    """Rings of equally near blocks, more than the search keeps before its final sort: the
    hits are still the first in (distance, y, x, z) order (numpy's partial sort used to
    decide which of the equally near ones survived the cut)."""
    grid = np.zeros((48, 48, 40), dtype=np.uint16)
    grid[:, :, :4] = 1  # a common floor
    rng = random.Random(6)
    centres = []
    for _ in range(30):
        cx, cz, cy = rng.randrange(3, 45), rng.randrange(3, 45), rng.randrange(8, 37)
        for dx, dy, dz in [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]:
            grid[cx + dx, cz + dz, cy + dy] = 2
        for dx, dz in [(2, 1), (1, 2), (-2, 1), (-1, -2), (2, -1)]:
            if 0 <= cx + dx < 48 and 0 <= cz + dz < 48:
                grid[cx + dx, cz + dz, cy] = 2
        centres.append((cx, cy - 5, cz))
    world = type("World", (), {"grid": grid, "min_y": -5})()
    index = BlockIndex(world)  # type: ignore[arg-type]
    assert 2 in index.rare
    for pos in centres:
        for k in (1, 2):
            got = index.nearest(grid, PlacedBlocks(), [2], pos, 12.0, k)
            assert got == _rare_the_long_way(index, grid, 2, pos, 12.0, k)


def test_canonical_drops_of_one_stack_equal_the_merged_form() -> None:
    def long_way(stacks: list[ItemStack]):  # type: ignore[no-untyped-def]
        merged: dict[tuple[str, tuple[tuple[str, int], ...]], int] = {}
        for s in stacks:
            merged[(s.item, s.enchantments)] = merged.get((s.item, s.enchantments), 0) + s.count
        return tuple(sorted((k[0], c, k[1]) for k, c in merged.items()))

    rng = random.Random(7)
    pool = [ItemStack("dirt", 1), ItemStack("book", 1, (("mending", 1),)), ItemStack("coal", 0)]
    for n in range(200):
        stacks = [rng.choice(pool).with_count(rng.randint(0, 3)) for _ in range(n % 4)]
        assert canon_stacks(stacks) == long_way(stacks)


def test_records_written_from_encoded_steps_equal_the_long_way(tmp_path: Path) -> None:
    """A worker sends its trace encoded (``encode_step``) and the store writes a record
    without ``asdict``: the stored texts are what ``json.dumps`` of ``to_json()`` gives,
    with ``asdict`` for the dataclasses inside (nested ones too)."""
    import json
    from dataclasses import asdict, dataclass

    from mirrorcraft.runner.records import EncodedStep, StepRecord, encode_step, json_default
    from mirrorcraft.runner.store import ResultStore
    from tests.test_analysis_helpers import make_record

    @dataclass
    class Odd:  # an agent may send a dataclass as (part of) its action
        block: str
        count: int

    @dataclass
    class Nest:
        inner: list[Odd]
        pair: tuple[Odd, int]
        by_name: dict[str, Odd]

    nest = Nest([Odd("a", 1), Odd("b", 2)], (Odd("c", 3), 4), {"z": Odd("d", 5)})
    record = make_record(rules="M02", encounters=[(1, "recipes/minecraft:torch")], score=3)
    record.memory = {"calls": {"plan": 2}, "sizes": [1, (2, 3)]}
    record.encounters[0].actual = [nest, {"drops": (Odd("e", 6),)}]
    steps = [
        StepRecord(record.episode_id, i, a, "t", {"ok": True}, {"dirt": i}, [1, 2, 3], i, [], [])
        for i, a in enumerate([{"skill": "wait"}, Odd("stone", 2), {"args": (1, 2)}, nest], 1)
    ]
    assert record.json_text() == json.dumps(record.to_json(), sort_keys=True)
    assert '"inner": [{"block": "a", "count": 1}' in record.json_text()
    for s in steps:
        long_way = json.dumps(s.to_json(), sort_keys=True, default=asdict)
        assert encode_step(s) == EncodedStep(s.episode_id, s.step, long_way)
        assert json.dumps(s.to_json(), sort_keys=True, default=json_default) == long_way
    stored = []
    for i, trace in enumerate([steps, [encode_step(s) for s in steps]]):
        with ResultStore(tmp_path / f"r{i}.sqlite") as store:
            store.write_episode(record, trace)
            stored.append(
                (
                    list(store.db.execute("SELECT * FROM episodes")),
                    list(store.db.execute("SELECT * FROM steps ORDER BY step")),
                )
            )
    assert stored[0] == stored[1] and len(stored[0][1]) == 4


def test_nearby_entities_kept_between_moves_equal_a_fresh_count() -> None:
    """The observation keeps the living mobs near the body until it moves or a mob dies:
    after every step (kills included) they equal a count made from scratch."""
    ep = episode("taiga-1", inventory={"iron_sword": 1})  # cows, sheep, chickens near

    def fresh() -> list[tuple[str, float, int]]:
        body = ep.body
        r2 = body.config.observe_radius**2
        near: dict[str, list[int]] = {}
        for m in body.state.mobs:
            d2 = sum((a - b) ** 2 for a, b in zip(m.pos, body.pos, strict=True))
            if m.alive and d2 <= r2:
                near.setdefault(m.type, []).append(d2)
        return sorted((t, round(min(ds) ** 0.5, 1), len(ds)) for t, ds in near.items())

    kills = 0
    for target in ["chicken", "wait", "cow", "chicken", "wait", "sheep", "cow"]:
        if target == "wait":
            out = act(ep, "wait", ticks=20)
        else:
            out = act(ep, "attack", target=target, count=1)
            kills += bool(out.result.ok)
        got = sorted((n.id, n.distance, n.count) for n in out.observation.nearby_entities)
        assert got == fresh()
    assert kills >= 2
    # A mob that dies while the body stands still (as the attack skill marks it).
    before = ep.observe().nearby_entities
    mob = min(
        (m for m in ep.body.state.mobs if m.alive and m.type == before[0].id),
        key=lambda m: sum((a - b) ** 2 for a, b in zip(m.pos, ep.body.pos, strict=True)),
    )
    mob.alive = False
    ep.body.state.mobs_changed += 1
    after = sorted((n.id, n.distance, n.count) for n in ep.observe().nearby_entities)
    assert after == fresh() != sorted((n.id, n.distance, n.count) for n in before)


def test_the_block_index_tables_equal_a_plain_computation_on_an_uneven_grid() -> None:
    """Sections cut by the grid's edge (no side a multiple of 8), and ids of every
    abundance: air, one past the census' list limit, one common but listed, rare ones."""
    rng = np.random.default_rng(3)
    grid = rng.choice(
        np.array([0, 1, 2, 3, 4, 5], dtype=np.uint16),
        size=(67, 61, 83),
        p=[0.35, 0.45, 0.18, 0.015, 0.004, 0.001],
    )
    grid[60:, :, 70:] = 7  # a rare block only in the last, partial sections
    world = type("World", (), {"grid": grid, "min_y": -10})()
    index = BlockIndex(world)  # type: ignore[arg-type]
    flat = grid.ravel()
    tally = np.bincount(flat)
    assert index.counts == {b: int(n) for b, n in enumerate(tally) if n}
    assert tally[1] > 100_000 and 40_000 < tally[2] <= 100_000  # the limits are crossed
    assert sorted(index.rare) == [3, 4, 5, 7]
    for b in index.rare:
        idx, xs, ys, zs = index.rare[b]
        assert idx.tolist() == np.flatnonzero(flat == b).tolist()
        assert (grid[xs, zs, ys] == b).all()
    padded = np.pad(grid, [(0, -d % 8) for d in grid.shape], constant_values=65535)
    nx, nz, ny = (d // 8 for d in padded.shape)
    assert sorted(index.sections) == [1, 2]
    for b in (1, 2):
        holds = (padded == b).reshape(nx, 8, nz, 8, ny, 8).any(axis=(1, 3, 5))
        assert index.sections[b].tolist() == np.argwhere(holds).tolist()
    r = random.Random(4)
    for _ in range(40):
        pos = (r.randrange(67), r.randrange(83) - 10, r.randrange(61))
        for radius in (3.0, 9.0, 20.0):
            ids = [1, 2, 3, 4, 5, 7]
            assert index.nearest_each(
                grid, PlacedBlocks(), ids, pos, radius
            ) == index._nearest_each_py(grid, PlacedBlocks(), frozenset(ids), pos, radius)


def test_surface_heights_follow_every_block_change() -> None:
    """``surface_y`` (the generated heights, then each changed column read again) equals
    reading the column from the grid, before and after digging, placing and clearing."""
    ep = episode("taiga-1", inventory={"iron_pickaxe": 2, "iron_shovel": 2, "dirt": 64})
    state = ep.body.state
    rng = random.Random(5)

    def check(columns: list[tuple[int, int]]) -> None:
        for x, z in columns:
            assert state.surface_y(x, z) == state._surface_read(x, z), (x, z)

    everywhere = [(x, z) for x in range(state.size) for z in range(state.size)]
    check(rng.sample(everywhere, 400))
    for _ in range(3):
        act(ep, "mine", block="stone", count=4)
        act(ep, "mine", block="dirt", count=2)
    x, _y, z = ep.body.pos
    top = state.surface_y(x + 3, z + 3)
    state.set_block((x + 3, top + 4, z + 3), "stone")  # a block floating above the ground
    state.set_block((x + 4, state.surface_y(x + 4, z + 4), z + 4), "air")  # the top dug out
    for column in ((x + 5, z + 5), (x + 6, z + 6)):  # a column emptied to the bottom
        for yy in range(state.min_y, state.max_y):
            state.set_block((column[0], yy, column[1]), "air")
    assert state.surface_y(x + 3, z + 3) == top + 4
    assert state.surface_y(x + 5, z + 5) == state.min_y
    changed = sorted({(p[0], p[2]) for p, _old, _new in state.changes})
    assert len(changed) > 5
    check(changed + rng.sample(everywhere, 400))
    state.set_block((x + 3, top + 4, z + 3), "air")  # and gone again
    assert state.surface_y(x + 3, z + 3) == top
