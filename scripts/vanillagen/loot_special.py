"""One-off vanilla 1.19 block loot tables (the `special` section of loot_blocks.yaml)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import loot_json as L
from .common import mc

Json = dict[str, Any]


def snow_table() -> Json:
    by_layers = [
        L.item("snowball", [L.state_is("snow", layers=str(n))], [L.set_count(float(n))])
        for n in range(1, 9)
    ]
    silk = [
        L.item("snow", [L.state_is("snow", layers=str(n))], [L.set_count(float(n))])
        for n in range(1, 8)
    ]
    silk.append(L.item("snow_block"))
    entry = L.alternatives(
        L.alternatives(*by_layers, conditions=[L.inverted(L.HAS_SILK_TOUCH)]),
        L.alternatives(*silk),
    )
    entity_present = {"condition": "minecraft:entity_properties", "entity": "this", "predicate": {}}
    return L.block_table(L.pool(entry, conditions=[entity_present]))


def multiface(block: str, tool: Json) -> Json:
    """createMultifaceBlockDrops: one item per covered face (glow lichen, sculk vein)."""
    faces = [
        L.set_count(1.0, add=True, conditions=[L.state_is(block, **{face: "true"})])
        for face in ("east", "west", "north", "south", "up", "down")
    ]
    functions = [*faces, L.set_count(-1.0, add=True), L.EXPLOSION_DECAY]
    return L.block_table(L.pool(L.item(block, [tool], functions)))


def bee_copy(block: str) -> list[Json]:
    """Bee nest / beehive silk-touch drop keeps its bees and honey level."""
    return [
        {
            "function": "minecraft:copy_nbt",
            "source": "block_entity",
            "ops": [{"source": "Bees", "target": "BlockEntityTag.Bees", "op": "replace"}],
        },
        {"function": "minecraft:copy_state", "block": mc(block), "properties": ["honey_level"]},
    ]


def special_builders() -> dict[str, Callable[[], Json]]:
    return {
        "snow": snow_table,
        "cocoa": lambda: L.block_table(
            L.pool(
                L.item(
                    "cocoa_beans",
                    functions=[
                        L.set_count(3.0, conditions=[L.state_is("cocoa", age="2")]),
                        L.EXPLOSION_DECAY,
                    ],
                )
            )
        ),
        "nether_wart": lambda: L.block_table(
            L.pool(
                L.item(
                    "nether_wart",
                    functions=[
                        L.set_count(
                            L.uniform(2.0, 4.0), conditions=[L.state_is("nether_wart", age="3")]
                        ),
                        L.uniform_bonus(conditions=[L.state_is("nether_wart", age="3")]),
                    ],
                ),
                functions=[L.EXPLOSION_DECAY],
            )
        ),
        "sweet_berry_bush": lambda: L.block_table(
            *(
                L.pool(
                    L.item("sweet_berries"),
                    conditions=[L.state_is("sweet_berry_bush", age=age)],
                    functions=[L.set_count(L.uniform(lo, hi)), L.uniform_bonus()],
                )
                for age, lo, hi in (("3", 2.0, 3.0), ("2", 1.0, 2.0))
            ),
            functions=[L.EXPLOSION_DECAY],
        ),
        "cave_vines": lambda: L.block_table(
            L.pool(L.item("glow_berries"), conditions=[L.state_is("cave_vines", berries="true")])
        ),
        "cave_vines_plant": lambda: L.block_table(
            L.pool(
                L.item("glow_berries"), conditions=[L.state_is("cave_vines_plant", berries="true")]
            )
        ),
        "chorus_plant": lambda: L.block_table(
            L.pool(
                L.item(
                    "chorus_fruit", functions=[L.set_count(L.uniform(0.0, 1.0)), L.EXPLOSION_DECAY]
                )
            )
        ),
        "amethyst_cluster": lambda: L.silk_dispatch(
            "amethyst_cluster",
            L.alternatives(
                L.item(
                    "amethyst_shard",
                    [
                        {
                            "condition": "minecraft:match_tool",
                            "predicate": {"tag": "minecraft:cluster_max_harvestables"},
                        }
                    ],
                    [L.set_count(4.0), L.ore_bonus()],
                ),
                L.item("amethyst_shard", functions=[L.set_count(2.0), L.EXPLOSION_DECAY]),
            ),
        ),
        "composter": lambda: L.block_table(
            L.pool(L.item("composter", functions=[L.EXPLOSION_DECAY])),
            L.pool(L.item("bone_meal"), conditions=[L.state_is("composter", level="8")]),
        ),
        "mangrove_propagule": lambda: L.block_table(
            L.pool(
                L.item("mangrove_propagule"), conditions=[L.state_is("mangrove_propagule", age="4")]
            ),
            functions=[L.EXPLOSION_DECAY],
        ),
        "glow_lichen": lambda: multiface("glow_lichen", L.HAS_SHEARS),
        "sculk_vein": lambda: multiface("sculk_vein", L.HAS_SILK_TOUCH),
        "beehive": lambda: L.block_table(
            L.pool(
                L.alternatives(
                    L.item("beehive", [L.HAS_SILK_TOUCH], bee_copy("beehive")), L.item("beehive")
                )
            )
        ),
        "bee_nest": lambda: L.block_table(
            L.pool(
                L.item("bee_nest", functions=bee_copy("bee_nest")), conditions=[L.HAS_SILK_TOUCH]
            )
        ),
    }
