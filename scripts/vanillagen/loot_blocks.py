"""Block loot tables: vanilla 1.19 BlockLoot helpers driven by vanilla_facts/loot_blocks.yaml."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from . import loot_json as L
from .common import SRC_MCDATA, McData, OutputSet, load_facts, mc, src_facts
from .loot_special import special_builders

LOOT_FACTS = "loot_blocks.yaml"
Json = dict[str, Any]


class Claims:
    """Assigns each block to one facts section; globs skip already-claimed blocks."""

    def __init__(self, data: McData) -> None:
        self.names = [b["name"] for b in data.blocks_list]
        self.owner: dict[str, str] = {}

    def select(self, section: str, keys: list[str]) -> list[str]:
        out: list[str] = []
        for key in keys:
            if any(ch in key for ch in "*?["):
                hits = [n for n in self.names if fnmatchcase(n, key) and n not in self.owner]
                if not hits:
                    raise ValueError(f"{section}: glob {key} matches nothing")
            else:
                if key not in self.names:
                    raise ValueError(f"{section}: unknown block {key}")
                if key in self.owner:
                    raise ValueError(f"{section}: {key} already in {self.owner[key]}")
                hits = [key]
            for name in hits:
                self.owner[name] = section
                out.append(name)
        return out

    def mapping(self, section: str, spec: dict[str, Any]) -> list[tuple[str, Any]]:
        return [
            (name, value) for key, value in spec.items() for name in self.select(section, [key])
        ]


def _uniform_count(spec: dict[str, Any]) -> list[Json]:
    return [L.set_count(L.uniform(spec["min"], spec["max"]))] if "min" in spec else []


def ore_table(block: str, spec: dict[str, Any]) -> Json:
    bonus = L.uniform_bonus() if spec.get("bonus") == "uniform" else L.ore_bonus()
    functions = [*_uniform_count(spec), bonus, L.EXPLOSION_DECAY]
    return L.silk_dispatch(block, L.item(spec["drop"], functions=functions))


def leaves_table(block: str, spec: dict[str, Any], facts: dict[str, Any]) -> Json:
    not_shears_or_silk = [L.inverted(L.HAS_SHEARS_OR_SILK_TOUCH)]
    sticks = L.pool(
        L.item(
            "stick",
            [L.table_bonus(facts["leaves_stick_chances"])],
            [L.set_count(L.uniform(1.0, 2.0)), L.EXPLOSION_DECAY],
        ),
        conditions=not_shears_or_silk,
    )
    if spec.get("sapling") is None:  # createMangroveLeavesDrops: no sapling, one pool
        stick = sticks["entries"][0]
        return L.block_table(
            L.pool(L.alternatives(L.item(block, [L.HAS_SHEARS_OR_SILK_TOUCH]), stick))
        )
    chances = facts[
        "leaves_jungle_sapling_chances" if spec.get("jungle") else "leaves_sapling_chances"
    ]
    first = L.pool(
        L.alternatives(
            L.item(block, [L.HAS_SHEARS_OR_SILK_TOUCH]),
            L.item(spec["sapling"], [L.SURVIVES_EXPLOSION, L.table_bonus(chances)]),
        )
    )
    pools = [first, sticks]
    if spec.get("apple"):
        apple = L.item(
            "apple", [L.SURVIVES_EXPLOSION, L.table_bonus(facts["leaves_apple_chances"])]
        )
        pools.append(L.pool(apple, conditions=not_shears_or_silk))
    return L.block_table(*pools)


def crop_table(block: str, spec: dict[str, Any], facts: dict[str, Any]) -> Json:
    grown = L.state_is(block, age=str(spec["max_age"]))
    binom = facts["crop_binomial"]
    bonus_seeds = L.item(
        spec["seeds"], functions=[L.binomial_bonus(binom["extra"], binom["probability"])]
    )
    if spec.get("root"):  # carrots / potatoes: always one, bonus when grown
        pools = [L.pool(L.item(spec["grown"])), L.pool(bonus_seeds, conditions=[grown])]
        if spec.get("poison"):
            pools.append(
                L.pool(L.item(spec["poison"], [L.random_chance(0.02)]), conditions=[grown])
            )
    else:
        first = L.pool(L.alternatives(L.item(spec["grown"], [grown]), L.item(spec["seeds"])))
        pools = [first, L.pool(bonus_seeds, conditions=[grown])]
    return L.block_table(*pools, functions=[L.EXPLOSION_DECAY])


def double_plant_seeds(block: str, short: str) -> Json:
    """createDoublePlantWithSeedDrops: the drop is evaluated once for the whole plant."""
    entry = L.alternatives(
        L.item(short, [L.HAS_SHEARS], [L.set_count(2.0)]),
        L.item("wheat_seeds", [L.SURVIVES_EXPLOSION, L.random_chance(0.125)]),
    )

    def other_half(offset: int, half: str) -> Json:
        return {
            "condition": "minecraft:location_check",
            "offsetY": offset,
            "predicate": {"block": {"blocks": [mc(block)], "state": {"half": half}}},
        }

    lower = [L.state_is(block, half="lower"), other_half(1, "upper")]
    upper = [L.state_is(block, half="upper"), other_half(-1, "lower")]
    return L.block_table(L.pool(entry, conditions=lower), L.pool(entry, conditions=upper))


def _second_drop(data: McData, block: str) -> str:
    """minecraft-data's last listed drop (the plant in a pot, the candle on a cake)."""
    drops = [data.item_name(int(d)) for d in data.blocks[block]["drops"]]
    return str(drops[-1])


def build_block_loot(data: McData) -> tuple[dict[str, Json], dict[str, str], dict[str, str]]:
    """(tables by block, drops_like block -> table block, provenance by block)."""
    facts = load_facts(LOOT_FACTS)
    claims = Claims(data)
    tables: dict[str, Json] = {}
    sources: dict[str, str] = {}
    fact_src = src_facts(LOOT_FACTS)

    def put(block: str, tbl: Json) -> None:
        tables[block] = tbl
        sources[block] = fact_src

    drops_like: dict[str, str] = {}
    for rule in facts["drops_like"]:
        for block in claims.select("drops_like", [rule["glob"]]):
            drops_like[block] = block.replace(*rule["replace"])
    claims.select("no_loot_table", facts["no_loot_table"])
    for block, drop in claims.mapping("silk_or_other", facts["silk_or_other"]):
        put(block, L.silk_dispatch(block, L.item(drop, [L.SURVIVES_EXPLOSION])))
    for block, spec in claims.mapping("silk_or_other_count", facts["silk_or_other_count"]):
        if spec.get("survives_explosion"):
            other = L.item(spec["drop"], [L.SURVIVES_EXPLOSION], [L.set_count(spec["count"])])
        else:
            other = L.item(spec["drop"], functions=[L.set_count(spec["count"]), L.EXPLOSION_DECAY])
        put(block, L.silk_dispatch(block, other))
    for block, spec in claims.mapping("ore", facts["ore"]):
        put(block, ore_table(block, spec))
    for block, spec in claims.mapping("silk_or_bonus_count", facts["silk_or_bonus_count"]):
        fns = [
            *_uniform_count(spec),
            L.uniform_bonus(),
            L.limit_count(spec["limit"]),
            L.EXPLOSION_DECAY,
        ]
        put(block, L.silk_dispatch(block, L.item(spec["drop"], functions=fns)))
    for block, spec in claims.mapping(
        "silk_or_chance_else_self", facts["silk_or_chance_else_self"]
    ):
        chance = L.item(spec["drop"], [L.table_bonus(spec["chances"])], _uniform_count(spec))
        inner = L.alternatives(chance, L.item(block), conditions=[L.SURVIVES_EXPLOSION])
        put(block, L.silk_dispatch(block, inner))
    for block in claims.select("silk_only", facts["silk_only"]):
        put(block, L.block_table(L.pool(L.item(block), conditions=[L.HAS_SILK_TOUCH])))
    for block, drop in claims.mapping("silk_only_other", facts["silk_only_other"]):
        put(block, L.block_table(L.pool(L.item(drop), conditions=[L.HAS_SILK_TOUCH])))
    for block in claims.select("shears_only", facts["shears_only"]):
        put(block, L.block_table(L.pool(L.item(block), conditions=[L.HAS_SHEARS])))
    for block, drop in claims.mapping("shears_double", facts["shears_double"]):
        put(
            block,
            L.block_table(
                L.pool(L.item(drop, functions=[L.set_count(2.0)]), conditions=[L.HAS_SHEARS])
            ),
        )
    for block, drop in claims.mapping("shears_or_silk_else", facts["shears_or_silk_else"]):
        put(
            block,
            L.block_table(
                L.pool(
                    L.alternatives(
                        L.item(block, [L.HAS_SHEARS_OR_SILK_TOUCH]),
                        L.item(drop, [L.SURVIVES_EXPLOSION]),
                    )
                )
            ),
        )
    for block, spec in claims.mapping("shears_else_count", facts["shears_else_count"]):
        other = L.item(spec["drop"], functions=[*_uniform_count(spec), L.EXPLOSION_DECAY])
        put(block, L.block_table(L.pool(L.alternatives(L.item(block, [L.HAS_SHEARS]), other))))
    for block in claims.select("grass", facts["grass"]):
        seeds = L.item(
            "wheat_seeds", [L.random_chance(0.125)], [L.uniform_bonus(2), L.EXPLOSION_DECAY]
        )
        put(block, L.block_table(L.pool(L.alternatives(L.item(block, [L.HAS_SHEARS]), seeds))))
    for block, short in claims.mapping("double_plant_seeds", facts["double_plant_seeds"]):
        put(block, double_plant_seeds(block, short))
    for block, drop in claims.mapping("vines_chance", facts["vines_chance"]):
        put(
            block,
            L.block_table(
                L.pool(
                    L.alternatives(
                        L.item(drop, [L.HAS_SHEARS_OR_SILK_TOUCH]),
                        L.item(drop, [L.table_bonus(facts["vines_chances"])]),
                    )
                )
            ),
        )
    for block, drop in claims.mapping("other", facts["other"]):
        put(block, L.self_drop(drop))
    for block, prop in claims.mapping("prop_condition", facts["prop_condition"]):
        entry = L.item(block, [L.state_is(block, **prop)])
        put(block, L.block_table(L.pool(entry, conditions=[L.SURVIVES_EXPLOSION])))
    for block in claims.select("slab", facts["slab"]):
        double = L.set_count(2.0, conditions=[L.state_is(block, type="double")])
        put(block, L.block_table(L.pool(L.item(block, functions=[double, L.EXPLOSION_DECAY]))))
    for block, prop in claims.mapping("count_by_property", facts["count_by_property"]):
        counts = [
            L.set_count(float(n), conditions=[L.state_is(block, **{prop: str(n)})])
            for n in (2, 3, 4)
        ]
        put(block, L.block_table(L.pool(L.item(block, functions=[*counts, L.EXPLOSION_DECAY]))))
    for block in claims.select("nameable", facts["nameable"]):
        copy_name = {"function": "minecraft:copy_name", "source": "block_entity"}
        put(
            block,
            L.block_table(
                L.pool(L.item(block, functions=[copy_name]), conditions=[L.SURVIVES_EXPLOSION])
            ),
        )
    for block, _ in claims.mapping("potted", facts["potted"]):
        plant = _second_drop(data, block)
        put(
            block,
            L.block_table(
                L.pool(L.item("flower_pot"), conditions=[L.SURVIVES_EXPLOSION]),
                L.pool(L.item(plant), conditions=[L.SURVIVES_EXPLOSION]),
            ),
        )
    for block, _ in claims.mapping("candle_cake", facts["candle_cake"]):
        put(block, L.block_table(L.pool(L.item(_second_drop(data, block)))))
    for block, spec in claims.mapping("leaves", facts["leaves"]):
        put(block, leaves_table(block, spec, facts))
    for block, drop in claims.mapping("mushroom_block", facts["mushroom_block"]):
        fns = [L.set_count(L.uniform(-6.0, 2.0)), L.limit_count({"min": 0}), L.EXPLOSION_DECAY]
        put(block, L.silk_dispatch(block, L.item(drop, functions=fns)))
    for block, spec in claims.mapping("crops", facts["crops"]):
        put(block, crop_table(block, spec, facts))
    for block, seeds in claims.mapping("stem", facts["stem"]):
        fns = [
            L.set_count(L.binomial(3, p), conditions=[L.state_is(block, age=str(age))])
            for age, p in enumerate(facts["stem_probabilities"])
        ]
        put(
            block,
            L.block_table(L.pool(L.item(seeds, functions=fns), functions=[L.EXPLOSION_DECAY])),
        )
    for block, seeds in claims.mapping("attached_stem", facts["attached_stem"]):
        fns = [L.set_count(L.binomial(3, facts["stem_probabilities"][-1]))]
        put(
            block,
            L.block_table(L.pool(L.item(seeds, functions=fns), functions=[L.EXPLOSION_DECAY])),
        )
    builders = special_builders()
    for block in claims.select("special", facts["special"]):
        put(block, builders[block]())
    claims.select("not_reproduced", facts["not_reproduced"])

    for b in data.blocks_list:  # everything else: minecraft-data drops
        name = b["name"]
        if name in claims.owner:
            continue
        drops = [data.item_name(int(d)) for d in b["drops"]]
        if drops == [name]:
            tables[name] = L.self_drop(name)
            sources[name] = SRC_MCDATA
        elif drops:
            raise ValueError(
                f"block {name} drops {drops} in minecraft-data; add it to {LOOT_FACTS}"
            )
    missing = sorted(v for v in drops_like.values() if v not in tables)
    if missing:
        raise ValueError(f"drops_like targets without tables: {missing}")
    return tables, drops_like, sources


def write_block_loot(data: McData, out: OutputSet) -> tuple[dict[str, Json], dict[str, str]]:
    tables, drops_like, sources = build_block_loot(data)
    for block in sorted(tables):
        out.add(f"data/minecraft/loot_tables/blocks/{block}.json", tables[block], sources[block])
    return tables, drops_like
