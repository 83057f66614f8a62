"""Structural validation of a datapack (worldgen and rule files) against the 1.19.0-1.19.2 formats.

``validate_pack`` parses every file, checks pack.mcmeta, and dispatches each file
by its folder to a checker. Errors name the file and the field. The checks are
structural: required fields, JSON types, ranges, references that resolve within
the pack or to whitelisted vanilla ids, feature steps and ore placements. They do
not run the game's codecs, so a pack that passes may still be refused by a 1.19
server for a reason the validator does not model (see docs/real_server.md).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirrorcraft.worldgen import check_rules, check_values, check_worldgen
from mirrorcraft.worldgen.checks import Ctx, Issue, full, vanilla

PACK_FORMAT = 10
_DATA_RE = re.compile(r"^data/([a-z0-9_.-]+)/(.+)$")
WORLDGEN_KINDS = (
    "biome",
    "noise_settings",
    "configured_feature",
    "placed_feature",
    "world_preset",
    "noise",
    "density_function",
    "configured_carver",
    "structure",
    "structure_set",
    "template_pool",
    "processor_list",
    "flat_level_generator_preset",
)
RULE_KINDS = (
    "recipes",
    "loot_tables",
    "advancements",
    "functions",
    "predicates",
    "item_modifiers",
    "dimension_type",
    "dimension",
    "structures",
)

__all__ = ["Issue", "ValidationReport", "validate_pack", "validate_path", "validate_zip"]


@dataclass(frozen=True)
class ValidationReport:
    issues: tuple[Issue, ...]
    files: int

    @property
    def errors(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == "error")

    @property
    def warnings(self) -> tuple[Issue, ...]:
        return tuple(i for i in self.issues if i.severity == "warning")

    @property
    def ok(self) -> bool:
        return not self.errors

    def render(self) -> str:
        head = f"{self.files} files: {len(self.errors)} errors, {len(self.warnings)} warnings"
        return "\n".join([head, *(str(i) for i in self.issues)])


def _classify(path: str) -> tuple[str, str] | None:
    """``data/ns/worldgen/biome/x.json`` -> (``worldgen/biome``, ``ns:x``); None for other files."""
    m = _DATA_RE.match(path)
    if not m:
        return None
    ns, rest = m.groups()
    parts = rest.split("/")
    if parts[0] == "worldgen" and len(parts) >= 3:
        kind, tail = f"worldgen/{parts[1]}", parts[2:]
    elif parts[0] == "tags" and len(parts) >= 3:
        kind, tail = f"tags/{parts[1]}", parts[2:]
        if parts[1] == "worldgen" and len(parts) >= 4:
            kind, tail = f"tags/worldgen/{parts[2]}", parts[3:]
    elif len(parts) >= 2:
        kind, tail = parts[0], parts[1:]
    else:
        return None
    name = "/".join(tail)
    for ext in (".json", ".mcfunction", ".nbt"):
        if name.endswith(ext):
            return kind, f"{ns}:{name[: -len(ext)]}"
    return kind, f"{ns}:{name}"


def _decode(files: Mapping[str, Any], ctx: Ctx) -> dict[str, Any]:
    docs: dict[str, Any] = {}
    for path, raw in sorted(files.items()):
        if path.endswith(".mcfunction"):
            text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
            docs[path] = text
            continue
        if not (path.endswith(".json") or path == "pack.mcmeta"):
            docs[path] = raw
            continue
        if isinstance(raw, bytes | str):
            try:
                docs[path] = json.loads(raw)
            except (ValueError, RecursionError) as exc:  # syntax, UTF-8, 4,300-digit numbers
                ctx.path = path
                line = getattr(exc, "lineno", "?")
                why = "nested too deeply" if isinstance(exc, RecursionError) else exc
                ctx.error("", f"not valid JSON (line {line}): {getattr(exc, 'msg', why)}")
        else:
            docs[path] = raw
    return docs


def _pack_meta(ctx: Ctx, docs: Mapping[str, Any]) -> None:
    ctx.path = "pack.mcmeta"
    if "pack.mcmeta" not in docs:
        if not any(i.path == "pack.mcmeta" for i in ctx.issues):
            ctx.error("", "missing: a datapack needs pack.mcmeta at its root")
        return
    d = ctx.obj(docs["pack.mcmeta"], "")
    pack = ctx.req(d, "pack", "", "object") if d is not None else None
    if pack is None:
        return
    fmt = ctx.req(pack, "pack_format", "pack", "int")
    if fmt is not None and fmt != PACK_FORMAT:
        ctx.error("pack.pack_format", f"must be {PACK_FORMAT} for Minecraft 1.19-1.19.3, got {fmt}")
    if "description" not in pack:
        ctx.error("pack.description", "required field is missing")


def validate_pack(files: Mapping[str, Any]) -> ValidationReport:
    """Validate a datapack given as pack path -> bytes (or already-parsed JSON / function text)."""
    ctx = Ctx(resources={}, vanilla=vanilla())
    docs = _decode(files, ctx)
    _pack_meta(ctx, docs)
    kinds: dict[str, tuple[str, str]] = {}
    for path in docs:
        if path in ("pack.mcmeta", "pack.png"):
            continue
        got = _classify(path)
        if got is None:
            ctx.path = path
            ctx.warn("", "outside data/<namespace>/<kind>/: the game ignores this file")
            continue
        kinds[path] = got
        ctx.resources.setdefault(got[0], set()).add(got[1])
    by_kind: dict[str, list[str]] = {}
    for path, (kind, _loc) in kinds.items():
        by_kind.setdefault(kind, []).append(path)

    # Configured feature types and noise-settings bounds feed the biome and placement checks.
    configured_types: dict[str, str | None] = {}
    for path in by_kind.get("worldgen/configured_feature", []):
        ctx.path = path
        configured_types[kinds[path][1]] = check_worldgen.configured_feature(ctx, docs[path])
    settings_bounds: dict[str, tuple[int, int] | None] = {}
    for path in by_kind.get("worldgen/noise_settings", []):
        ctx.path = path
        check_worldgen.noise_settings(ctx, docs[path])
        doc = docs[path]
        settings_bounds[kinds[path][1]] = (
            check_worldgen.noise_bounds(doc) if isinstance(doc, dict) else None
        )
    known = [b for b in settings_bounds.values() if b is not None]
    ore_bounds = known[0] if len(known) == 1 else None
    placed_types: dict[str, str | None] = {}
    for path in by_kind.get("worldgen/placed_feature", []):
        ctx.path = path
        doc = docs[path]
        modifiers = check_worldgen.placed_feature(ctx, doc, "", ore_bounds)
        ref = doc.get("feature") if isinstance(doc, dict) else None
        feature_kind = configured_types.get(full(ref)) if isinstance(ref, str) else None
        if isinstance(ref, dict):
            feature_kind = str(ref.get("type", "")).removeprefix("minecraft:") or None
        placed_types[kinds[path][1]] = feature_kind
        if feature_kind in ("ore", "scattered_ore"):
            check_worldgen.check_ore_placement(ctx, modifiers, kinds[path][1])
    for kind, paths in sorted(by_kind.items()):
        for path in sorted(paths):
            ctx.path = path
            _dispatch(ctx, kind, docs[path], placed_types, settings_bounds)
    return ValidationReport(tuple(ctx.issues), len(docs))


def _dispatch(
    ctx: Ctx,
    kind: str,
    doc: Any,
    placed_types: Mapping[str, str | None],
    settings_bounds: Mapping[str, tuple[int, int] | None],
) -> None:
    if kind in (
        "worldgen/configured_feature",
        "worldgen/noise_settings",
        "worldgen/placed_feature",
    ):
        return  # checked above
    if kind == "worldgen/biome":
        check_worldgen.biome(ctx, doc, placed_types)
    elif kind == "worldgen/world_preset":
        check_worldgen.world_preset(ctx, doc, settings_bounds)
    elif kind == "worldgen/noise":
        check_values.noise(ctx, doc, "")
    elif kind == "worldgen/density_function":
        check_values.density(ctx, doc, "")
    elif kind == "recipes":
        check_rules.recipe(ctx, doc)
    elif kind == "loot_tables":
        check_rules.loot_table(ctx, doc)
    elif kind == "advancements":
        check_rules.advancement(ctx, doc)
    elif kind.startswith("tags/"):
        check_rules.tag(ctx, kind.removeprefix("tags/"), doc)
    elif kind == "functions":
        check_rules.function(ctx, doc if isinstance(doc, str) else "")
    elif kind.startswith("worldgen/") and kind.split("/", 1)[1] not in WORLDGEN_KINDS:
        ctx.warn("", f"{kind} is not a 1.19 worldgen registry folder; the game ignores it")
    elif not kind.startswith("worldgen/") and kind not in RULE_KINDS:
        ctx.warn("", f"{kind!r} is not a datapack folder 1.19 reads; the game ignores it")


def validate_zip(data: bytes) -> ValidationReport:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            files = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    except zipfile.BadZipFile as exc:
        return ValidationReport((Issue("(zip)", "", f"not a zip file: {exc}"),), 0)
    return validate_pack(files)


def validate_path(path: Path) -> ValidationReport:
    """A datapack folder or zip on disk."""
    if path.is_dir():
        files = {
            p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*"))
            if p.is_file()
        }
        return validate_pack(files)
    return validate_zip(path.read_bytes())
