"""Seeded samplers: candidate specs drawn from the catalog, for static-only runs and first drafts.

Each proposal depends only on the sampler's seed and the attempt number, so a
static-only run replays exactly. The mirror sampler draws two to six changes over
route targets (route recipes, blocks and creatures whose Vanilla loot is on a
route, route items as cooking inputs), with outputs from the route items and the
catalog's recipe results and counts in ``SAMPLED_COUNTS`` (inside the manifest's
1..64). The biome sampler scales the base spec's numbers by seeded factors and
clamps them to the field bounds.
"""

from __future__ import annotations

import random
from typing import Any

from mirrorcraft.design.biome_catalog import PAIR_BOUNDS
from mirrorcraft.design.mirror_catalog import MirrorCatalog
from mirrorcraft.design.schema import bound_of, field_table
from mirrorcraft.world.spec import BiomeSpec

SAMPLED_COUNTS = (1, 4)
"""Counts the mirror sampler draws (inclusive range)."""
SCALE = (0.6, 1.5)
"""Factors the biome sampler applies to densities and relief."""


def _name(item: str) -> str:
    return item.replace("_", " ")


def sheet_for(change: dict[str, Any]) -> str:
    """A rule-sheet sentence for a sampled change (our wording, generated from its fields)."""
    op = change["op"]
    if op == "recipe_output":
        target = change["targets"][0].split(":")[-1]
        what = f"{change.get('count', 1)} {_name(change.get('item') or target)}"
        return f"The {_name(target)} recipe makes {what} instead of its usual result."
    if op == "cooking_result":
        stations = " or ".join(_name(s) for s in change["stations"])
        made = f"{change['count']} {_name(change['item'])}"
        return f"Cooking {_name(change['input'])} in a {stations} gives {made}."
    drops = " and ".join(f"{d['count']} {_name(d['item'])}" for d in change["drops"])
    if op == "block_drops":
        target = _name(change["targets"][0])
        if change["mode"] == "replace":
            return f"Breaking {target} drops {drops} instead of its usual drops."
        return f"Breaking {target} drops {drops} as well as its usual drops."
    return f"Defeating a {_name(change['target'])} also drops {drops}."


class MirrorSampler:
    def __init__(self, catalog: MirrorCatalog, seed: int, suite_id: str) -> None:
        self.catalog = catalog
        self.seed = seed
        self.suite_id = suite_id
        c = catalog
        self.recipes = sorted(loc for loc, e in c.crafting.items() if e.role == "route")
        self.blocks = sorted(b for b, e in c.blocks.items() if e["route"])
        self.entities = sorted(m for m, e in c.entities.items() if e["route"])
        self.inputs = sorted(c.route_items & c.processing_inputs)
        self.outputs = sorted(c.route_items | {e.result for e in c.crafting.values()})

    def _change(self, rng: random.Random, used: set[str]) -> dict[str, Any] | None:
        op = rng.choice(["recipe_output", "cooking_result", "block_drops", "entity_loot"])
        lo, hi = SAMPLED_COUNTS
        count = rng.randint(lo, hi)
        item = rng.choice(self.outputs)
        if op == "recipe_output":
            target = rng.choice(self.recipes)
            ch: dict[str, Any] = {"op": op, "targets": [target]}
            ch.update({"item": item, "count": count} if rng.random() < 0.5 else {"count": count})
            key = target
        elif op == "cooking_result":
            source = rng.choice(self.inputs)
            stations = sorted(rng.sample(list(self.catalog.stations), rng.randint(1, 2)))
            ch = {"op": op, "input": source, "stations": stations, "item": item, "count": count}
            key = f"cook:{source}"
        elif op == "block_drops":
            target = rng.choice(self.blocks)
            mode = rng.choice(["add", "replace"])
            ch = {"op": op, "targets": [target], "mode": mode}
            ch["drops"] = [{"item": item, "count": count}]
            key = f"block:{target}"
        else:
            if not self.entities:
                return None
            target = rng.choice(self.entities)
            ch = {"op": op, "target": target, "mode": "add"}
            ch["drops"] = [{"item": item, "count": count}]
            key = f"entity:{target}"
        if key in used:
            return None
        used.add(key)
        ch["sheet"] = sheet_for(ch)
        return ch

    def propose(self, attempt: int) -> dict[str, Any]:
        rng = random.Random(f"mirror:{self.seed}:{attempt}")
        wanted = rng.randint(2, 6)
        changes: list[dict[str, Any]] = []
        used: set[str] = set()
        for _ in range(wanted * 4):
            if len(changes) == wanted:
                break
            ch = self._change(rng, used)
            if ch is not None:
                changes.append(ch)
        return {
            "schema_version": 1,
            "kind": "mirror",
            "id": self.suite_id,
            "name": f"Sampled suite {self.seed}.{attempt}",
            "form": "sampled",
            "description": "Drawn by the seeded static sampler from the catalog.",
            "selected_tasks": list(self.catalog.tasks),
            "changes": changes,
        }


def _clamp(value: float, bounds: tuple[float | None, float | None]) -> float:
    lo, hi = bounds
    if lo is not None:
        value = max(value, lo)
    if hi is not None:
        value = min(value, hi)
    return value


def _pair(pair: list[int], path: str, rng: random.Random) -> list[int]:
    low, high = PAIR_BOUNDS[path]
    shift = rng.randint(-1, 1)
    a = min(max(pair[0] + shift, low), high)
    b = min(max(pair[1] + shift, a), high)
    return [a, b]


class BiomeSampler:
    def __init__(self, base: BiomeSpec, seed: int, name: str) -> None:
        self.base = base
        self.seed = seed
        self.name = name
        self.table = field_table(BiomeSpec)

    def _scale(self, rng: random.Random, value: float, path: str, digits: int = 2) -> float:
        return round(_clamp(value * rng.uniform(*SCALE), bound_of(self.table, path)), digits)

    def propose(self, attempt: int) -> dict[str, Any]:
        rng = random.Random(f"biome:{self.seed}:{attempt}")
        doc = self.base.model_dump(mode="json")
        doc["biome"] = self.name
        doc["spec_version"] = f"{self.base.spec_version}+s{self.seed}.{attempt}"
        t = doc["terrain"]
        t["relief"] = self._scale(rng, t["relief"], "terrain.relief", 1)
        height = t["base_height"] + rng.randint(-3, 3)
        t["base_height"] = int(_clamp(height, bound_of(self.table, "terrain.base_height")))
        t["filler_depth"] = _pair(t["filler_depth"], "terrain.filler_depth", rng)
        doc["water"]["ponds"] = _pair(doc["water"]["ponds"], "water.ponds", rng)
        for band in doc["ores"]:
            band["veins_per_chunk"] = self._scale(
                rng, band["veins_per_chunk"], "ores[].veins_per_chunk"
            )
        doc["trees"]["per_chunk"] = self._scale(rng, doc["trees"]["per_chunk"], "trees.per_chunk")
        for kind in doc["trees"]["kinds"]:
            kind["weight"] = round(kind["weight"] * rng.uniform(*SCALE), 2)
        for plant in doc["vegetation"]:
            plant["per_chunk"] = self._scale(rng, plant["per_chunk"], "vegetation[].per_chunk")
        for mob in doc["mobs"]:
            mob["count"] = _pair(mob["count"], "mobs[].count", rng)
        return doc
