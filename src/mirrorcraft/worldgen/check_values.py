"""Checks of the small value types worldgen files share: int and height providers, vertical
anchors, block predicates, rule tests, state providers and density functions (1.19 formats)."""

from __future__ import annotations

from typing import Any

from mirrorcraft.worldgen import vanilla_ids
from mirrorcraft.worldgen.checks import Ctx, is_int, is_num, type_name

MIN_Y, MAX_Y = -2032, 2031


def short(name: str) -> str:
    return name.removeprefix("minecraft:")


def typed(
    ctx: Ctx, doc: Any, where: str, known: frozenset[str]
) -> tuple[dict[str, Any], str] | None:
    """An object with a known ``type``: (object, bare type name) or None after reporting."""
    d = ctx.obj(doc, where)
    if d is None:
        return None
    kind = ctx.req(d, "type", where, "string")
    if kind is None:
        return None
    bare = short(kind)
    if bare not in known:
        ctx.error(
            f"{where}.type",
            f"{kind!r} is not a type the validator knows here ({', '.join(sorted(known))})",
        )
        return None
    return d, bare


# -- int and height providers ---------------------------------------------------------------
INT_PROVIDERS = frozenset(
    {"constant", "uniform", "biased_to_bottom", "clamped", "weighted_list", "clamped_normal"}
)


def int_provider(ctx: Ctx, value: Any, where: str, lo: int, hi: int) -> tuple[int, int] | None:
    """Check an int provider; return its (min, max) when known."""
    if is_int(value):
        if not lo <= value <= hi:
            ctx.error(where, f"must be between {lo} and {hi}, got {value}")
            return None
        return value, value
    got = typed(ctx, value, where, INT_PROVIDERS)
    if got is None:
        return None
    d, kind = got
    if kind == "constant":
        v = ctx.int_in(d, "value", where, lo, hi)
        return (v, v) if v is not None else None
    if kind in ("uniform", "biased_to_bottom"):
        inner = ctx.req(d, "value", where, "object")
        if inner is None:
            return None
        a = ctx.int_in(inner, "min_inclusive", f"{where}.value", lo, hi)
        b = ctx.int_in(inner, "max_inclusive", f"{where}.value", lo, hi)
        if a is not None and b is not None and a > b:
            ctx.error(f"{where}.value", f"min_inclusive {a} is above max_inclusive {b}")
            return None
        return (a, b) if a is not None and b is not None else None
    if kind == "weighted_list":
        dist = ctx.req(d, "distribution", where, "array")
        if not dist:
            if dist is not None:
                ctx.error(f"{where}.distribution", "must not be empty")
            return None
        values = []
        for i, entry in enumerate(dist):
            e = ctx.obj(entry, f"{where}.distribution[{i}]")
            if e is None:
                continue
            got_range = int_provider(ctx, e.get("data"), f"{where}.distribution[{i}].data", lo, hi)
            ctx.int_in(e, "weight", f"{where}.distribution[{i}]", 1, 1_000_000)
            if got_range:
                values += list(got_range)
        return (min(values), max(values)) if values else None
    if kind == "clamped":
        int_provider(ctx, d.get("source"), f"{where}.source", -1_000_000, 1_000_000)
        a = ctx.int_in(d, "min_inclusive", where, lo, hi)
        b = ctx.int_in(d, "max_inclusive", where, lo, hi)
        return (a, b) if a is not None and b is not None else None
    ctx.req(d, "mean", where, "number")
    ctx.req(d, "deviation", where, "number")
    a = ctx.int_in(d, "min_inclusive", where, lo, hi)
    b = ctx.int_in(d, "max_inclusive", where, lo, hi)
    return (a, b) if a is not None and b is not None else None


def anchor(ctx: Ctx, value: Any, where: str, bounds: tuple[int, int] | None) -> int | None:
    """A vertical anchor: exactly one of absolute / above_bottom / below_top. Returns absolute y when known."""
    d = ctx.obj(value, where)
    if d is None:
        return None
    keys = [k for k in ("absolute", "above_bottom", "below_top") if k in d]
    extra = sorted(set(d) - {"absolute", "above_bottom", "below_top"})
    if len(keys) != 1 or extra:
        ctx.error(where, "a vertical anchor has exactly one of absolute, above_bottom, below_top")
        return None
    v = ctx.req(d, keys[0], where, "int")
    if v is None:
        return None
    if keys[0] == "absolute":
        if not MIN_Y <= v <= MAX_Y:
            ctx.error(f"{where}.absolute", f"must be between {MIN_Y} and {MAX_Y}, got {v}")
            return None
        if bounds is not None and not bounds[0] <= v <= bounds[1]:
            ctx.error(
                f"{where}.absolute",
                f"y={v} lies outside the world's height range {bounds[0]}..{bounds[1]}",
            )
        return v  # type: ignore[no-any-return]
    if bounds is None:
        return None
    return bounds[0] + v if keys[0] == "above_bottom" else bounds[1] - v  # type: ignore[no-any-return]


HEIGHT_PROVIDERS = frozenset(
    {
        "constant",
        "uniform",
        "biased_to_bottom",
        "very_biased_to_bottom",
        "trapezoid",
        "weighted_list",
    }
)


def height_provider(ctx: Ctx, value: Any, where: str, bounds: tuple[int, int] | None) -> None:
    if isinstance(value, dict) and "type" not in value:
        anchor(ctx, value, where, bounds)  # a bare anchor is a constant height
        return
    got = typed(ctx, value, where, HEIGHT_PROVIDERS)
    if got is None:
        return
    d, kind = got
    if kind == "constant":
        anchor(ctx, d.get("value"), f"{where}.value", bounds)
        return
    if kind == "weighted_list":
        dist = ctx.req(d, "distribution", where, "array") or []
        for i, entry in enumerate(dist):
            if isinstance(entry, dict):
                height_provider(ctx, entry.get("data"), f"{where}.distribution[{i}].data", bounds)
        return
    a = anchor(ctx, d.get("min_inclusive"), f"{where}.min_inclusive", bounds)
    b = anchor(ctx, d.get("max_inclusive"), f"{where}.max_inclusive", bounds)
    if a is not None and b is not None and a > b:
        ctx.error(
            where, f"min_inclusive (y={a}) is above max_inclusive (y={b}): the range is empty"
        )
    if kind == "trapezoid":
        ctx.int_in(d, "plateau", where, 0, 4064, required=False)


# -- block predicates, rule tests, state providers ----------------------------------------
BLOCK_PREDICATES = frozenset(
    {
        "matching_blocks",
        "matching_block_tag",
        "matching_fluids",
        "would_survive",
        "all_of",
        "any_of",
        "not",
        "solid",
        "replaceable",
        "true",
        "has_sturdy_face",
        "inside_world_bounds",
    }
)


def _offset(ctx: Ctx, d: dict[str, Any], where: str) -> None:
    off = ctx.opt(d, "offset", where, "array")
    if off is not None and (len(off) != 3 or not all(is_int(v) and -16 <= v <= 16 for v in off)):
        ctx.error(f"{where}.offset", "must be three integers between -16 and 16")


def _block_list(ctx: Ctx, value: Any, where: str) -> None:
    if isinstance(value, str):
        if value.startswith("#"):
            ctx.block_tag(value, where)
        else:
            ctx.block(value, where)
        return
    if not isinstance(value, list) or not value:
        ctx.error(
            where,
            f"must be a block id, #tag or a non-empty list of block ids, got {type_name(value)}",
        )
        return
    for i, b in enumerate(value):
        ctx.block(b, f"{where}[{i}]")


def block_predicate(ctx: Ctx, value: Any, where: str) -> None:
    got = typed(ctx, value, where, BLOCK_PREDICATES)
    if got is None:
        return
    d, kind = got
    if kind == "matching_blocks":
        _block_list(ctx, d.get("blocks"), f"{where}.blocks")
        _offset(ctx, d, where)
    elif kind == "matching_block_tag":
        ctx.block_tag(ctx.req(d, "tag", where, "string"), f"{where}.tag")
        _offset(ctx, d, where)
    elif kind == "matching_fluids":
        fluids = d.get("fluids")
        items = fluids if isinstance(fluids, list) else [fluids]
        for i, f in enumerate(items):
            if f not in (
                "minecraft:water",
                "minecraft:flowing_water",
                "minecraft:lava",
                "minecraft:flowing_lava",
            ):
                ctx.error(f"{where}.fluids[{i}]", f"unknown fluid {f!r}")
        _offset(ctx, d, where)
    elif kind == "would_survive":
        ctx.block_state(d.get("state"), f"{where}.state")
        _offset(ctx, d, where)
    elif kind in ("all_of", "any_of"):
        preds = ctx.req(d, "predicates", where, "array") or []
        if not preds and "predicates" in d:
            ctx.error(f"{where}.predicates", "must not be empty")
        for i, p in enumerate(preds):
            block_predicate(ctx, p, f"{where}.predicates[{i}]")
    elif kind == "not":
        block_predicate(ctx, d.get("predicate"), f"{where}.predicate")
    elif kind == "has_sturdy_face":
        ctx.enum(d, "direction", where, ("down", "up", "north", "south", "west", "east"))


RULE_TESTS = frozenset(
    {
        "always_true",
        "block_match",
        "blockstate_match",
        "tag_match",
        "random_block_match",
        "random_blockstate_match",
    }
)


def rule_test(ctx: Ctx, value: Any, where: str) -> None:
    d = ctx.obj(value, where)
    if d is None:
        return
    kind = ctx.req(d, "predicate_type", where, "string")
    if kind is None:
        return
    bare = short(kind)
    if bare not in RULE_TESTS:
        ctx.error(
            f"{where}.predicate_type",
            f"{kind!r} is not a 1.19 rule test ({', '.join(sorted(RULE_TESTS))})",
        )
        return
    if bare in ("block_match", "random_block_match"):
        ctx.block(ctx.req(d, "block", where, "string"), f"{where}.block")
    if bare in ("blockstate_match", "random_blockstate_match"):
        ctx.block_state(d.get("block_state"), f"{where}.block_state")
    if bare == "tag_match":
        ctx.block_tag(ctx.req(d, "tag", where, "string"), f"{where}.tag")
    if bare.startswith("random_"):
        ctx.num_in(d, "probability", where, 0.0, 1.0)


STATE_PROVIDERS = frozenset(
    {
        "simple_state_provider",
        "weighted_state_provider",
        "rotated_block_provider",
        "noise_threshold_provider",
        "noise_provider",
        "dual_noise_provider",
        "randomized_int_state_provider",
    }
)


def state_provider(ctx: Ctx, value: Any, where: str) -> None:
    got = typed(ctx, value, where, STATE_PROVIDERS)
    if got is None:
        return
    d, kind = got
    if kind in ("simple_state_provider", "rotated_block_provider"):
        ctx.block_state(d.get("state"), f"{where}.state")
    elif kind == "weighted_state_provider":
        entries = ctx.req(d, "entries", where, "array") or []
        if not entries and "entries" in d:
            ctx.error(f"{where}.entries", "must not be empty")
        for i, e in enumerate(entries):
            ed = ctx.obj(e, f"{where}.entries[{i}]")
            if ed is not None:
                ctx.block_state(ed.get("data"), f"{where}.entries[{i}].data")
                ctx.int_in(ed, "weight", f"{where}.entries[{i}]", 1, 1_000_000)


# -- density functions ----------------------------------------------------------------------
_ONE_ARG = frozenset(
    {
        "interpolated",
        "flat_cache",
        "cache_2d",
        "cache_once",
        "cache_all_in_cell",
        "abs",
        "square",
        "cube",
        "half_negative",
        "quarter_negative",
        "squeeze",
        "blend_density",
    }
)
_TWO_ARGS = frozenset({"add", "mul", "min", "max"})
_NO_ARGS = frozenset(
    {"blend_alpha", "blend_offset", "beardifier", "end_islands", "old_blended_noise"}
)
DENSITY_TYPES = (
    _ONE_ARG
    | _TWO_ARGS
    | _NO_ARGS
    | {
        "constant",
        "y_clamped_gradient",
        "noise",
        "shifted_noise",
        "clamp",
        "range_choice",
        "spline",
        "shift_a",
        "shift_b",
        "shift",
        "weird_scaled_sampler",
    }
)


def _noise_ref(ctx: Ctx, value: Any, where: str) -> None:
    if isinstance(value, dict):
        noise(ctx, value, where)
    else:
        ctx.ref(value, where, "worldgen/noise", vanilla_ids.NOISES)


def density(ctx: Ctx, value: Any, where: str, depth: int = 0) -> None:
    if depth > 64:
        ctx.error(where, "density functions nest more than 64 levels deep")
        return
    if is_num(value):
        if not -1_000_000 <= value <= 1_000_000:
            ctx.error(where, f"constant must be between -1000000 and 1000000, got {value}")
        return
    if isinstance(value, str):
        ctx.ref(value, where, "worldgen/density_function", vanilla_ids.DENSITY_FUNCTIONS)
        return
    got = typed(ctx, value, where, frozenset(DENSITY_TYPES))
    if got is None:
        return
    d, kind = got
    if kind == "constant":
        ctx.num_in(d, "argument", where, -1_000_000, 1_000_000)
    elif kind in _ONE_ARG:
        density(ctx, d.get("argument"), f"{where}.argument", depth + 1)
    elif kind in _TWO_ARGS:
        density(ctx, d.get("argument1"), f"{where}.argument1", depth + 1)
        density(ctx, d.get("argument2"), f"{where}.argument2", depth + 1)
    elif kind == "y_clamped_gradient":
        a = ctx.int_in(d, "from_y", where, MIN_Y * 2, MAX_Y * 2)
        b = ctx.int_in(d, "to_y", where, MIN_Y * 2, MAX_Y * 2)
        ctx.num_in(d, "from_value", where, -1_000_000, 1_000_000)
        ctx.num_in(d, "to_value", where, -1_000_000, 1_000_000)
        if a is not None and b is not None and a == b:
            ctx.error(where, "from_y and to_y must differ")
    elif kind in ("noise", "shifted_noise"):
        _noise_ref(ctx, d.get("noise"), f"{where}.noise")
        ctx.req(d, "xz_scale", where, "number")
        ctx.req(d, "y_scale", where, "number")
        if kind == "shifted_noise":
            for k in ("shift_x", "shift_y", "shift_z"):
                density(ctx, d.get(k), f"{where}.{k}", depth + 1)
    elif kind == "clamp":
        density(ctx, d.get("input"), f"{where}.input", depth + 1)
        ctx.req(d, "min", where, "number")
        ctx.req(d, "max", where, "number")
    elif kind == "range_choice":
        for k in ("input", "when_in_range", "when_out_of_range"):
            density(ctx, d.get(k), f"{where}.{k}", depth + 1)
        ctx.req(d, "min_inclusive", where, "number")
        ctx.req(d, "max_exclusive", where, "number")
    elif kind in ("shift_a", "shift_b", "shift"):
        _noise_ref(ctx, d.get("argument"), f"{where}.argument")
    elif kind == "spline":
        ctx.req(d, "spline", where, "object") if not is_num(d.get("spline")) else None
    elif kind == "weird_scaled_sampler":
        density(ctx, d.get("input"), f"{where}.input", depth + 1)
        _noise_ref(ctx, d.get("noise"), f"{where}.noise")
        ctx.enum(d, "rarity_value_mapper", where, ("type_1", "type_2"))


def noise(ctx: Ctx, doc: Any, where: str) -> None:
    d = ctx.obj(doc, where)
    if d is None:
        return
    first = ctx.req(d, "firstOctave", where, "int")
    if first is not None and not -64 <= first <= 64:
        ctx.error(
            f"{where}.firstOctave" if where else "firstOctave",
            f"must be between -64 and 64, got {first}",
        )
    amps = ctx.req(d, "amplitudes", where, "array")
    if amps is not None:
        if not amps:
            ctx.error(f"{where}.amplitudes" if where else "amplitudes", "must not be empty")
        for i, a in enumerate(amps):
            if not is_num(a):
                ctx.error(
                    f"{where}.amplitudes[{i}]" if where else f"amplitudes[{i}]",
                    f"must be a number, got {type_name(a)}",
                )
