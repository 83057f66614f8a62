"""The static report for a candidate biome spec (kind ``biome``).

Checks, in order: the ``BiomeSpec`` schema; identifiers against the catalog; the
design bounds on ``(min, max)`` pairs and list sizes; then the candidate is
generated with fixed seeds (``DESIGN_SEEDS``) by our generator, and in each world:
a dry spawn, ores underground, sugar cane next to water, a Vanilla route for
every selected task, and each raw resource the route consumes present in at
least the estimated quantity (``resources.bill_of_materials``; below twice that
is a warning) and not farther from the spawn than the body explores. Last, the spec
is compiled to a 1.19 worldgen datapack (``mirrorcraft.worldgen``) and validated
structurally. Codes are listed in ``docs/design.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.config import default_body_config
from mirrorcraft.design.biome_catalog import FLAGGED, LIST_BOUNDS, PAIR_BOUNDS, biome_catalog
from mirrorcraft.design.dependency import routes_in, view_of
from mirrorcraft.design.report import StaticReport
from mirrorcraft.design.resources import (
    bill_of_materials,
    cane_by_water,
    exposed_ores,
    world_supply,
)
from mirrorcraft.world.registry import LoadedWorld, biome_spec, load_custom_world
from mirrorcraft.world.spec import BiomeSpec
from mirrorcraft.world.state import WorldState
from mirrorcraft.worldgen import compile_biome_pack, validate_pack

DESIGN_SEEDS = (9101, 9102, 9103, 9104)
"""Seeds of the candidate worlds; ``worlds=n`` uses the first n."""
SUPPLY_MARGIN = 2


@dataclass
class BiomeCandidate:
    report: StaticReport
    spec: BiomeSpec | None = None
    worlds: list[LoadedWorld] = field(default_factory=list)


def _pairs(spec: BiomeSpec) -> list[tuple[str, tuple[int, int]]]:
    out: list[tuple[str, tuple[int, int]]] = [
        ("terrain.filler_depth", spec.terrain.filler_depth),
        ("water.ponds", spec.water.ponds),
        ("water.pond_radius", spec.water.pond_radius),
        ("sugar_cane.clusters_per_pond", spec.sugar_cane.clusters_per_pond),
        ("sugar_cane.height", spec.sugar_cane.height),
    ]
    out += [("ores[].vein_size", b.vein_size) for b in spec.ores]
    out += [("trees.kinds[].height", k.height) for k in spec.trees.kinds]
    out += [("mobs[].count", m.count) for m in spec.mobs]
    out += [("mobs[].herd_size", m.herd_size) for m in spec.mobs]
    return out


def _check_identifiers(report: StaticReport, spec: BiomeSpec, tasks: tuple[str, ...]) -> None:
    cat = biome_catalog(tasks)
    t = spec.terrain
    roles = {
        "top": t.top_block,
        "filler": t.filler_block,
        "shore": t.shore_block,
        "stone": t.stone_block,
        "deep": t.deep_block,
    }
    for role, block in roles.items():
        if block not in cat.surface[role]:
            report.invalid(f"terrain {role} block {block!r} is not in the catalog")
    for band in spec.ores:
        if band.block not in cat.ores:
            report.invalid(f"ore {band.block!r} is not in the catalog")
        elif band.deepslate_block not in (None, cat.ores[band.block], band.block, "obsidian"):
            report.invalid(f"{band.deepslate_block!r} is not the deepslate form of {band.block}")
    for kind in spec.trees.kinds:
        if cat.trees.get(kind.log) != kind.leaves:
            report.invalid(f"tree {kind.log}/{kind.leaves} is not a catalog log/leaves pair")
    for plant in spec.vegetation:
        if plant.block not in cat.vegetation:
            report.invalid(f"plant {plant.block!r} is not in the catalog")
    for mob in spec.mobs:
        if mob.type not in cat.creatures:
            report.invalid(f"creature {mob.type!r} is not in the catalog")
    for path, (lo, hi) in _pairs(spec):
        low, high = PAIR_BOUNDS[path]
        if not (low <= lo <= hi <= high):
            report.invalid(f"{path} must be [min, max] with {low} <= min <= max <= {high}")
    sizes = {
        "ores": len(spec.ores),
        "trees.kinds": len(spec.trees.kinds),
        "vegetation": len(spec.vegetation),
        "mobs": len(spec.mobs),
    }
    for path, n in sizes.items():
        low, high = LIST_BOUNDS[path]
        if not low <= n <= high:
            report.invalid(f"{path} must have {low} to {high} entries (has {n})")


def _check_character(report: StaticReport, spec: BiomeSpec, base: BiomeSpec) -> None:
    if spec.terrain.relief > FLAGGED["terrain.relief"]:
        report.warn("rough_terrain", f"relief {spec.terrain.relief} makes travel needlessly hard")
    if (
        spec.trees.per_chunk > FLAGGED["trees.per_chunk"]
        and base.trees.per_chunk <= FLAGGED["trees.per_chunk"]
    ):
        report.warn("cluttered", f"{spec.trees.per_chunk} trees per chunk is dense for this base")
    base_logs = {k.log for k in base.trees.kinds}
    if not base_logs & {k.log for k in spec.trees.kinds}:
        report.warn("unrecognisable", f"none of the base biome's trees ({sorted(base_logs)})")
    if spec.terrain.top_block != base.terrain.top_block:
        report.warn("unrecognisable", f"top block differs from the base's {base.terrain.top_block}")
    if spec.runtime != base.runtime:
        report.warn("runtime_changed", "runtime controls differ from the benchmark's")


def _check_world(
    report: StaticReport, loaded: LoadedWorld, tasks: tuple[str, ...], with_routes: bool
) -> dict[str, Any]:
    rules = vanilla_rules()
    w = loaded.world
    where = w.world_id
    x, y, z = w.spawn
    below = WorldState.fresh(loaded).block((x, y - 1, z))
    if below in ("water", "air", "ice"):
        report.fail("spawn_unsafe", f"the spawn stands on {below}", world=where)
    if exposed_ores(loaded):
        report.fail("ore_exposed", f"{exposed_ores(loaded)} ore blocks at the surface", world=where)
    routes = routes_in(rules, view_of(loaded), tasks)
    radius = default_body_config().explore_radius
    resources: dict[str, Any] = {}
    for task in tasks:
        if not routes.routes[task].ok:
            report.fail("no_route", f"{task} has no Vanilla route", task=task, world=where)
            continue
        need = bill_of_materials(rules, routes.reach, task)
        supply = world_supply(loaded, rules, set(need))
        for item, n in sorted(need.items()):
            s = supply[item]
            entry = resources.setdefault(item, {"need": 0, "sources": list(s.sources)})
            entry.update(
                available=s.available, nearest=None if s.nearest is None else round(s.nearest)
            )
            entry["need"] = max(entry["need"], n)
            if s.available < n:
                report.fail("scarce_resource", f"{item}: {s.available} for {n} needed", world=where)
            elif s.available < SUPPLY_MARGIN * n:
                report.warn("thin_resource", f"{item}: {s.available} for {n} needed", world=where)
            if s.nearest is not None and s.nearest > radius:
                report.warn(
                    "far_resource", f"nearest {item} {s.nearest:.0f} blocks away", world=where
                )
    cane = cane_by_water(loaded)
    if "sugar_cane" in resources and cane == 0:
        report.fail("cane_without_water", "no sugar cane stands next to water", world=where)
    mobs: dict[str, int] = {}
    for m in w.mobs:
        mobs[m.type] = mobs.get(m.type, 0) + 1
    out: dict[str, Any] = {
        "world": where,
        "seed": w.seed,
        "fingerprint": w.fingerprint,
        "spawn": list(w.spawn),
        "spawn_on": below,
        "ponds": len(w.ponds),
        "cane_columns_by_water": cane,
        "mobs": mobs,
        "resources": resources,
    }
    if with_routes:
        out["routes"] = {t: r.text() for t, r in routes.routes.items()}
    return out


def biome_report(raw: object, tasks: tuple[str, ...], base: str, worlds: int = 2) -> BiomeCandidate:
    """Validate a candidate spec (a mapping or a ``BiomeSpec``), generate it, and check it."""
    report = StaticReport("biome")
    try:
        spec = raw if isinstance(raw, BiomeSpec) else BiomeSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        report.invalid(f"spec: field {where!r}: {first['msg']}")
        return BiomeCandidate(report)
    _check_identifiers(report, spec, tasks)
    if report.validation_errors:
        return BiomeCandidate(report, spec)
    _check_character(report, spec, biome_spec(base))
    loaded: list[LoadedWorld] = []
    for k, seed in enumerate(DESIGN_SEEDS[: max(worlds, 1)], 1):
        try:
            loaded.append(load_custom_world(f"{spec.biome}-design-{k}", spec, seed, on_disk=False))
        except (ValueError, IndexError) as exc:
            report.invalid(f"generation failed: {exc}")
            return BiomeCandidate(report, spec)
    report.compiled = True
    report.sections["worlds"] = [
        _check_world(report, lw, tasks, with_routes=k == 0) for k, lw in enumerate(loaded)
    ]
    report.sections["selected_tasks"] = list(tasks)
    report.sections["base_biome"] = base
    report.sections["worldgen"] = _check_worldgen(report, spec)
    return BiomeCandidate(report, spec, loaded)


def _check_worldgen(report: StaticReport, spec: BiomeSpec) -> dict[str, Any]:
    """Compile the spec to a 1.19 worldgen datapack and validate it structurally."""
    try:
        pack = compile_biome_pack(spec)
    except (KeyError, ValueError, TypeError) as exc:  # a spec the compiler cannot translate
        report.fail("worldgen_invalid", f"worldgen datapack: cannot compile ({exc})")
        return {"files": 0, "errors": 1, "warnings": []}
    checked = validate_pack(pack.file_bytes())
    for issue in checked.errors:
        report.fail("worldgen_invalid", f"worldgen datapack: {issue}")
    return {
        "files": checked.files,
        "fingerprint": pack.fingerprint,
        "world_preset": pack.preset_id,
        "errors": len(checked.errors),
        "warnings": [str(i) for i in checked.warnings],
    }
