"""The biome catalog: what a biome-spec designer may use, generated from our data.

- **base biomes**: the packaged specs (``data/biomes/*.yaml``), summarised.
- **surface blocks**: blocks the packaged specs use for each terrain role, plus
  the vanilla ``#dirt`` and ``#sand`` tags for top, filler and shore blocks and
  ``#base_stone_overworld`` for the stone and deep layers.
- **ores**: the packaged specs' ore bands (block and deepslate variant) plus
  every vanilla ``#<x>_ores`` tag pair; the band schema comes from ``OreBand``.
- **creatures**: the packaged specs' mobs, with their vanilla drops.
- **trees**: the packaged specs' log/leaves pairs plus every vanilla ``#logs``
  log with a matching ``#leaves`` block. **Vegetation**: the packaged specs'
  plants plus the body's support-dependent plants.
- **bounds**: every numeric bound declared on the ``BiomeSpec`` fields, plus the
  design bounds below for the ``(min, max)`` pairs the schema leaves open (the
  generator needs them finite and ordered).
- **required resources**: per selected task, the mining and creature steps of
  its Vanilla witness routes in the packaged worlds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.config import default_body_config
from mirrorcraft.design.dependency import vanilla_routes
from mirrorcraft.design.schema import field_table
from mirrorcraft.world.registry import biome_spec, world_table
from mirrorcraft.world.spec import BiomeSpec, OreBand

PAIR_BOUNDS: dict[str, tuple[int, int]] = {
    "terrain.filler_depth": (1, 8),
    "water.ponds": (1, 12),
    "water.pond_radius": (2, 10),
    "ores[].vein_size": (1, 32),
    "trees.kinds[].height": (3, 12),
    "sugar_cane.clusters_per_pond": (0, 12),
    "sugar_cane.height": (1, 4),
    "mobs[].count": (0, 40),
    "mobs[].herd_size": (1, 8),
}
"""Design bounds for (min, max) pairs: both ends inside, min <= max."""
LIST_BOUNDS: dict[str, tuple[int, int]] = {
    "ores": (1, 24),
    "trees.kinds": (1, 4),
    "vegetation": (0, 8),
    "mobs": (1, 6),
}
"""Design bounds on the number of entries in each list."""
FLAGGED = {"terrain.relief": 12.0, "trees.per_chunk": 4.0}
"""Values above these are allowed but flagged (needless motor difficulty, clutter)."""


@dataclass(frozen=True)
class BiomeCatalog:
    tasks: tuple[str, ...]
    base_biomes: dict[str, dict[str, Any]]
    surface: dict[str, list[str]]
    ores: dict[str, str | None]
    creatures: dict[str, list[str]]
    trees: dict[str, str]
    vegetation: list[str]
    required: dict[str, list[str]]

    def to_prompt(self) -> dict[str, Any]:
        return {
            "kind": "biome",
            "selected_tasks": list(self.tasks),
            "base_biomes": self.base_biomes,
            "surface_blocks": self.surface,
            "ores": [{"block": b, "deepslate_block": d} for b, d in self.ores.items()],
            "ore_schema": field_table(OreBand),
            "creatures": self.creatures,
            "trees": [{"log": log, "leaves": leaves} for log, leaves in self.trees.items()],
            "vegetation": self.vegetation,
            "bounds": field_table(BiomeSpec),
            "pair_bounds": {k: list(v) for k, v in PAIR_BOUNDS.items()},
            "list_bounds": {k: list(v) for k, v in LIST_BOUNDS.items()},
            "flagged_above": FLAGGED,
            "required_resources": self.required,
        }


def packaged_biomes() -> list[str]:
    return sorted({e.biome for e in world_table().values()})


def _summary(spec: BiomeSpec) -> dict[str, Any]:
    t = spec.terrain
    return {
        "terrain": {
            "top_block": t.top_block,
            "base_height": t.base_height,
            "relief": t.relief,
            "snow_cover": t.snow_cover,
        },
        "trees": [k.log for k in spec.trees.kinds],
        "tree_density": spec.trees.per_chunk,
        "vegetation": [p.block for p in spec.vegetation],
        "mobs": [m.type for m in spec.mobs],
    }


@lru_cache(maxsize=8)
def biome_catalog(tasks: tuple[str, ...]) -> BiomeCatalog:
    rules = vanilla_rules()
    specs = {b: biome_spec(b) for b in packaged_biomes()}
    tags = rules.block_tags
    soil = set(tags.get("dirt", ())) | set(tags.get("sand", ()))
    stone = set(tags.get("base_stone_overworld", ()))
    surface: dict[str, set[str]] = {"top": set(soil), "filler": set(soil), "shore": set(soil)}
    surface |= {"stone": set(stone), "deep": set(stone)}
    ores: dict[str, str | None] = {}
    trees: dict[str, str] = {}
    plants: set[str] = set()
    mobs: set[str] = set()
    for spec in specs.values():
        t = spec.terrain
        for role, block in (("top", t.top_block), ("filler", t.filler_block)):
            surface[role].add(block)
        surface["shore"].add(t.shore_block)
        surface["stone"].add(t.stone_block)
        surface["deep"].add(t.deep_block)
        for band in spec.ores:
            ores.setdefault(band.block, band.deepslate_block)
        trees.update({k.log: k.leaves for k in spec.trees.kinds})
        plants |= {p.block for p in spec.vegetation}
        mobs |= {m.type for m in spec.mobs}
    for tag, members in sorted(tags.items()):
        if tag.endswith("_ores"):
            plain = sorted(b for b in members if not b.startswith("deepslate_"))
            deep = sorted(b for b in members if b.startswith("deepslate_"))
            if plain:
                ores.setdefault(plain[0], deep[0] if deep else None)
    leaves = set(tags.get("leaves", ()))
    for log in sorted(tags.get("logs", ())):
        kind = log.removesuffix("_log")
        if log.endswith("_log") and not log.startswith("stripped_") and f"{kind}_leaves" in leaves:
            trees.setdefault(log, f"{kind}_leaves")
    support = default_body_config().needs_support
    plants |= {p for p in support if p in rules.game.blocks} - {"sugar_cane", "torch", "snow"}
    creatures = {}
    for mob in sorted(mobs):
        table = rules.entity_table(mob)
        creatures[mob] = sorted(rules.table_outputs(table)) if table is not None else []
    required: dict[str, list[str]] = {}
    for task in tasks:
        steps = {
            s.describe()
            for wr in vanilla_routes(tasks)
            for s in wr.routes[task].steps
            if s.kind in ("mine", "kill")
        }
        required[task] = sorted(steps)
    return BiomeCatalog(
        tasks=tasks,
        base_biomes={b: _summary(s) for b, s in specs.items()},
        surface={role: sorted(blocks) for role, blocks in surface.items()},
        ores=dict(sorted(ores.items())),
        creatures=creatures,
        trees=dict(sorted(trees.items())),
        vegetation=sorted(plants),
        required=required,
    )
