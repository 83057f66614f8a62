"""Compile a suite manifest into a 1.19 datapack (deterministic zip bytes) and a rule sheet.

Every target is checked against the vanilla RuleSet: a recipe, block, entity or
item the vanilla data does not have is a ManifestError naming the change. The
same manifest always yields byte-identical zips (sorted entries, fixed
timestamps and permissions, canonical JSON).
"""

from __future__ import annotations

import copy
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from mirrorcraft.datapack.manifest import (
    BlockDrops,
    CookingResult,
    EntityLoot,
    Manifest,
    ManifestError,
    RecipeOutput,
)
from mirrorcraft.rules.ids import full_id, normalize_id
from mirrorcraft.rules.pack import PackData, pack_from_files, resource_path
from mirrorcraft.rules.recipes import CookingRecipe, ShapedRecipe, ShapelessRecipe
from mirrorcraft.rules.ruleset import STATION_COOKING, RuleSet

PACK_FORMAT = 10
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
EXTENSION_NOTE = (
    'cooking results with a count above 1 use {"item", "count"}, a MirrorCraft extension: '
    "1.19's recipe format only takes an item id string there"
)


@dataclass(frozen=True)
class CompiledSuite:
    manifest: Manifest
    files: dict[str, Any]
    """Pack-relative path -> JSON document (pack.mcmeta included)."""
    sheet: tuple[str, ...]
    changed: dict[int, tuple[tuple[str, str], ...]]
    """Change index -> the (category, location) resources it writes."""
    notes: tuple[str, ...]
    idle: tuple[int, ...] = ()
    """Changes that write every resource exactly as vanilla, or an earlier change, has it."""

    def check_effective(self) -> None:
        """Refuse a suite with a change that changes nothing (``ManifestError``): it would
        check, compile and run as a Mirror suite no different from vanilla there."""
        if not self.idle:
            return
        i = self.idle[0]
        paths = sorted(resource_path(c, loc) for c, loc in self.changed.get(i, ()))
        raise ManifestError(
            f"suite {self.manifest.id}: changes[{i}]: changes nothing: it writes "
            f"{', '.join(paths)} exactly as vanilla (or an earlier change) already has it"
        )

    def file_bytes(self) -> dict[str, bytes]:
        return {
            p: (json.dumps(d, indent=2, sort_keys=True) + "\n").encode()
            for p, d in sorted(self.files.items())
        }

    def zip_bytes(self) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            for path, data in self.file_bytes().items():
                info = zipfile.ZipInfo(path, date_time=ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                info.create_system = 3
                zf.writestr(info, data, compresslevel=9)
        return buf.getvalue()

    def pack(self) -> PackData:
        files = {PurePosixPath(p): b for p, b in self.file_bytes().items()}
        return pack_from_files(files, self.manifest.id)

    def render_prose(self) -> str:
        """The prose rule sheet: the suite's name and one sentence per change."""
        head = f"{self.manifest.id}: {self.manifest.name}"
        return "\n".join([head, *(f"{i}. {line}" for i, line in enumerate(self.sheet, 1))])

    def render_sheet(self, vanilla: RuleSet | None = None) -> str:
        """The disclosed rule sheet: the prose sheet, then the structured overrides.

        ``vanilla`` is the rule set the suite was compiled against (the packaged one
        by default); the structured lines compare the compiled rules with it.
        """
        from mirrorcraft.datapack.overrides import render_overrides, structured_overrides
        from mirrorcraft.rules.ruleset import vanilla_ruleset

        lines = structured_overrides(self, vanilla or vanilla_ruleset())
        return self.render_prose() + "\n" + render_overrides(lines)


class _Compiler:
    def __init__(self, manifest: Manifest, vanilla: RuleSet):
        self.m = manifest
        self.v = vanilla
        self.files: dict[str, Any] = {}
        self.changed: dict[int, list[tuple[str, str]]] = {}
        self.notes: list[str] = []
        self.effective: set[int] = set()
        """Changes that wrote at least one resource unlike what was there before."""

    def fail(self, index: int, message: str) -> ManifestError:
        return ManifestError(f"suite {self.m.id}: changes[{index}]: {message}")

    def id(self, index: int, raw: str) -> str:
        """``normalize_id``, failing with the change's index instead of a bare ValueError."""
        try:
            return normalize_id(raw)
        except ValueError as exc:
            raise self.fail(index, str(exc)) from None

    def item(self, index: int, raw: str) -> str:
        name = self.id(index, raw)
        if name not in self.v.game.items:
            raise self.fail(index, f"unknown item {raw!r}")
        return name

    def write(self, index: int, category: str, location: str, doc: Any) -> None:
        path = resource_path(category, location)
        if path in self.files and self.files[path] != doc:
            raise self.fail(index, f"conflicts with an earlier change that also writes {path}")
        before = (
            self.files[path] if path in self.files else self.v.documents.get((category, location))
        )
        if doc != before:
            self.effective.add(index)
        self.files[path] = doc
        self.changed.setdefault(index, []).append((category, location))

    def doc(self, category: str, location: str) -> Any:
        if (category, location) in {(c, loc) for c, loc in self._written()}:
            return copy.deepcopy(self.files[resource_path(category, location)])
        return copy.deepcopy(self.v.documents[(category, location)])

    def _written(self) -> list[tuple[str, str]]:
        return [pair for pairs in self.changed.values() for pair in pairs]

    # -- operators ---------------------------------------------------------------
    def recipe_output(self, i: int, ch: RecipeOutput) -> None:
        targets: list[str] = []
        for raw in ch.targets:
            loc = full_id(self.id(i, raw))
            recipe = self.v.recipes.get(loc)
            if not isinstance(recipe, ShapedRecipe | ShapelessRecipe):
                raise self.fail(i, f"no vanilla crafting recipe {loc!r}")
            targets.append(loc)
        if ch.select is not None:
            # The tag may be written as block targets are, with a leading '#'.
            tag = self.id(i, ch.select.result_tag.removeprefix("#"))
            if tag not in self.v.item_tags:
                raise self.fail(i, f"unknown item tag {ch.select.result_tag!r}")
            members = self.v.item_tags[tag]
            found = []
            for loc, r in sorted(self.v.recipes.items()):
                if not isinstance(r, ShapedRecipe | ShapelessRecipe) or r.result not in members:
                    continue
                kind = "crafting_shaped" if isinstance(r, ShapedRecipe) else "crafting_shapeless"
                if ch.select.type in (None, kind):
                    found.append(loc)
            if not found:
                raise self.fail(i, f"select matched no vanilla recipe (result tag {tag!r})")
            targets.extend(loc for loc in found if loc not in targets)
        new_item = self.item(i, ch.item) if ch.item else None
        for loc in targets:
            doc = self.doc("recipes", loc)
            result = doc["result"] if isinstance(doc["result"], dict) else {"item": doc["result"]}
            if new_item:
                result["item"] = full_id(new_item)
            if ch.count is not None:
                result["count"] = ch.count
            if result.get("count") == 1:
                result.pop("count")
            doc["result"] = result
            self.write(i, "recipes", loc, doc)

    def cooking_result(self, i: int, ch: CookingResult) -> None:
        source = self.item(i, ch.input)
        result = self.item(i, ch.item)
        for station in ch.stations:
            kind = STATION_COOKING[station]
            existing = [
                (loc, r)
                for loc, r in sorted(self.v.recipes.items())
                if isinstance(r, CookingRecipe) and r.kind == kind and source in r.ingredient
            ]
            new_doc = {
                "type": f"minecraft:{kind}",
                "group": result,
                "ingredient": {"item": full_id(source)},
                "result": full_id(result)
                if ch.count == 1
                else {"item": full_id(result), "count": ch.count},
                "experience": existing[0][1].experience if existing else 0.1,
                "cookingtime": existing[0][1].cooking_time
                if existing
                else (200 if kind == "smelting" else 100),
            }
            if ch.count > 1 and EXTENSION_NOTE not in self.notes:
                self.notes.append(EXTENSION_NOTE)
            if len(existing) == 1 and existing[0][1].ingredient == frozenset({source}):
                self.write(i, "recipes", existing[0][0], new_doc)
                continue
            for loc, recipe in existing:
                doc = self.doc("recipes", loc)
                remaining = sorted(recipe.ingredient - {source})
                doc["ingredient"] = [{"item": full_id(x)} for x in remaining]
                self.write(i, "recipes", loc, doc)
            self.write(i, "recipes", f"mirrorcraft:{result}_from_{kind}_{source}", new_doc)

    def _blocks(self, i: int, targets: tuple[str, ...]) -> list[str]:
        blocks: list[str] = []
        for raw in targets:
            if raw.startswith("#"):
                tag = self.id(i, raw[1:])
                if tag not in self.v.block_tags:
                    raise self.fail(i, f"unknown block tag {raw!r}")
                blocks.extend(sorted(self.v.block_tags[tag]))
            else:
                name = self.id(i, raw)
                if name not in self.v.game.blocks:
                    raise self.fail(i, f"unknown block {raw!r}")
                blocks.append(name)
        return sorted(dict.fromkeys(blocks))

    def _crafted(self, i: int, block: str) -> str:
        out = self.v.craft(((block,),), "inventory")
        if out is None:
            raise self.fail(
                i, f"'{{crafted}}' used for {block}, which vanilla crafting turns into nothing"
            )
        return out.item

    def block_drops(self, i: int, ch: BlockDrops) -> None:
        for block in self._blocks(i, ch.targets):
            info = self.v.game.blocks[block]
            if not info.loot_table or ("loot_tables", info.loot_table) not in self.v.documents:
                raise self.fail(i, f"block {block!r} has no vanilla loot table")
            drops = []
            for d in ch.drops:
                name = self._crafted(i, block) if d.item == "{crafted}" else self.item(i, d.item)
                drops.append((name, d.count))
            pools = [_fixed_pool(name, count) for name, count in drops]
            if ch.mode == "replace":
                doc: dict[str, Any] = {"type": "minecraft:block", "pools": pools}
            else:
                doc = self.doc("loot_tables", info.loot_table)
                doc["pools"] = [*doc.get("pools", []), *pools]
            self.write(i, "loot_tables", info.loot_table, doc)

    def entity_loot(self, i: int, ch: EntityLoot) -> None:
        entity = self.id(i, ch.target)
        loc = f"minecraft:entities/{entity}"
        if ("loot_tables", loc) not in self.v.documents:
            raise self.fail(i, f"no vanilla loot table for entity {ch.target!r}")
        doc = self.doc("loot_tables", loc)
        doc["pools"] = [
            *doc.get("pools", []),
            *(_fixed_pool(self.item(i, d.item), d.count, block=False) for d in ch.drops),
        ]
        self.write(i, "loot_tables", loc, doc)

    def run(self) -> CompiledSuite:
        for i, change in enumerate(self.m.changes):
            if isinstance(change, RecipeOutput):
                self.recipe_output(i, change)
            elif isinstance(change, CookingResult):
                self.cooking_result(i, change)
            elif isinstance(change, BlockDrops):
                self.block_drops(i, change)
            elif isinstance(change, EntityLoot):
                self.entity_loot(i, change)
        description = f"MirrorCraft rule suite {self.m.id}: {self.m.name}"
        self.files["pack.mcmeta"] = {
            "pack": {"pack_format": PACK_FORMAT, "description": description}
        }
        return CompiledSuite(
            self.m,
            dict(sorted(self.files.items())),
            tuple(c.sheet for c in self.m.changes),
            {k: tuple(v) for k, v in self.changed.items()},
            tuple(self.notes),
            tuple(i for i in range(len(self.m.changes)) if i not in self.effective),
        )


def _fixed_pool(item: str, count: int, block: bool = True) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "minecraft:item", "name": full_id(item)}
    if count != 1:
        entry["functions"] = [{"function": "minecraft:set_count", "count": count, "add": False}]
    pool: dict[str, Any] = {"rolls": 1, "bonus_rolls": 0.0, "entries": [entry]}
    if block:
        pool["conditions"] = [{"condition": "minecraft:survives_explosion"}]
    return pool


def compile_manifest(manifest: Manifest, vanilla: RuleSet) -> CompiledSuite:
    return _Compiler(manifest, vanilla).run()
