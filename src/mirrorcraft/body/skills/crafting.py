"""craft_grid, smelt and enchant: the skills that ask the active rules what an input makes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mirrorcraft.body import results as r
from mirrorcraft.body.blockstate import AIR_BLOCKS
from mirrorcraft.body.body import Body
from mirrorcraft.body.draws import keyed_random
from mirrorcraft.body.enchanting import (
    enchantability,
    is_enchantable,
    select_enchantments,
    slot_costs,
)
from mirrorcraft.body.events import RuleApplication
from mirrorcraft.body.results import ActionResult, failure
from mirrorcraft.body.skills.items import find_station
from mirrorcraft.rules.crafting import GRID_SIZES, CraftOutcome
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.special_recipes import repaired_damage
from mirrorcraft.world.state import StationState

LAPIS = "lapis_lazuli"
OPTION_COST = {"lowest": 1, "middle": 2, "highest": 3}


def craft_grid(body: Body, args: Mapping[str, Any]) -> ActionResult:
    station, grid = args["station"], args["grid"]
    size = GRID_SIZES[station]
    if len(grid) > size or len(grid[0]) > size:
        return failure(
            "craft_grid",
            args,
            r.INVALID_ARGS,
            f"a grid wider or taller than {size} needs station=crafting_table",
        )
    need: dict[str, int] = {}
    for row in grid:
        for cell in row:
            if cell is not None:
                if not body.is_item(cell):
                    return failure(
                        "craft_grid", args, r.INVALID_ARGS, f"{cell!r} is not a known item id"
                    )
                need[cell] = need.get(cell, 0) + 1
    if not need:
        return failure("craft_grid", args, r.INVALID_ARGS, "the grid is empty")
    for item, n in sorted(need.items()):
        have = body.inventory.total(item)
        if have < n:
            return failure(
                "craft_grid",
                args,
                r.MISSING_ITEM,
                f"the grid uses {n} {item} but {have} are owned",
                item=item,
            )
    if station == "crafting_table":
        body.keep = need  # the way to the table never pillars with the grid's blocks
        _pos, problem = find_station(body, "crafting_table", "craft_grid", args)
        if problem is not None:
            return problem
    outcome = body.rules.craft(grid, station)
    body.events.rule_applied(
        RuleApplication(
            "craft",
            body.step,
            body.signature,
            None if outcome is None else (outcome.item, outcome.count),
            f"recipes/{outcome.recipe}" if outcome else "recipes/<none>",
            grid=grid,
            station=station,
        )
    )
    if outcome is None:
        return failure(
            "craft_grid", args, r.NO_RESULT, "the result slot stayed empty; nothing was crafted"
        )
    taken: list[ItemStack] = []
    for item, n in need.items():
        taken += [t for t in body.spend(item, n) if item in (outcome.keeps, _repaired(outcome))]
    gained = body.gain([_result_stack(body, outcome, taken)])
    return ActionResult(
        "craft_grid",
        args,
        True,
        "",
        f"crafted {outcome.count} {outcome.item}",
        produced=gained,
        consumed=dict(sorted(need.items())),
        details={"result": {outcome.item: outcome.count}},
    )


def _repaired(outcome: CraftOutcome) -> str | None:
    return outcome.item if outcome.repair else None


def _result_stack(body: Body, outcome: CraftOutcome, taken: list[ItemStack]) -> ItemStack:
    """What the result slot held: a new stack, or (special recipes) a copy carried on."""
    if outcome.repair:
        game = body.rules.game
        top = game.durability[outcome.item]
        left = [top - t.damage for t in taken for _ in range(t.count)]
        bonus = int(game.special_recipes["crafting_special_repairitem"]["bonus_percent"])
        curses = _curses(body, taken)
        return ItemStack(outcome.item, 1, curses, repaired_damage(top, left, bonus))
    if outcome.keeps is not None and taken:
        kept = taken[0]
        return ItemStack(outcome.item, 1, kept.enchantments, kept.damage)
    return ItemStack(outcome.item, outcome.count)


def _curses(body: Body, taken: list[ItemStack]) -> tuple[tuple[str, int], ...]:
    """A repaired item keeps only curses (the highest level of each), as vanilla does."""
    specs = body.rules.game.enchanting.get("enchantments", {})
    best: dict[str, int] = {}
    for stack in taken:
        for name, level in stack.enchantments:
            spec = specs.get(name) or specs.get(f"minecraft:{name}") or {}
            if spec.get("curse"):
                best[name] = max(best.get(name, 0), level)
    return tuple(sorted(best.items()))


def _fuel_order(body: Body, item: str, count: int) -> list[str]:
    """The owned fuels ``smelt`` may burn, first choice first: other fuels in the body's
    preference order (``fuel_preference``, then the rest by name, never a tool or a facility
    the preference does not name), then the input itself, as in the game's fuel slot, but
    only its surplus: owned units beyond the ``count`` being smelted."""
    skip = set(body.rules.game.tools) | set(body.config.facilities)
    owned = sorted({n for (n, _e, _d) in body.inventory.counts if body.rules.fuel_ticks(n) > 0})
    ranked: list[str] = []
    for pref in body.config.fuel_preference:
        members = body._expand(pref) if pref.startswith("#") else frozenset({pref})
        ranked.extend(n for n in owned if n in members and n not in ranked)
    ranked.extend(n for n in owned if n not in ranked and n not in skip)
    others = [n for n in ranked if n != item]
    if item in ranked and body.inventory.total(item) > count:
        others.append(item)
    return others


def smelt(body: Body, args: Mapping[str, Any]) -> ActionResult:
    item, station, count = args["input"], args["station"], args["count"]
    if not body.is_item(item):
        return failure("smelt", args, r.INVALID_ARGS, f"{item!r} is not a known item id")
    have = body.inventory.total(item)
    if have < count:
        return failure(
            "smelt",
            args,
            r.MISSING_ITEM,
            f"smelting {count} {item} needs {count}; {have} owned",
            item=item,
        )
    body.keep = {item: count}  # the way to the furnace never pillars with what it smelts
    pos, problem = find_station(body, station, "smelt", args)
    if problem is not None:
        return problem
    furnace = body.state.stations.setdefault(pos, StationState(station))
    furnace.burn_now(body.clock)  # what is left of a fire lit by an earlier call
    recipe = body.rules.cooking(item, station)
    body.events.rule_applied(
        RuleApplication(
            "cook",
            body.step,
            body.signature,
            None if recipe is None else (recipe.result, recipe.count),
            f"recipes/{recipe.location}" if recipe else "recipes/<none>",
            item=item,
            station=station,
        )
    )
    if recipe is None:
        return failure(
            "smelt", args, r.NO_RESULT, f"the {station} did nothing with {item}; it was returned"
        )
    per_fuel_divisor = 1 if station == "furnace" else 2
    fuel_used: dict[str, int] = {}
    done = 0
    for _ in range(count):
        while furnace.burn_left < recipe.cooking_time:
            fuel = next(iter(_fuel_order(body, item, count)), None)
            if fuel is None:
                break
            body.spend(fuel, 1)
            fuel_used[fuel] = fuel_used.get(fuel, 0) + 1
            ticks = body.rules.fuel_ticks(fuel)
            body.events.rule_applied(
                RuleApplication(
                    "fuel",
                    body.step,
                    body.signature,
                    ticks,
                    f"fuel:{fuel}",
                    item=fuel,
                    station=station,
                )
            )
            furnace.burn_left += ticks // per_fuel_divisor
        if furnace.burn_left < recipe.cooking_time:
            break
        furnace.burn_left -= recipe.cooking_time
        body.clock += recipe.cooking_time  # the call waits for each item to cook
        done += 1
    furnace.lit_at = body.clock
    if done == 0:
        message = f"no owned fuel can run the {station}"
        if body.rules.fuel_ticks(item) > 0 and item in _fuel_order(body, item, 0):
            message += (
                f"; the {count} {item} are all to be smelted, and only {item} beyond"
                " the count smelted is burned"
            )
        if fuel_used:  # the fuel went in and burns, but too little of it for one item
            burned = ", ".join(f"{n} {f}" for f, n in sorted(fuel_used.items()))
            message = (
                f"the owned fuel ({burned}, now burning in the {station}) is too little to "
                f"smelt one {item}; no {item} was used, more fuel is needed"
            )
        return failure("smelt", args, r.NO_FUEL, message, fuel_used=fuel_used)
    body.spend(item, done)
    body.add_experience(recipe.experience * done)
    gained = body.gain([ItemStack(recipe.result, recipe.count * done)])
    consumed = {item: done}
    for f, n in fuel_used.items():
        consumed[f] = consumed.get(f, 0) + n
    message = f"{station} turned {done} {item} into {recipe.count * done} {recipe.result}"
    if done < count:
        message += f"; fuel ran out after {done}"
    return ActionResult(
        "smelt",
        args,
        True,
        "",
        message,
        produced=gained,
        consumed=dict(sorted(consumed.items())),
        details={"processed": done, "fuel": dict(sorted(fuel_used.items()))},
    )


def enchant(body: Body, args: Mapping[str, Any]) -> ActionResult:
    item, option = args["item"], args["option"]
    cost = OPTION_COST[option]
    if not body.is_item(item):
        return failure("enchant", args, r.INVALID_ARGS, f"{item!r} is not a known item id")
    plain = [k for k in body.inventory.counts if k[0] == item and not k[1]]
    if not plain:
        owned_any = body.inventory.total(item) > 0
        return failure(
            "enchant",
            args,
            r.NOT_ENCHANTABLE if owned_any else r.MISSING_ITEM,
            f"{item} is already enchanted" if owned_any else f"no {item} in the inventory",
        )
    if not is_enchantable(body.rules.game, item):
        return failure("enchant", args, r.NOT_ENCHANTABLE, f"{item} cannot be enchanted")
    lapis = body.inventory.total(LAPIS)
    if lapis < cost:
        return failure(
            "enchant",
            args,
            r.MISSING_ITEM,
            f"option {option} needs {cost} lapis_lazuli; {lapis} owned",
            item=LAPIS,
        )
    table, problem = find_station(body, "enchanting_table", "enchant", args)
    if problem is not None:
        return problem
    # Like the player's enchantment seed, the offer only changes after an enchantment.
    seed_parts = (body.episode_seed, "enchant", body.enchant_count, item)
    offer = slot_costs(
        keyed_random(*seed_parts, "offer"),
        count_bookshelves(body, table),
        enchantability(body.rules.game, item),
    )
    required = offer.costs[cost - 1]
    if required == 0:
        return failure(
            "enchant",
            args,
            r.NO_RESULT,
            f"the table offers no {option} option for {item} right now",
            offered=list(offer.costs),
        )
    if body.level < required:
        return failure(
            "enchant",
            args,
            r.NOT_ENOUGH_LEVELS,
            f"option {option} needs level {required}; level is {body.level}",
        )
    enchantments = select_enchantments(
        body.rules.game, item, required, keyed_random(*seed_parts, option)
    )
    if not enchantments:
        return failure("enchant", args, r.NO_RESULT, f"the table offered nothing for {item}")
    # The table takes the least worn plain copy; enchanting keeps its wear.
    chosen = min(plain, key=lambda k: (k[2], k))
    body.inventory.take(chosen)
    body.drop_missing_equipment()
    body.spend(LAPIS, cost)
    body.level -= cost
    body.enchant_count += 1
    result_item = "enchanted_book" if item == "book" else item
    stack = ItemStack(result_item, 1, enchantments, chosen[2])
    body.gain([stack])
    body.events.item_enchanted(stack, cost, body.step)
    shown = ", ".join(f"{n} {lv}" for n, lv in enchantments)
    return ActionResult(
        "enchant",
        args,
        True,
        "",
        f"enchanted {item}: {shown}",
        produced={result_item: 1},
        consumed={item: 1, LAPIS: cost},
        details={"enchantments": [list(e) for e in enchantments], "levels_spent": cost},
    )


def count_bookshelves(body: Body, table: tuple[int, int, int]) -> int:
    """Bookshelves that power the table, as 1.19's EnchantmentMenu counts them.

    For each of the 8 cells around the table, at its level and one above: when both are
    air, the bookshelves two blocks out in that direction count (at both heights); for a
    diagonal direction also the two shelves beside that corner. A shelf behind any block
    (a torch, a carpet, water) does not count.
    """
    tx, ty, tz = table
    state = body.state

    def shelf(dx: int, dy: int, dz: int) -> int:
        return 1 if state.block((tx + dx, ty + dy, tz + dz)) == "bookshelf" else 0

    n = 0
    for dz in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if (dx, dz) == (0, 0):
                continue
            if not all(state.block((tx + dx, ty + dy, tz + dz)) in AIR_BLOCKS for dy in (0, 1)):
                continue
            for dy in (0, 1):
                n += shelf(dx * 2, dy, dz * 2)
                if dx != 0 and dz != 0:
                    n += shelf(dx * 2, dy, dz) + shelf(dx, dy, dz * 2)
    return n
