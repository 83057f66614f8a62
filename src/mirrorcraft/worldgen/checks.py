"""The validation context shared by the per-format checkers: issues, the pack's resources,
the vanilla ids a reference may resolve to, and small typed accessors."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from mirrorcraft.worldgen import vanilla_ids

_LOCATION_RE = re.compile(r"^(?:[a-z0-9_.-]+:)?[a-z0-9_./-]+$")


@dataclass(frozen=True)
class Issue:
    path: str
    """The pack file, e.g. ``data/mirrorcraft/worldgen/biome/plains.json``."""
    field: str
    """Where in the document, e.g. ``features[6][2]`` (empty for the whole file)."""
    message: str
    severity: str = "error"  # error | warning

    def __str__(self) -> str:
        where = f"{self.path}: {self.field}" if self.field else self.path
        return f"{self.severity}: {where}: {self.message}"


@dataclass(frozen=True)
class Vanilla:
    """Ids a pack may use without defining them."""

    blocks: Mapping[str, frozenset[str]]
    """block id (bare) -> its state property names."""
    items: frozenset[str]
    block_tags: frozenset[str]
    item_tags: frozenset[str]
    entity_types: frozenset[str]
    loot_tables: frozenset[str]
    recipes: frozenset[str]


@lru_cache(maxsize=1)
def vanilla() -> Vanilla:
    from mirrorcraft.rules.ruleset import vanilla_ruleset

    rules = vanilla_ruleset()
    blocks = {name: frozenset(info.default_state) for name, info in rules.game.blocks.items()}
    entities = {
        "minecraft:" + loc.split("/", 1)[1].split("/")[0]
        for loc in rules.loot_tables
        if loc.startswith("minecraft:entities/")
    }
    return Vanilla(
        blocks=blocks,
        items=frozenset(rules.game.items),
        block_tags=frozenset(f"minecraft:{t}" if ":" not in t else t for t in rules.block_tags)
        | vanilla_ids.BLOCK_TAGS,
        item_tags=frozenset(f"minecraft:{t}" if ":" not in t else t for t in rules.item_tags),
        entity_types=frozenset(entities) | vanilla_ids.ENTITY_TYPES,
        loot_tables=frozenset(rules.loot_tables),
        recipes=frozenset(loc for loc in rules.recipes),
    )


def full(location: str) -> str:
    return location if ":" in location else f"minecraft:{location}"


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_num(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


@dataclass
class Ctx:
    """One validation run: the pack's resources by kind and the issues found so far."""

    resources: dict[str, set[str]]
    """kind (e.g. ``worldgen/placed_feature``, ``functions``) -> locations defined in the pack."""
    vanilla: Vanilla
    issues: list[Issue] = field(default_factory=list)
    path: str = ""

    # -- reporting ----------------------------------------------------------------
    def error(self, where: str, message: str) -> None:
        self.issues.append(Issue(self.path, where, message))

    def warn(self, where: str, message: str) -> None:
        self.issues.append(Issue(self.path, where, message, "warning"))

    def defines(self, kind: str, location: str) -> bool:
        return full(location) in self.resources.get(kind, set())

    # -- typed accessors (report and return None when the value is wrong) ----------------
    def obj(self, doc: Any, where: str) -> dict[str, Any] | None:
        if not isinstance(doc, dict):
            self.error(where or "(document)", f"must be an object, got {type_name(doc)}")
            return None
        return doc

    def req(self, doc: Mapping[str, Any], key: str, where: str, kind: str) -> Any:
        """A required field of a JSON type (object, array, string, number, int, boolean)."""
        at = f"{where}.{key}" if where else key
        if key not in doc:
            self.error(at, "required field is missing")
            return None
        return self._typed(doc[key], at, kind)

    def opt(self, doc: Mapping[str, Any], key: str, where: str, kind: str) -> Any:
        at = f"{where}.{key}" if where else key
        if key not in doc:
            return None
        return self._typed(doc[key], at, kind)

    def _typed(self, value: Any, at: str, kind: str) -> Any:
        ok = {
            "object": isinstance(value, dict),
            "array": isinstance(value, list),
            "string": isinstance(value, str),
            "number": is_num(value),
            "int": is_int(value),
            "boolean": isinstance(value, bool),
        }[kind]
        if not ok:
            self.error(
                at, f"must be {'an' if kind[0] in 'aoi' else 'a'} {kind}, got {type_name(value)}"
            )
            return None
        return value

    def int_in(
        self, doc: Mapping[str, Any], key: str, where: str, lo: int, hi: int, required: bool = True
    ) -> int | None:
        value = (self.req if required else self.opt)(doc, key, where, "int")
        if value is not None and not lo <= value <= hi:
            self.error(
                f"{where}.{key}" if where else key, f"must be between {lo} and {hi}, got {value}"
            )
            return None
        return value  # type: ignore[no-any-return]

    def num_in(
        self,
        doc: Mapping[str, Any],
        key: str,
        where: str,
        lo: float,
        hi: float,
        required: bool = True,
    ) -> float | None:
        value = (self.req if required else self.opt)(doc, key, where, "number")
        if value is not None and not lo <= value <= hi:
            self.error(
                f"{where}.{key}" if where else key, f"must be between {lo} and {hi}, got {value}"
            )
            return None
        return value  # type: ignore[no-any-return]

    def enum(
        self,
        doc: Mapping[str, Any],
        key: str,
        where: str,
        choices: Iterable[str],
        required: bool = True,
    ) -> str | None:
        value = (self.req if required else self.opt)(doc, key, where, "string")
        options = tuple(choices)
        if value is not None and value not in options:
            self.error(
                f"{where}.{key}" if where else key,
                f"must be one of {', '.join(options)}, got {value!r}",
            )
            return None
        return value  # type: ignore[no-any-return]

    # -- references ----------------------------------------------------------------------
    def location(self, value: Any, where: str) -> str | None:
        if not isinstance(value, str) or not _LOCATION_RE.match(value):
            self.error(where, f"is not a resource location: {value!r}")
            return None
        return full(value)

    def ref(self, value: Any, where: str, kind: str, known: Iterable[str] = ()) -> str | None:
        """A reference that must resolve to a ``kind`` resource of the pack or a known vanilla id."""
        loc = self.location(value, where)
        if loc is None:
            return None
        if self.defines(kind, loc) or loc in set(known):
            return loc
        label = kind.split("/")[-1].replace("_", " ")
        self.error(where, f"{label} {loc!r} is neither in this pack nor a known vanilla id")
        return None

    def block(self, value: Any, where: str) -> str | None:
        loc = self.location(value, where)
        if loc is None:
            return None
        if (
            not loc.startswith("minecraft:")
            or loc.removeprefix("minecraft:") not in self.vanilla.blocks
        ):
            self.error(where, f"unknown block {value!r}")
            return None
        return loc

    def item(self, value: Any, where: str) -> str | None:
        loc = self.location(value, where)
        if loc is None:
            return None
        if (
            not loc.startswith("minecraft:")
            or loc.removeprefix("minecraft:") not in self.vanilla.items
        ):
            self.error(where, f"unknown item {value!r}")
            return None
        return loc

    def block_tag(self, value: Any, where: str) -> None:
        text = value[1:] if isinstance(value, str) and value.startswith("#") else value
        loc = self.location(text, where)
        if loc is not None and not (
            self.defines("tags/blocks", loc) or loc in self.vanilla.block_tags
        ):
            self.error(where, f"unknown block tag {loc!r}")

    def item_tag(self, value: Any, where: str) -> None:
        text = value[1:] if isinstance(value, str) and value.startswith("#") else value
        loc = self.location(text, where)
        if loc is not None and not (
            self.defines("tags/items", loc) or loc in self.vanilla.item_tags
        ):
            self.error(where, f"unknown item tag {loc!r}")

    def block_state(self, doc: Any, where: str) -> None:
        d = self.obj(doc, where)
        if d is None:
            return
        name = self.req(d, "Name", where, "string")
        block = self.block(name, f"{where}.Name") if name is not None else None
        props = self.opt(d, "Properties", where, "object")
        if props is None or block is None:
            return
        allowed = self.vanilla.blocks.get(block.removeprefix("minecraft:"), frozenset())
        for key, value in props.items():
            if key not in allowed:
                shown = ", ".join(sorted(allowed)) or "none"
                self.error(
                    f"{where}.Properties.{key}",
                    f"{block} has no property {key!r} (it has: {shown})",
                )
            elif not isinstance(value, str):
                self.error(f"{where}.Properties.{key}", f"must be a string, got {type_name(value)}")
