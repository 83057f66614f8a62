"""Skill handlers: ``handler(body, args) -> ActionResult``, one module per family."""

from __future__ import annotations

from mirrorcraft.body.body import Handler
from mirrorcraft.body.skills import crafting, entities, items, mining, movement

HANDLERS: dict[str, Handler] = {
    "mine": mining.mine,
    "prepare_access": mining.prepare_access,
    "explore": movement.explore,
    "ascend": movement.ascend,
    "wait": movement.wait,
    "craft_grid": crafting.craft_grid,
    "smelt": crafting.smelt,
    "enchant": crafting.enchant,
    "attack": entities.attack,
    "collect": entities.collect,
    "trade": entities.trade,
    "place": items.place,
    "equip": items.equip,
}
