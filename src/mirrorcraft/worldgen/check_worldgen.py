"""Structural checks of 1.19 worldgen files: noise settings and surface rules, configured and
placed features (ore placements in particular), biomes and their feature steps, world presets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mirrorcraft.worldgen import vanilla_ids
from mirrorcraft.worldgen.check_values import (
    anchor,
    block_predicate,
    density,
    height_provider,
    int_provider,
    rule_test,
    state_provider,
    typed,
)
from mirrorcraft.worldgen.checks import Ctx, full, is_num
from mirrorcraft.worldgen.features import STEP, STEPS
from mirrorcraft.worldgen.terrain import NOISE_ROUTER_FIELDS

DIMENSION_RANGES = {
    "minecraft:overworld": (-64, 319),
    "minecraft:overworld_caves": (-64, 319),
    "minecraft:the_nether": (0, 255),
    "minecraft:the_end": (0, 255),
}

# -- surface rules --------------------------------------------------------------------
RULES = frozenset({"bandlands", "block", "sequence", "condition"})
CONDITIONS = frozenset(
    {
        "biome",
        "noise_threshold",
        "vertical_gradient",
        "y_above",
        "water",
        "temperature",
        "steep",
        "not",
        "hole",
        "above_preliminary_surface",
        "stone_depth",
    }
)


def surface_condition(ctx: Ctx, value: Any, where: str, bounds: tuple[int, int] | None) -> None:
    got = typed(ctx, value, where, CONDITIONS)
    if got is None:
        return
    d, kind = got
    if kind == "biome":
        biomes = ctx.req(d, "biome_is", where, "array") or []
        for i, b in enumerate(biomes):
            ctx.ref(b, f"{where}.biome_is[{i}]", "worldgen/biome", vanilla_ids_biomes())
    elif kind == "noise_threshold":
        ctx.ref(
            ctx.req(d, "noise", where, "string"),
            f"{where}.noise",
            "worldgen/noise",
            vanilla_ids.NOISES,
        )
        ctx.req(d, "min_threshold", where, "number")
        ctx.req(d, "max_threshold", where, "number")
    elif kind == "vertical_gradient":
        ctx.req(d, "random_name", where, "string")
        low = anchor(ctx, d.get("true_at_and_below"), f"{where}.true_at_and_below", bounds)
        high = anchor(ctx, d.get("false_at_and_above"), f"{where}.false_at_and_above", bounds)
        if low is not None and high is not None and low >= high:
            ctx.error(
                where, f"true_at_and_below (y={low}) must lie below false_at_and_above (y={high})"
            )
    elif kind == "y_above":
        anchor(ctx, d.get("anchor"), f"{where}.anchor", None)
        ctx.int_in(d, "surface_depth_multiplier", where, -20, 20)
        ctx.req(d, "add_stone_depth", where, "boolean")
    elif kind == "water":
        ctx.req(d, "offset", where, "int")
        ctx.int_in(d, "surface_depth_multiplier", where, -20, 20)
        ctx.req(d, "add_stone_depth", where, "boolean")
    elif kind == "not":
        surface_condition(ctx, d.get("invert"), f"{where}.invert", bounds)
    elif kind == "stone_depth":
        ctx.req(d, "offset", where, "int")
        ctx.req(d, "add_surface_depth", where, "boolean")
        ctx.req(d, "secondary_depth_range", where, "int")
        ctx.enum(d, "surface_type", where, ("floor", "ceiling"))


def surface_rule(
    ctx: Ctx, value: Any, where: str, bounds: tuple[int, int] | None, depth: int = 0
) -> None:
    if depth > 64:
        ctx.error(where, "surface rules nest more than 64 levels deep")
        return
    got = typed(ctx, value, where, RULES)
    if got is None:
        return
    d, kind = got
    if kind == "block":
        ctx.block_state(d.get("result_state"), f"{where}.result_state")
    elif kind == "sequence":
        seq = ctx.req(d, "sequence", where, "array") or []
        for i, rule in enumerate(seq):
            surface_rule(ctx, rule, f"{where}.sequence[{i}]", bounds, depth + 1)
    elif kind == "condition":
        surface_condition(ctx, d.get("if_true"), f"{where}.if_true", bounds)
        surface_rule(ctx, d.get("then_run"), f"{where}.then_run", bounds, depth + 1)


# -- noise settings ------------------------------------------------------------------------
def noise_bounds(doc: Mapping[str, Any]) -> tuple[int, int] | None:
    n = doc.get("noise")
    if isinstance(n, dict) and isinstance(n.get("min_y"), int) and isinstance(n.get("height"), int):
        return n["min_y"], n["min_y"] + n["height"] - 1
    return None


def noise_settings(ctx: Ctx, doc: Any) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    ctx.req(d, "sea_level", "", "int")
    for key in (
        "disable_mob_generation",
        "aquifers_enabled",
        "ore_veins_enabled",
        "legacy_random_source",
    ):
        ctx.req(d, key, "", "boolean")
    ctx.block_state(d.get("default_block"), "default_block")
    ctx.block_state(d.get("default_fluid"), "default_fluid")
    n = ctx.req(d, "noise", "", "object")
    if n is not None:
        min_y = ctx.int_in(n, "min_y", "noise", -2032, 2031)
        height = ctx.int_in(n, "height", "noise", 16, 4064)
        ctx.int_in(n, "size_horizontal", "noise", 1, 4)
        ctx.int_in(n, "size_vertical", "noise", 1, 4)
        if min_y is not None and min_y % 16:
            ctx.error("noise.min_y", f"must be a multiple of 16, got {min_y}")
        if height is not None and height % 16:
            ctx.error("noise.height", f"must be a multiple of 16, got {height}")
        if min_y is not None and height is not None and min_y + height > 2032:
            ctx.error("noise", f"min_y + height must not exceed 2032, got {min_y + height}")
    router = ctx.req(d, "noise_router", "", "object")
    if router is not None:
        for name in NOISE_ROUTER_FIELDS:
            if name not in router:
                ctx.error(f"noise_router.{name}", "required field is missing")
            else:
                density(ctx, router[name], f"noise_router.{name}")
        for name in sorted(set(router) - set(NOISE_ROUTER_FIELDS)):
            ctx.error(f"noise_router.{name}", "is not a 1.19 noise router field")
    targets = ctx.req(d, "spawn_target", "", "array")
    for i, point in enumerate(targets or []):
        p = ctx.obj(point, f"spawn_target[{i}]")
        if p is None:
            continue
        for key in ("temperature", "humidity", "continentalness", "erosion", "weirdness", "depth"):
            v = p.get(key)
            ok = is_num(v) or (
                isinstance(v, list) and len(v) == 2 and all(is_num(x) for x in v) and v[0] <= v[1]
            )
            if not ok:
                ctx.error(f"spawn_target[{i}].{key}", "must be a number or a [min, max] pair")
        ctx.req(p, "offset", f"spawn_target[{i}]", "number")
    surface_rule(ctx, d.get("surface_rule"), "surface_rule", noise_bounds(d))


# -- configured features -----------------------------------------------------------------
FEATURE_TYPES = frozenset(
    {
        "ore",
        "scattered_ore",
        "tree",
        "random_patch",
        "simple_block",
        "block_column",
        "lake",
        "freeze_top_layer",
        "random_selector",
        "spring_feature",
        "disk",
    }
)
TRUNK_PLACERS = frozenset(
    {
        "straight_trunk_placer",
        "forking_trunk_placer",
        "giant_trunk_placer",
        "mega_jungle_trunk_placer",
        "dark_oak_trunk_placer",
        "fancy_trunk_placer",
        "bending_trunk_placer",
        "upwards_branching_trunk_placer",
    }
)
FOLIAGE_PLACERS = frozenset(
    {
        "blob_foliage_placer",
        "spruce_foliage_placer",
        "pine_foliage_placer",
        "acacia_foliage_placer",
        "bush_foliage_placer",
        "fancy_foliage_placer",
        "jungle_foliage_placer",
        "mega_pine_foliage_placer",
        "dark_oak_foliage_placer",
        "random_spread_foliage_placer",
    }
)


def _tree(ctx: Ctx, c: dict[str, Any], where: str) -> None:
    for key in ("trunk_provider", "foliage_provider", "dirt_provider"):
        state_provider(ctx, c.get(key), f"{where}.{key}")
    ctx.req(c, "decorators", where, "array")
    ctx.req(c, "ignore_vines", where, "boolean")
    ctx.req(c, "force_dirt", where, "boolean")
    size = typed(
        ctx,
        c.get("minimum_size"),
        f"{where}.minimum_size",
        frozenset({"two_layers_feature_size", "three_layers_feature_size"}),
    )
    if size is not None:
        ctx.int_in(size[0], "limit", f"{where}.minimum_size", 0, 81, required=False)
    trunk = typed(ctx, c.get("trunk_placer"), f"{where}.trunk_placer", TRUNK_PLACERS)
    if trunk is not None:
        t = trunk[0]
        ctx.int_in(t, "base_height", f"{where}.trunk_placer", 0, 32)
        ctx.int_in(t, "height_rand_a", f"{where}.trunk_placer", 0, 24)
        ctx.int_in(t, "height_rand_b", f"{where}.trunk_placer", 0, 24)
    foliage = typed(ctx, c.get("foliage_placer"), f"{where}.foliage_placer", FOLIAGE_PLACERS)
    if foliage is not None:
        f, kind = foliage
        int_provider(ctx, f.get("radius"), f"{where}.foliage_placer.radius", 0, 16)
        int_provider(ctx, f.get("offset"), f"{where}.foliage_placer.offset", 0, 16)
        if kind in ("blob_foliage_placer", "bush_foliage_placer", "fancy_foliage_placer"):
            ctx.int_in(f, "height", f"{where}.foliage_placer", 0, 16)
        if kind == "spruce_foliage_placer":
            int_provider(ctx, f.get("trunk_height"), f"{where}.foliage_placer.trunk_height", 0, 24)


def configured_feature(ctx: Ctx, doc: Any, where: str = "") -> str | None:
    """Check a configured feature; return its bare type."""
    got = typed(ctx, doc, where, FEATURE_TYPES)
    if got is None:
        return None
    d, kind = got
    at = f"{where}.config" if where else "config"
    c = ctx.req(d, "config", where, "object")
    if c is None:
        return kind
    if kind in ("ore", "scattered_ore"):
        ctx.int_in(c, "size", at, 0, 64)
        ctx.num_in(c, "discard_chance_on_air_exposure", at, 0.0, 1.0)
        targets = ctx.req(c, "targets", at, "array")
        if targets is not None and not targets:
            ctx.error(f"{at}.targets", "must not be empty")
        for i, t in enumerate(targets or []):
            td = ctx.obj(t, f"{at}.targets[{i}]")
            if td is not None:
                rule_test(ctx, td.get("target"), f"{at}.targets[{i}].target")
                ctx.block_state(td.get("state"), f"{at}.targets[{i}].state")
    elif kind == "tree":
        _tree(ctx, c, at)
    elif kind == "random_patch":
        ctx.int_in(c, "tries", at, 1, 1024)
        ctx.int_in(c, "xz_spread", at, 0, 16)
        ctx.int_in(c, "y_spread", at, 0, 16)
        placed_ref(ctx, c.get("feature"), f"{at}.feature")
    elif kind == "simple_block":
        state_provider(ctx, c.get("to_place"), f"{at}.to_place")
    elif kind == "block_column":
        ctx.enum(c, "direction", at, ("down", "up", "north", "south", "west", "east"))
        block_predicate(ctx, c.get("allowed_placement"), f"{at}.allowed_placement")
        ctx.req(c, "prioritize_tip", at, "boolean")
        layers = ctx.req(c, "layers", at, "array") or []
        for i, layer in enumerate(layers):
            ld = ctx.obj(layer, f"{at}.layers[{i}]")
            if ld is not None:
                int_provider(ctx, ld.get("height"), f"{at}.layers[{i}].height", 0, 4064)
                state_provider(ctx, ld.get("provider"), f"{at}.layers[{i}].provider")
    elif kind == "lake":
        state_provider(ctx, c.get("fluid"), f"{at}.fluid")
        state_provider(ctx, c.get("barrier"), f"{at}.barrier")
    elif kind == "random_selector":
        for i, entry in enumerate(ctx.req(c, "features", at, "array") or []):
            ed = ctx.obj(entry, f"{at}.features[{i}]")
            if ed is not None:
                placed_ref(ctx, ed.get("feature"), f"{at}.features[{i}].feature")
                ctx.num_in(ed, "chance", f"{at}.features[{i}]", 0.0, 1.0)
        placed_ref(ctx, c.get("default"), f"{at}.default")
    return kind


# -- placed features ---------------------------------------------------------------------------
MODIFIERS = frozenset(
    {
        "count",
        "in_square",
        "biome",
        "height_range",
        "heightmap",
        "rarity_filter",
        "surface_water_depth_filter",
        "block_predicate_filter",
        "count_on_every_layer",
        "environment_scan",
        "random_offset",
        "surface_relative_threshold_filter",
        "noise_threshold_count",
        "noise_based_count",
        "carving_mask",
    }
)
HEIGHTMAPS = (
    "WORLD_SURFACE_WG",
    "WORLD_SURFACE",
    "OCEAN_FLOOR_WG",
    "OCEAN_FLOOR",
    "MOTION_BLOCKING",
    "MOTION_BLOCKING_NO_LEAVES",
)


def placed_ref(ctx: Ctx, value: Any, where: str) -> None:
    """A placed feature: a reference, or an inline ``{"feature", "placement"}``."""
    if isinstance(value, str):
        ctx.ref(value, where, "worldgen/placed_feature", vanilla_ids.PLACED_FEATURES)
    else:
        placed_feature(ctx, value, where, None)


def placed_feature(ctx: Ctx, doc: Any, where: str, bounds: tuple[int, int] | None) -> list[str]:
    """Check a placed feature; return the bare types of its modifiers."""
    d = ctx.obj(doc, where)
    if d is None:
        return []
    feature = d.get("feature")
    at = f"{where}.feature" if where else "feature"
    if isinstance(feature, str):
        ctx.ref(feature, at, "worldgen/configured_feature", vanilla_ids.CONFIGURED_FEATURES)
    elif feature is None:
        ctx.error(at, "required field is missing")
    else:
        configured_feature(ctx, feature, at)
    mods = ctx.req(d, "placement", where, "array") or []
    kinds: list[str] = []
    for i, m in enumerate(mods):
        mat = f"{where}.placement[{i}]" if where else f"placement[{i}]"
        got = typed(ctx, m, mat, MODIFIERS)
        if got is None:
            continue
        md, kind = got
        kinds.append(kind)
        if kind in ("count", "count_on_every_layer"):
            int_provider(ctx, md.get("count"), f"{mat}.count", 0, 256)
        elif kind == "rarity_filter":
            ctx.int_in(md, "chance", mat, 1, 1_000_000)
        elif kind == "height_range":
            height_provider(ctx, md.get("height"), f"{mat}.height", bounds)
        elif kind == "heightmap":
            ctx.enum(md, "heightmap", mat, HEIGHTMAPS)
        elif kind == "surface_water_depth_filter":
            ctx.req(md, "max_water_depth", mat, "int")
        elif kind == "block_predicate_filter":
            block_predicate(ctx, md.get("predicate"), f"{mat}.predicate")
    return kinds


def check_ore_placement(ctx: Ctx, kinds: list[str], name: str) -> None:
    """An ore band needs a count (or rarity), spreading, a height range and the biome filter."""
    for needed, why in (
        ("in_square", "veins would all start at the chunk corner"),
        ("height_range", "veins would all start at the bottom of the world"),
        ("biome", "the feature would also generate outside its biome"),
    ):
        if needed not in kinds:
            ctx.error("placement", f"ore placement {name} has no {needed} modifier: {why}")
    if "count" not in kinds and "rarity_filter" not in kinds:
        ctx.warn(
            "placement", f"ore placement {name} has no count or rarity_filter: one vein per chunk"
        )


# -- biomes -----------------------------------------------------------------------------------
SPAWN_CATEGORIES = (
    "monster",
    "creature",
    "ambient",
    "axolotls",
    "underground_water_creature",
    "water_creature",
    "water_ambient",
    "misc",
)


def vanilla_ids_biomes() -> frozenset[str]:
    from mirrorcraft.worldgen.vanilla_biomes import BIOMES

    return BIOMES


def biome(ctx: Ctx, doc: Any, feature_types: Mapping[str, str | None]) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    ctx.enum(d, "precipitation", "", ("none", "rain", "snow"))
    ctx.req(d, "temperature", "", "number")
    ctx.req(d, "downfall", "", "number")
    ctx.enum(d, "temperature_modifier", "", ("none", "frozen"), required=False)
    ctx.num_in(d, "creature_spawn_probability", "", 0.0, 0.9999999, required=False)
    eff = ctx.req(d, "effects", "", "object")
    if eff is not None:
        for key in ("sky_color", "fog_color", "water_color", "water_fog_color"):
            ctx.int_in(eff, key, "effects", 0, 0xFFFFFF)
        for key in ("grass_color", "foliage_color"):
            ctx.int_in(eff, key, "effects", 0, 0xFFFFFF, required=False)
    spawners = ctx.req(d, "spawners", "", "object") or {}
    for cat, entries in spawners.items():
        if cat not in SPAWN_CATEGORIES:
            ctx.error(f"spawners.{cat}", f"is not a mob category ({', '.join(SPAWN_CATEGORIES)})")
            continue
        if not isinstance(entries, list):
            ctx.error(f"spawners.{cat}", "must be an array")
            continue
        for i, e in enumerate(entries):
            at = f"spawners.{cat}[{i}]"
            ed = ctx.obj(e, at)
            if ed is None:
                continue
            etype = ctx.req(ed, "type", at, "string")
            if etype is not None and full(etype) not in ctx.vanilla.entity_types:
                ctx.error(f"{at}.type", f"unknown entity type {etype!r}")
            ctx.int_in(ed, "weight", at, 0, 1_000_000)
            lo = ctx.int_in(ed, "minCount", at, 0, 256)
            hi = ctx.int_in(ed, "maxCount", at, 0, 256)
            if lo is not None and hi is not None and lo > hi:
                ctx.error(at, f"minCount {lo} is above maxCount {hi}")
    ctx.req(d, "spawn_costs", "", "object")
    carvers = ctx.req(d, "carvers", "", "object") or {}
    for step in carvers:
        if step not in ("air", "liquid"):
            ctx.error(f"carvers.{step}", "carving steps are air and liquid")
    steps = ctx.req(d, "features", "", "array")
    if steps is None:
        return
    if len(steps) > len(STEPS):
        ctx.error("features", f"has {len(steps)} steps; 1.19 has {len(STEPS)}")
    seen: dict[str, int] = {}
    for si, step in enumerate(steps):
        if not isinstance(step, list):
            ctx.error(f"features[{si}]", "must be an array of placed features")
            continue
        for fi, ref in enumerate(step):
            at = f"features[{si}][{fi}]"
            loc = ctx.ref(ref, at, "worldgen/placed_feature", vanilla_ids.PLACED_FEATURES)
            if loc is None:
                continue
            if loc in seen:
                ctx.error(
                    at,
                    f"{loc} is already listed at step {STEPS[seen[loc]] if seen[loc] < len(STEPS) else seen[loc]}: 1.19 rejects feature order cycles",
                )
            seen[loc] = si
            kind = feature_types.get(loc)
            if si >= len(STEPS):
                continue
            expected = _expected_step(kind, loc)
            if expected is not None and si != STEP[expected]:
                ctx.error(
                    at,
                    f"{loc} ({kind or 'vanilla feature'}) belongs in step {expected} ({STEP[expected]}), not {STEPS[si]} ({si})",
                )


def _expected_step(kind: str | None, loc: str) -> str | None:
    if kind in ("ore", "scattered_ore"):
        return "underground_ores"
    if kind in ("tree", "random_patch", "simple_block", "block_column"):
        return "vegetal_decoration"
    if kind == "lake":
        return "lakes"
    if kind == "freeze_top_layer" or loc == "minecraft:freeze_top_layer":
        return "top_layer_modification"
    return None


# -- world presets ---------------------------------------------------------------------------
BIOME_SOURCES = frozenset({"fixed", "multi_noise", "the_end", "checkerboard"})


def world_preset(ctx: Ctx, doc: Any, settings_bounds: Mapping[str, tuple[int, int] | None]) -> None:
    d = ctx.obj(doc, "")
    if d is None:
        return
    dims = ctx.req(d, "dimensions", "", "object")
    if dims is None:
        return
    if "minecraft:overworld" not in dims:
        ctx.error("dimensions", "a world preset must define minecraft:overworld")
    for name, stem in dims.items():
        at = f"dimensions.{name}"
        sd = ctx.obj(stem, at)
        if sd is None:
            continue
        dim_type = ctx.ref(
            ctx.req(sd, "type", at, "string"),
            f"{at}.type",
            "dimension_type",
            vanilla_ids.DIMENSION_TYPES,
        )
        gen = typed(
            ctx, sd.get("generator"), f"{at}.generator", frozenset({"noise", "flat", "debug"})
        )
        if gen is None or gen[1] != "noise":
            continue
        g = gen[0]
        src = typed(ctx, g.get("biome_source"), f"{at}.generator.biome_source", BIOME_SOURCES)
        if src is not None:
            sdoc, skind = src
            if skind == "fixed":
                ctx.ref(
                    ctx.req(sdoc, "biome", f"{at}.generator.biome_source", "string"),
                    f"{at}.generator.biome_source.biome",
                    "worldgen/biome",
                    vanilla_ids_biomes(),
                )
            elif skind == "multi_noise" and "preset" in sdoc:
                preset = sdoc["preset"]
                if full(str(preset)) not in vanilla_ids.MULTI_NOISE_PRESETS:
                    ctx.error(
                        f"{at}.generator.biome_source.preset",
                        f"unknown multi-noise preset {preset!r}",
                    )
        settings = g.get("settings")
        if isinstance(settings, str):
            loc = ctx.ref(
                settings,
                f"{at}.generator.settings",
                "worldgen/noise_settings",
                vanilla_ids.NOISE_SETTINGS,
            )
            bounds = settings_bounds.get(loc or "")
            if bounds is not None and dim_type in DIMENSION_RANGES:
                lo, hi = DIMENSION_RANGES[dim_type]
                if bounds[0] < lo or bounds[1] > hi:
                    ctx.error(
                        f"{at}.generator.settings",
                        f"noise height {bounds[0]}..{bounds[1]} exceeds the {dim_type} dimension ({lo}..{hi})",
                    )
        elif isinstance(settings, dict):
            noise_settings(ctx, settings)
        else:
            ctx.error(f"{at}.generator.settings", "must be a noise settings id or object")
