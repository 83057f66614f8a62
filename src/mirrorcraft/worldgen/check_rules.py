"""Structural checks of 1.19.0-1.19.2 rule files: recipes, loot tables, advancements, tags
and functions. Cooking results with a count (a MirrorCraft extension) are reported as
warnings: the embedded simulator reads them, a vanilla 1.19 server rejects the recipe."""

from __future__ import annotations

import re
import shlex
from typing import Any

from mirrorcraft.worldgen import vanilla_ids
from mirrorcraft.worldgen.checks import Ctx, full, is_num, type_name

COOKING = ("smelting", "blasting", "smoking", "campfire_cooking")
RECIPE_TYPES = frozenset(
    {"crafting_shaped", "crafting_shapeless", "stonecutting", "smithing", *COOKING}
)
EXTENSION_WARNING = (
    "cooking result with a count is a MirrorCraft extension: a vanilla 1.19 server "
    "rejects this recipe (and, since it replaces the vanilla file, the input then cooks to nothing)"
)


# -- recipes ------------------------------------------------------------------------------
def _ingredient(ctx: Ctx, value: Any, where: str) -> None:
    options = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        ctx.error(where, "an ingredient list must not be empty")
    for i, opt in enumerate(options):
        at = f"{where}[{i}]" if isinstance(value, list) else where
        d = ctx.obj(opt, at)
        if d is None:
            continue
        if ("item" in d) == ("tag" in d):
            ctx.error(at, "an ingredient has exactly one of item or tag")
        elif "item" in d:
            ctx.item(d["item"], f"{at}.item")
        else:
            ctx.item_tag(d["tag"], f"{at}.tag")


def _crafting_result(ctx: Ctx, value: Any, where: str) -> None:
    d = ctx.obj(value, where)
    if d is None:
        return
    ctx.item(ctx.req(d, "item", where, "string"), f"{where}.item")
    ctx.int_in(d, "count", where, 1, 64, required=False)


def recipe(ctx: Ctx, doc: Any) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    kind = ctx.req(d, "type", "", "string")
    if kind is None:
        return
    bare = kind.removeprefix("minecraft:")
    if bare.startswith("crafting_special_") or bare == "crafting_decorated_pot":
        return
    if bare not in RECIPE_TYPES:
        ctx.error("type", f"{kind!r} is not a 1.19 recipe type")
        return
    if "category" in d:
        ctx.warn("category", "recipe categories arrived in 1.19.3; 1.19.0-1.19.2 ignore the field")
    ctx.opt(d, "group", "", "string")
    if bare == "crafting_shaped":
        pattern = ctx.req(d, "pattern", "", "array")
        key = ctx.req(d, "key", "", "object") or {}
        if pattern is not None:
            if not 1 <= len(pattern) <= 3 or not all(isinstance(r, str) for r in pattern):
                ctx.error("pattern", "must be 1 to 3 strings")
            elif len({len(r) for r in pattern}) != 1 or not 1 <= len(pattern[0]) <= 3:
                ctx.error("pattern", "rows must all have the same length, 1 to 3")
            else:
                used = {ch for row in pattern for ch in row if ch != " "}
                for ch in sorted(used - set(key)):
                    ctx.error("pattern", f"symbol {ch!r} is not defined in key")
                for ch in sorted(set(key) - used):
                    ctx.error(f"key.{ch}", "symbol is defined but not used in pattern")
        for ch, ing in key.items():
            if len(ch) != 1 or ch == " ":
                ctx.error(f"key.{ch}", "keys are single non-space characters")
            _ingredient(ctx, ing, f"key.{ch}")
        _crafting_result(ctx, d.get("result"), "result")
    elif bare == "crafting_shapeless":
        ings = ctx.req(d, "ingredients", "", "array")
        if ings is not None and not 1 <= len(ings) <= 9:
            ctx.error("ingredients", f"must hold 1 to 9 ingredients, got {len(ings)}")
        for i, ing in enumerate(ings or []):
            _ingredient(ctx, ing, f"ingredients[{i}]")
        _crafting_result(ctx, d.get("result"), "result")
    elif bare in COOKING:
        _ingredient(ctx, d.get("ingredient"), "ingredient")
        result = d.get("result")
        if isinstance(result, str):
            ctx.item(result, "result")
        elif isinstance(result, dict):
            _crafting_result(ctx, result, "result")
            ctx.warn("result", EXTENSION_WARNING)
        else:
            ctx.error("result", f"must be an item id string, got {type_name(result)}")
        ctx.num_in(d, "experience", "", 0.0, 1_000_000.0, required=False)
        ctx.int_in(d, "cookingtime", "", 1, 1_000_000, required=False)
    elif bare == "stonecutting":
        _ingredient(ctx, d.get("ingredient"), "ingredient")
        ctx.item(ctx.req(d, "result", "", "string"), "result")
        ctx.int_in(d, "count", "", 1, 64)
    elif bare == "smithing":
        _ingredient(ctx, d.get("base"), "base")
        _ingredient(ctx, d.get("addition"), "addition")
        _crafting_result(ctx, d.get("result"), "result")


# -- loot tables ----------------------------------------------------------------------------
LOOT_TYPES = frozenset(
    {
        "empty",
        "entity",
        "block",
        "chest",
        "fishing",
        "gift",
        "archaeology",
        "command",
        "selector",
        "advancement_reward",
        "advancement_entity",
        "generic",
        "barter",
    }
)
ENTRY_TYPES = frozenset(
    {"item", "tag", "loot_table", "empty", "dynamic", "alternatives", "sequence", "group"}
)
FUNCTIONS = frozenset(
    {
        "apply_bonus",
        "copy_name",
        "copy_nbt",
        "copy_state",
        "enchant_randomly",
        "enchant_with_levels",
        "exploration_map",
        "explosion_decay",
        "fill_player_head",
        "furnace_smelt",
        "limit_count",
        "looting_enchant",
        "set_attributes",
        "set_banner_pattern",
        "set_contents",
        "set_count",
        "set_damage",
        "set_enchantments",
        "set_instrument",
        "set_loot_table",
        "set_lore",
        "set_name",
        "set_nbt",
        "set_potion",
        "set_stew_effect",
    }
)
CONDITIONS = frozenset(
    {
        "alternative",
        "block_state_property",
        "damage_source_properties",
        "entity_properties",
        "entity_scores",
        "inverted",
        "killed_by_player",
        "location_check",
        "match_tool",
        "random_chance",
        "random_chance_with_looting",
        "reference",
        "survives_explosion",
        "table_bonus",
        "time_check",
        "value_check",
        "weather_check",
    }
)


def _number(ctx: Ctx, value: Any, where: str) -> None:
    if is_num(value):
        return
    if isinstance(value, dict):
        kind = str(value.get("type", "minecraft:uniform")).removeprefix("minecraft:")
        if kind in ("constant", "uniform", "binomial", "score"):
            return
        ctx.error(where, f"{value.get('type')!r} is not a number provider type")
        return
    ctx.error(where, f"must be a number or number provider, got {type_name(value)}")


def _conditions(ctx: Ctx, value: Any, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        ctx.error(where, "must be an array")
        return
    for i, c in enumerate(value):
        at = f"{where}[{i}]"
        d = ctx.obj(c, at)
        name = ctx.req(d, "condition", at, "string") if d is not None else None
        if name is not None and name.removeprefix("minecraft:") not in CONDITIONS:
            ctx.error(f"{at}.condition", f"{name!r} is not a 1.19 loot condition")
        if d is not None and name and name.endswith("alternative"):
            _conditions(ctx, d.get("terms"), f"{at}.terms")


def _functions(ctx: Ctx, value: Any, where: str) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        ctx.error(where, "must be an array")
        return
    for i, f in enumerate(value):
        at = f"{where}[{i}]"
        d = ctx.obj(f, at)
        name = ctx.req(d, "function", at, "string") if d is not None else None
        if name is not None and name.removeprefix("minecraft:") not in FUNCTIONS:
            ctx.error(f"{at}.function", f"{name!r} is not a 1.19 loot function")
        if d is not None:
            if name and name.endswith("set_count"):
                _number(ctx, d.get("count"), f"{at}.count")
            _conditions(ctx, d.get("conditions"), f"{at}.conditions")


def _entry(ctx: Ctx, value: Any, where: str) -> None:
    d = ctx.obj(value, where)
    if d is None:
        return
    kind = ctx.req(d, "type", where, "string")
    if kind is None:
        return
    bare = kind.removeprefix("minecraft:")
    if bare not in ENTRY_TYPES:
        ctx.error(f"{where}.type", f"{kind!r} is not a 1.19 loot entry type")
        return
    if bare == "item":
        ctx.item(ctx.req(d, "name", where, "string"), f"{where}.name")
    elif bare == "tag":
        ctx.item_tag(ctx.req(d, "name", where, "string"), f"{where}.name")
        ctx.req(d, "expand", where, "boolean")
    elif bare == "loot_table":
        ctx.ref(
            ctx.req(d, "name", where, "string"),
            f"{where}.name",
            "loot_tables",
            ctx.vanilla.loot_tables,
        )
    elif bare in ("alternatives", "sequence", "group"):
        for i, child in enumerate(ctx.req(d, "children", where, "array") or []):
            _entry(ctx, child, f"{where}.children[{i}]")
    ctx.int_in(d, "weight", where, 0, 1_000_000, required=False)
    ctx.opt(d, "quality", where, "int")
    _conditions(ctx, d.get("conditions"), f"{where}.conditions")
    _functions(ctx, d.get("functions"), f"{where}.functions")


def loot_table(ctx: Ctx, doc: Any) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    kind = ctx.opt(d, "type", "", "string")
    if kind is not None and kind.removeprefix("minecraft:") not in LOOT_TYPES:
        ctx.error("type", f"{kind!r} is not a loot context type")
    for i, pool in enumerate(ctx.opt(d, "pools", "", "array") or []):
        at = f"pools[{i}]"
        p = ctx.obj(pool, at)
        if p is None:
            continue
        if "rolls" not in p:
            ctx.error(f"{at}.rolls", "required field is missing")
        else:
            _number(ctx, p["rolls"], f"{at}.rolls")
        if "bonus_rolls" in p:
            _number(ctx, p["bonus_rolls"], f"{at}.bonus_rolls")
        entries = ctx.req(p, "entries", at, "array")
        if entries is not None and not entries:
            ctx.error(f"{at}.entries", "must not be empty")
        for j, e in enumerate(entries or []):
            _entry(ctx, e, f"{at}.entries[{j}]")
        _conditions(ctx, p.get("conditions"), f"{at}.conditions")
        _functions(ctx, p.get("functions"), f"{at}.functions")
    _functions(ctx, d.get("functions"), "functions")


# -- advancements, tags, functions -------------------------------------------------------------
def advancement(ctx: Ctx, doc: Any) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    crit = ctx.req(d, "criteria", "", "object")
    if crit is not None and not crit:
        ctx.error("criteria", "must not be empty")
    for name, c in (crit or {}).items():
        cd = ctx.obj(c, f"criteria.{name}")
        if cd is not None:
            ctx.req(cd, "trigger", f"criteria.{name}", "string")
    reqs = ctx.opt(d, "requirements", "", "array")
    for i, group in enumerate(reqs or []):
        if not isinstance(group, list) or not all(isinstance(n, str) for n in group):
            ctx.error(f"requirements[{i}]", "must be an array of criterion names")
            continue
        for n in group:
            if crit is not None and n not in crit:
                ctx.error(f"requirements[{i}]", f"names unknown criterion {n!r}")
    ctx.opt(d, "parent", "", "string")
    ctx.opt(d, "display", "", "object")


def tag(ctx: Ctx, kind: str, doc: Any) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    ctx.opt(d, "replace", "", "boolean")
    values = ctx.req(d, "values", "", "array")
    for i, v in enumerate(values or []):
        at = f"values[{i}]"
        ref = v
        if isinstance(v, dict):
            ref = ctx.req(v, "id", at, "string")
            ctx.opt(v, "required", at, "boolean")
            at = f"{at}.id"
        if not isinstance(ref, str):
            if ref is not None:
                ctx.error(at, f"must be an id string, got {type_name(ref)}")
            continue
        if ref.startswith("#"):
            (ctx.block_tag if kind == "blocks" else ctx.item_tag)(ref, at) if kind in (
                "blocks",
                "items",
            ) else None
        elif kind == "functions":
            ctx.ref(ref, at, "functions")
        elif kind == "blocks":
            ctx.block(ref, at)
        elif kind == "items":
            ctx.item(ref, at)


def function(ctx: Ctx, text: str) -> None:
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        _command(ctx, line, f"line {n}")


OBJECTIVE_RE = re.compile(r"[A-Za-z0-9_.+-]{1,16}")


def _scoreboard(ctx: Ctx, args: list[str], line: str, where: str) -> None:
    """``scoreboard objectives add <name> <criterion>`` or ``scoreboard players reset <targets> <name>``."""
    if args[:2] == ["objectives", "add"] and len(args) == 4:
        if not OBJECTIVE_RE.fullmatch(args[2]):
            ctx.error(where, f"objective names are 1-16 letters, digits or _.+-: {args[2]!r}")
        if args[3] not in vanilla_ids.SCOREBOARD_CRITERIA:
            ctx.error(where, f"criterion {args[3]!r} is not in the validator's list")
    elif args[:2] == ["players", "reset"] and len(args) == 4:
        if not OBJECTIVE_RE.fullmatch(args[3]):
            ctx.error(where, f"objective names are 1-16 letters, digits or _.+-: {args[3]!r}")
    elif args[:2] in (["players", "add"], ["players", "remove"]) and len(args) == 5:
        if not OBJECTIVE_RE.fullmatch(args[3]):
            ctx.error(where, f"objective names are 1-16 letters, digits or _.+-: {args[3]!r}")
        if not args[4].isdigit():
            ctx.error(where, f"scoreboard players {args[1]} needs a whole number: {args[4]!r}")
    else:
        ctx.error(
            where,
            "expected 'scoreboard objectives add <name> <criterion>' or "
            f"'scoreboard players reset|add|remove <targets> <name> [n]': {line!r}",
        )


def _clear_or_give(ctx: Ctx, head: str, args: list[str], line: str, where: str) -> None:
    """``clear <targets> <item> [max]`` or ``give <targets> <item> [count]``."""
    if len(args) not in (2, 3):
        ctx.error(where, f"expected '{head} <targets> <item> [count]': {line!r}")
        return
    ctx.item(args[1], f"{where}: {head}")
    if len(args) == 3 and not (args[2].isdigit() and 0 <= int(args[2]) <= 6400):
        ctx.error(where, f"{head} count must be a whole number up to 6400: {args[2]!r}")


def _command(ctx: Ctx, line: str, where: str) -> None:
    try:
        words = shlex.split(line)
    except ValueError:
        ctx.error(where, f"cannot split into words: {line!r}")
        return
    head = words[0]
    if head.startswith("/"):
        ctx.error(where, "function lines do not start with '/'")
        return
    if head not in vanilla_ids.FUNCTION_COMMANDS:
        ctx.error(
            where,
            f"command {head!r} is not in the validator's whitelist ({', '.join(sorted(vanilla_ids.FUNCTION_COMMANDS))})",
        )
        return
    args = words[1:]
    if head == "gamerule":
        if len(args) != 2 or args[0] not in vanilla_ids.GAMERULES:
            ctx.error(where, f"gamerule needs a known rule and a value: {line!r}")
        elif args[1] not in ("true", "false") and not args[1].lstrip("-").isdigit():
            ctx.error(where, f"gamerule value must be true, false or an integer: {args[1]!r}")
    elif head == "effect":
        if len(args) < 3 or args[0] != "give":
            ctx.error(
                where,
                f"expected 'effect give <targets> <effect> [seconds] [amplifier] [hideParticles]': {line!r}",
            )
            return
        if full(args[2]) not in vanilla_ids.MOB_EFFECTS:
            ctx.error(where, f"unknown effect {args[2]!r}")
        limits = ((3, 1, 1_000_000, "seconds"), (4, 0, 255, "amplifier"))
        for index, lo, hi, label in limits:
            if len(args) > index and not (args[index].isdigit() and lo <= int(args[index]) <= hi):
                ctx.error(
                    where,
                    f"effect {label} must be an integer between {lo} and {hi}: {args[index]!r}",
                )
        if len(args) > 5 and args[5] not in ("true", "false"):
            ctx.error(where, f"hideParticles must be true or false: {args[5]!r}")
    elif head in ("xp", "experience"):
        if (
            len(args) != 4
            or args[0] not in ("add", "set")
            or not args[2].isdigit()
            or args[3] not in ("levels", "points")
        ):
            ctx.error(where, f"expected 'xp set <targets> <amount> levels|points': {line!r}")
    elif head == "difficulty":
        if len(args) != 1 or args[0] not in ("peaceful", "easy", "normal", "hard"):
            ctx.error(where, f"difficulty must be peaceful, easy, normal or hard: {line!r}")
    elif head == "time":
        if (
            len(args) != 2
            or args[0] not in ("set", "add")
            or not (args[1].isdigit() or args[1] in ("day", "noon", "night", "midnight"))
        ):
            ctx.error(where, f"expected 'time set <ticks>': {line!r}")
    elif head == "scoreboard":
        _scoreboard(ctx, args, line, where)
    elif head in ("clear", "give"):
        _clear_or_give(ctx, head, args, line, where)
    elif head == "function":
        if len(args) != 1:
            ctx.error(where, f"expected 'function <id>': {line!r}")
        else:
            ctx.ref(args[0], where, "functions")
    elif head == "execute":
        if "run" not in args:
            ctx.error(where, "execute without 'run' does nothing in a function")
        else:
            _command(
                ctx,
                " ".join(shlex.quote(a) if " " in a else a for a in args[args.index("run") + 1 :]),
                where,
            )
