"""Cross-file consistency checks run by the generator before anything is written."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import McData, strip_ns
from .tags import Tags

# JSON keys whose string values are item ids (or "#item_tags") in recipes, loot tables,
# advancements and fuels. Loot-table "name" keys of minecraft:loot_table entries are skipped.
ITEM_KEYS = {"item", "name", "result", "items"}


def _walk(obj: Any, key: str = "") -> Iterator[tuple[str, str, Any]]:
    if isinstance(obj, dict):
        if obj.get("type") == "minecraft:loot_table":
            return
        for k, v in obj.items():
            yield from _walk(v, k)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v, key)
    else:
        yield key, str(obj), obj


def referenced_ids(obj: Any) -> tuple[set[str], set[str]]:
    """(item ids, item tag refs) used by a recipe/loot/advancement JSON object."""
    items: set[str] = set()
    tags: set[str] = set()
    for key, text, _ in _walk(obj):
        if key == "tag":
            tags.add(strip_ns(text))
        elif key in ITEM_KEYS and text.startswith("minecraft:"):
            items.add(strip_ns(text))
    return items, tags


def check_references(data: McData, tags: Tags, files: dict[str, Any]) -> None:
    """Every item id exists and every item tag reference has a tag file."""
    for path, obj in files.items():
        if not path.startswith(
            (
                "data/minecraft/recipes/",
                "data/minecraft/loot_tables/",
                "data/minecraft/advancements/",
            )
        ):
            continue
        items, tag_refs = referenced_ids(obj)
        unknown = sorted(i for i in items if i not in data.items)
        if unknown:
            raise ValueError(f"{path}: unknown items {unknown}")
        missing = sorted(t for t in tag_refs if t not in tags.items)
        if missing:
            raise ValueError(f"{path}: unknown item tags {missing}")
