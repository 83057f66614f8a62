"""Rule-suite manifests: a small, versioned language of interventions on vanilla rules.

Operators (each names its target explicitly):

``recipe_output``
    Change the output item and/or count of vanilla crafting recipes (``targets``:
    recipe locations, or ``select`` by result tag, ``planks`` or ``#minecraft:planks``).
``cooking_result``
    Make an input item cook into another result (item, count) at given stations;
    replaces the vanilla behaviour for that input or adds one where vanilla has none.
``block_drops``
    ``mode: replace`` (drop exactly these) or ``mode: add`` (vanilla drops plus these)
    for blocks (ids or a ``#tag``). ``{crafted}`` in an item name means the item vanilla
    crafting turns the broken block into (so logs drop their matching planks).
``entity_loot``
    Add drops to an entity's loot table (``mode: add``).

Every change carries the sentence the rule sheet shows for it, in our own words.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirrorcraft.rules.errors import RulesError
from mirrorcraft.safeload import DataError, load_yaml_file

MANIFEST_VERSION = 1
SUITE_ID_PATTERN = r"^[A-Za-z0-9_.-]{1,32}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ItemCount(_Strict):
    item: str
    count: int = Field(1, ge=1, le=64)


class RecipeSelect(_Strict):
    result_tag: str
    type: Literal["crafting_shaped", "crafting_shapeless"] | None = None


class RecipeOutput(_Strict):
    op: Literal["recipe_output"]
    targets: tuple[str, ...] = ()
    select: RecipeSelect | None = None
    item: str | None = None
    count: int | None = Field(None, ge=1, le=64)
    sheet: str = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> RecipeOutput:
        if not self.targets and self.select is None:
            raise ValueError("recipe_output needs targets or select")
        if self.item is None and self.count is None:
            raise ValueError("recipe_output must change the item, the count, or both")
        return self


class CookingResult(_Strict):
    op: Literal["cooking_result"]
    input: str
    stations: tuple[Literal["furnace", "blast_furnace", "smoker"], ...] = Field(min_length=1)
    item: str
    count: int = Field(1, ge=1, le=64)
    sheet: str = Field(min_length=1)


class BlockDrops(_Strict):
    op: Literal["block_drops"]
    targets: tuple[str, ...] = Field(min_length=1)
    mode: Literal["replace", "add"]
    drops: tuple[ItemCount, ...] = Field(min_length=1)
    sheet: str = Field(min_length=1)


class EntityLoot(_Strict):
    op: Literal["entity_loot"]
    target: str
    mode: Literal["add"] = "add"
    drops: tuple[ItemCount, ...] = Field(min_length=1)
    sheet: str = Field(min_length=1)


Change = Annotated[
    RecipeOutput | CookingResult | BlockDrops | EntityLoot, Field(discriminator="op")
]


class Manifest(_Strict):
    schema_version: Literal[1] = 1
    kind: Literal["mirror"] = "mirror"
    id: str = Field(pattern=SUITE_ID_PATTERN)
    name: str
    form: str = ""
    description: str = ""
    selected_tasks: tuple[str, ...] = Field(("iron_armor", "diamond", "enchantment"), min_length=1)
    changes: tuple[Change, ...] = Field(min_length=1, max_length=32)


class ManifestError(RulesError):
    """A manifest is unreadable, invalid, or asks for something the vanilla data does not have
    (a RulesError, so every command that names a rule set reports it in one line)."""


def parse_manifest(raw: object, source: str = "manifest") -> Manifest:
    if not isinstance(raw, dict):
        raise ManifestError(f"{source}: a manifest must be a mapping")
    ops = {"recipe_output", "cooking_result", "block_drops", "entity_loot"}
    changes = raw.get("changes")
    for i, change in enumerate(changes if isinstance(changes, list) else []):
        if isinstance(change, dict) and (
            not isinstance(change.get("op"), str) or change.get("op") not in ops
        ):
            raise ManifestError(
                f"{source}: changes[{i}]: unknown operator {change.get('op')!r} (known: {', '.join(sorted(ops))})"
            )
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ManifestError(f"{source}: field {where!r}: {first['msg']}") from None
    from mirrorcraft.evaluator.tasks import UnknownTaskError, get_task

    for task in manifest.selected_tasks:
        try:
            get_task(task)
        except UnknownTaskError as exc:
            raise ManifestError(f"{source}: field 'selected_tasks': {exc}") from None
    return manifest


def load_manifest_file(path: Path) -> Manifest:
    try:
        raw = load_yaml_file(path)
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror})") from None
    except DataError as exc:
        raise ManifestError(str(exc)) from None
    return parse_manifest(raw, str(path))
