"""attack, collect and trade: living entities and items on the ground."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mirrorcraft.body import results as r
from mirrorcraft.body.body import Body
from mirrorcraft.body.inventory import Key, stack_of
from mirrorcraft.body.paths import Blocked, dist2
from mirrorcraft.body.results import ActionResult, failure
from mirrorcraft.body.skills.mining import blocked_result, stopped_result, with_produced
from mirrorcraft.body.wear import copies
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.world.state import Mob

NEVER_TARGETS = frozenset({"player"})


def entity_types(body: Body) -> frozenset[str]:
    """Living-entity ids the body knows: those with loot tables, plus those in the world."""
    in_world = {m.type for m in body.state.mobs}
    return _with_tables(body.rules.loot_tables) | in_world | {"villager"}


_TABLE_ENTITIES: dict[int, tuple[object, frozenset[str]]] = {}


def _with_tables(tables: Mapping[str, object]) -> frozenset[str]:
    """The entity ids a rule set's loot tables name (kept per rule set's table map)."""
    hit = _TABLE_ENTITIES.get(id(tables))
    if hit is None or hit[0] is not tables:
        names = frozenset(
            loc.split("/", 1)[1].split("/")[0]
            for loc in tables
            if loc.startswith("minecraft:entities/")
        )
        if len(_TABLE_ENTITIES) > 64:
            _TABLE_ENTITIES.clear()
        hit = _TABLE_ENTITIES[id(tables)] = (tables, names)
    return hit[1]


def nearest_mobs(body: Body, mob_type: str, radius: float) -> list[tuple[int, Mob]]:
    r2 = radius * radius
    found = [(dist2(m.pos, body.pos), m) for m in body.state.mobs if m.alive and m.type == mob_type]
    return sorted(((d, m) for d, m in found if d <= r2), key=lambda dm: (dm[0], dm[1].id))


def best_weapon(body: Body) -> Key | None:
    """The copy the body fights with: the best sword, else the best axe; None: bare hands.

    Other tools are left out of fights (a hit costs a digger 2 durability).
    """
    tools = body.rules.game.tools
    kind_rank = {"sword": 2, "axe": 1}
    owned = sorted(
        {k for k in body.inventory.counts if k[0] in tools and tools[k[0]].kind in kind_rank}
    )
    if not owned:
        return None
    best = max(
        owned,
        key=lambda k: (kind_rank[tools[k[0]].kind], tools[k[0]].attack_damage, len(k[1]), k[1]),
    )
    return copies(body.inventory, best[0])[0]


def _fight(body: Body, mob: Mob, weapon: Key | None) -> Key | None:
    """Hit a mob until it dies; every hit wears the weapon (it may break mid-fight).

    Returns the weapon copy in hand afterwards. Hits deal the weapon's attack damage
    (1 bare-handed); no critical hits or effects. Each hit waits for the weapon's attack
    cooldown (20 ticks over its attack speed; 5 bare-handed), on the body's clock.
    """
    tools = body.rules.game.tools
    info = body.rules.game.entities.get(mob.type)
    health = info.max_health if info is not None else 1.0
    hit = 0
    while health > 0:
        spec = tools[weapon[0]] if weapon is not None else None
        health -= spec.attack_damage if spec is not None else 1.0
        body.clock += math.ceil(20 / (spec.attack_speed if spec is not None else 4.0))
        if weapon is not None and spec is not None:
            worn = body.wear(weapon, spec.wear_hit, f"hit{mob.id}.{hit}")
            weapon = worn.after if not worn.broke else best_weapon(body)
            if weapon is not None:
                body.equip_key(weapon)
        hit += 1
    return weapon


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
        body.equip_key(weapon)
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
        walked = body.walk(plan, sub=f"attack{mob.id}")
        drops.extend(walked.drops)
        if walked.stopped is not None:
            problem = stopped_result(body, "attack", args, target, walked.stopped)
            break
        # The loot sees the weapon as it was when the fight began (the killing blow's item).
        used = stack_of(weapon) if weapon is not None else None
        weapon = _fight(body, mob, weapon)
        mob.alive = False
        body.state.version += 1
        body.state.mobs_changed += 1
        drops.extend(body.roll_entity(mob.type, mob.id, used, mob.variant))
        info = body.rules.game.entities.get(mob.type)
        if info is not None and info.experience[1] > 0:
            body.gain_experience(info.experience, "entity", mob.id)
        killed += 1
    if killed == 0:
        assert problem is not None
        return with_produced(problem, body.gain(drops))
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
    walked = body.walk(plan, sub="collect")
    path = walked.drops
    if walked.stopped is not None:
        return with_produced(
            stopped_result(body, "collect", args, f"dropped {item}", walked.stopped),
            body.gain(path),
        )
    fits = body.inventory.room_for(drop.item, drop.enchantments)
    if fits <= 0:
        body.gain(path)
        return failure("collect", args, r.PICKUP_FAILED, "the inventory is full")
    take = min(fits, drop.count)
    drop.count -= take
    if drop.count == 0:
        body.state.drops.pop(index)
    body.state.drops_changed += 1
    gained = body.gain([ItemStack(item, take, drop.enchantments), *path])
    return ActionResult("collect", args, True, "", f"picked up {take} {item}", produced=gained)


def trade(body: Body, args: Mapping[str, Any]) -> ActionResult:
    villagers = nearest_mobs(body, "villager", body.config.mine_radius)
    if not villagers:
        return failure("trade", args, r.NO_TARGET_NEARBY, "no villager nearby")
    return failure("trade", args, r.NO_RESULT, "the villager offered no such trade")
