"""attack, collect and trade: living entities and items on the ground."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mirrorcraft.body import results as r
from mirrorcraft.body.body import Body
from mirrorcraft.body.paths import Blocked, dist2
from mirrorcraft.body.results import ActionResult, failure
from mirrorcraft.body.skills.mining import blocked_result
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.world.state import Mob

NEVER_TARGETS = frozenset({"player"})


def entity_types(body: Body) -> frozenset[str]:
    """Living-entity ids the body knows: those with loot tables, plus those in the world."""
    from_tables = {
        loc.split("/", 1)[1]
        for loc in body.rules.loot_tables
        if loc.startswith("minecraft:entities/")
    }
    in_world = {m.type for m in body.state.mobs}
    return frozenset({t.split("/")[0] for t in from_tables} | in_world | {"villager"})


def nearest_mobs(body: Body, mob_type: str, radius: float) -> list[tuple[int, Mob]]:
    r2 = radius * radius
    found = [(dist2(m.pos, body.pos), m) for m in body.state.mobs if m.alive and m.type == mob_type]
    return sorted(((d, m) for d, m in found if d <= r2), key=lambda dm: (dm[0], dm[1].id))


def best_weapon(body: Body) -> ItemStack | None:
    tools = body.rules.game.tools
    owned = sorted({k for k in body.inventory.counts if k[0] in tools})
    if not owned:
        return None
    kind_rank = {"sword": 2, "axe": 1}
    best = max(
        owned,
        key=lambda k: (kind_rank.get(tools[k[0]].kind, 0), tools[k[0]].attack_damage, len(k[1]), k),
    )
    return ItemStack(best[0], 1, best[1])


def attack(body: Body, args: Mapping[str, Any]) -> ActionResult:
    target, count = args["target"], args["count"]
    if target in NEVER_TARGETS:
        return failure("attack", args, r.INVALID_ARGS, "players are never valid targets")
    if target not in entity_types(body):
        return failure(
            "attack", args, r.INVALID_ARGS, f"{target!r} is not a known living-entity id"
        )
    killed = 0
    drops: list[ItemStack] = []
    problem: ActionResult | None = None
    weapon = best_weapon(body)
    if weapon is not None:
        body.equip_key((weapon.item, weapon.enchantments))
    for _ in range(count):
        mobs = nearest_mobs(body, target, body.config.mine_radius)
        if not mobs:
            problem = failure(
                "attack",
                args,
                r.NO_TARGET_NEARBY,
                f"no {target} within {body.config.mine_radius:g} blocks",
            )
            break
        _d, mob = mobs[0]
        plan = body.approach(mob.pos, reach=2)
        if isinstance(plan, Blocked):
            problem = blocked_result("attack", args, target, plan)
            break
        drops.extend(body.walk(plan, sub=f"attack{mob.id}"))
        mob.alive = False
        body.state.version += 1
        drops.extend(body.roll_entity(mob.type, mob.id, weapon))
        killed += 1
    if killed == 0:
        assert problem is not None
        return problem
    gained = body.gain(drops)
    message = f"defeated {killed} of {count} {target}"
    if problem is not None:
        message += f"; stopped: {problem.message}"
    return ActionResult(
        "attack", args, True, "", message, produced=gained, details={"killed": killed}
    )


def collect(body: Body, args: Mapping[str, Any]) -> ActionResult:
    item = args["item"]
    if not body.is_item(item):
        return failure("collect", args, r.INVALID_ARGS, f"{item!r} is not a known item id")
    r2 = body.config.drop_radius**2
    near = sorted(
        ((dist2(d.pos, body.pos), i) for i, d in enumerate(body.state.drops) if d.item == item),
    )
    near = [(d2, i) for d2, i in near if d2 <= r2]
    if not near:
        return failure(
            "collect",
            args,
            r.NO_TARGET_NEARBY,
            f"no dropped {item} within {body.config.drop_radius:g} blocks",
        )
    _d2, index = near[0]
    drop = body.state.drops[index]
    plan = body.approach(drop.pos, reach=1)
    if isinstance(plan, Blocked):
        return blocked_result("collect", args, f"dropped {item}", plan)
    path = body.walk(plan, sub="collect")
    fits = body.inventory.room_for(drop.item, drop.enchantments)
    if fits <= 0:
        body.gain(path)
        return failure("collect", args, r.PICKUP_FAILED, "the inventory is full")
    take = min(fits, drop.count)
    drop.count -= take
    if drop.count == 0:
        body.state.drops.pop(index)
    gained = body.gain([ItemStack(item, take, drop.enchantments), *path])
    return ActionResult("collect", args, True, "", f"picked up {take} {item}", produced=gained)


def trade(body: Body, args: Mapping[str, Any]) -> ActionResult:
    villagers = nearest_mobs(body, "villager", body.config.mine_radius)
    if not villagers:
        return failure("trade", args, r.NO_TARGET_NEARBY, "no villager nearby")
    return failure("trade", args, r.NO_RESULT, "the villager offered no such trade")
