"""``mirrorcraft rules``: inspect a rule set (vanilla plus optional datapacks)."""

from __future__ import annotations

import argparse
import random
from typing import Any

from mirrorcraft.commands.common import UserError, parse_json_arg, print_json
from mirrorcraft.rules.crafting import GRID_SIZES
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.items import ItemStack, item_totals
from mirrorcraft.rules.recipes import CookingRecipe, InertRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import RuleSet

MAX_ENCHANT_LEVEL = 255
"""The highest level the game's /enchant and item data can express."""


MAX_ROLLS = 10_000
"""The most breaks ``rules loot --rolls`` makes."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("rules", help="inspect a rule set: counts, crafting, smelting, loot")
    p.add_argument(
        "--pack",
        action="append",
        default=[],
        metavar="RULES",
        help="a suite id (M01-M06), a suite manifest (.yaml) or a datapack folder/zip, layered"
        " over vanilla (repeatable, in load order)",
    )
    rsub = p.add_subparsers(dest="rules_command", metavar="ACTION", required=True)
    rsub.add_parser("info", help="what the rule set holds, and its fingerprint")
    c = rsub.add_parser("craft", help="what a grid produces")
    c.add_argument(
        "grid", help="rows of item ids or null, e.g. '[[\"oak_log\", null], [null, null]]'"
    )
    c.add_argument(
        "--station",
        choices=sorted(GRID_SIZES),
        default="crafting_table",
        help="inventory (2x2) or crafting_table (3x3; the default)",
    )
    s = rsub.add_parser("smelt", help="what a furnace-like station makes of an item")
    s.add_argument("item", help="item id put in the input slot, e.g. raw_iron")
    s.add_argument(
        "--station",
        default="furnace",
        choices=["furnace", "blast_furnace", "smoker", "campfire"],
        help="which furnace-like station (default: furnace)",
    )
    m = rsub.add_parser("loot", help="roll a block's loot table")
    m.add_argument("block", help="block id broken, e.g. iron_ore")
    m.add_argument("--tool", default=None, help="item id of the tool used (default: bare hand)")
    m.add_argument(
        "--enchant",
        action="append",
        default=[],
        metavar="NAME=LEVEL",
        help=f"an enchantment on the tool, e.g. fortune=3, level 1 to {MAX_ENCHANT_LEVEL}"
        " (repeatable)",
    )
    m.add_argument("--seed", type=int, default=0, help="seed of the loot draws (default: 0)")
    m.add_argument(
        "--rolls",
        type=int,
        default=1,
        help=f"how many times to break the block (1-{MAX_ROLLS})",
    )
    p.set_defaults(handler=run)


def _load(packs: list[str]) -> RuleSet:
    from mirrorcraft.backends.rulesets import pack_layer

    try:
        return RuleSet.load([pack_layer(p) for p in packs])
    except RulesError as exc:
        raise UserError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    rs = _load(args.pack)
    if args.rules_command == "info":
        kinds: dict[str, int] = {}
        for recipe in rs.recipes.values():
            name = (
                "crafting_shaped"
                if isinstance(recipe, ShapedRecipe)
                else "crafting_shapeless"
                if isinstance(recipe, ShapelessRecipe)
                else recipe.kind
                if isinstance(recipe, CookingRecipe | InertRecipe)
                else "other"
            )
            kinds[name] = kinds.get(name, 0) + 1
        print_json(
            {
                "name": rs.name,
                "packs": list(rs.packs),
                "fingerprint": rs.fingerprint,
                "recipes": kinds,
                "loot_tables": len(rs.loot_tables),
                "advancements": sorted(rs.advancements),
                "item_tags": len(rs.item_tags),
                "block_tags": len(rs.block_tags),
            }
        )
        return 0
    if args.rules_command == "craft":
        grid = parse_json_arg(args.grid, "grid")
        if not isinstance(grid, list) or not all(isinstance(r, list) for r in grid):
            raise UserError("grid must be a list of rows (lists)")
        try:
            cells = tuple(
                tuple(None if c is None else normalize_id(c) for c in row) for row in grid
            )
        except (ValueError, AttributeError) as exc:
            raise UserError(f"bad grid cell: {exc}") from None
        for row in cells:
            for cell in row:
                if cell is not None:
                    _known(rs, cell, "in the grid")
        size = GRID_SIZES[args.station]
        if len(cells) > size or any(len(r) > size for r in cells):
            raise UserError(f"a {args.station} grid is at most {size}x{size}")
        out = rs.craft(cells, args.station)
        print_json(
            {
                "result": None
                if out is None
                else {"item": out.item, "count": out.count, "recipe": out.recipe}
            }
        )
        return 0
    if args.rules_command == "smelt":
        cooked = rs.cooking(_known(rs, _item(args.item), "to smelt"), args.station)
        print_json(
            {
                "result": None
                if cooked is None
                else {"item": cooked.result, "count": cooked.count, "recipe": cooked.location}
            }
        )
        return 0
    block = _item(args.block)
    table = rs.block_table(block)
    if table is None:
        raise UserError(f"no loot table for block {block!r}")
    enchants = []
    for spec in args.enchant:
        name, _, level = spec.partition("=")
        if not level.isdigit() or not 1 <= int(level) <= MAX_ENCHANT_LEVEL:
            raise UserError(
                f"--enchant takes NAME=LEVEL with LEVEL from 1 to {MAX_ENCHANT_LEVEL}, got {spec!r}"
            )
        enchant = _item(name)
        if f"minecraft:{enchant}" not in rs.game.enchanting["enchantments"]:
            raise UserError(f"--enchant: unknown enchantment {enchant!r}")
        enchants.append((enchant, int(level)))
    tool = (
        ItemStack(_known(rs, _item(args.tool), "for --tool"), 1, tuple(enchants))
        if args.tool
        else None
    )
    harvest = rs.can_harvest(block, tool.item if tool else None)
    if not 1 <= args.rolls <= MAX_ROLLS:
        raise UserError(f"--rolls takes 1 to {MAX_ROLLS}, got {args.rolls}")
    rolls = []
    for i in range(args.rolls):
        drops = (
            rs.roll(table, rs.block_context(block, tool), random.Random(f"{args.seed}:{i}"))
            if harvest
            else []
        )
        rolls.append(item_totals(drops))  # one item can come as several stacks
    print_json({"block": block, "harvestable": harvest, "rolls": rolls})
    return 0


def _known(rs: RuleSet, item: str, where: str) -> str:
    """``item`` if the game has it; a misspelt id would otherwise read as a valid answer
    (an unknown tool harvests nothing, an unknown input smelts into nothing)."""
    if item not in rs.game.items:
        raise UserError(f"unknown item {item!r} {where}")
    return item


def _item(raw: str) -> str:
    try:
        return normalize_id(raw)
    except ValueError as exc:
        raise UserError(str(exc)) from None
