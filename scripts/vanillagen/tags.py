"""Item and block tags: hand-written vanilla lists plus mineable/needs tags from minecraft-data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .common import SRC_MCDATA, McData, OutputSet, load_facts, mc, src_facts, strip_ns

TAGS_FACTS = "tags.yaml"

# Pickaxe tiers by minecraft-data item name; the level decides the needs_*_tool tag.
PICKAXE_LEVELS = {
    "wooden_pickaxe": 0,
    "golden_pickaxe": 0,
    "stone_pickaxe": 1,
    "iron_pickaxe": 2,
    "diamond_pickaxe": 3,
    "netherite_pickaxe": 4,
}
NEEDS_TAG_BY_LEVEL = {1: "needs_stone_tool", 2: "needs_iron_tool", 3: "needs_diamond_tool"}
MINEABLE_KINDS = ("pickaxe", "axe", "shovel", "hoe")


@dataclass
class Tags:
    """Tag values per registry ('items' / 'blocks'), namespaced, vanilla order."""

    items: dict[str, list[str]]
    blocks: dict[str, list[str]]

    def registry(self, kind: str) -> dict[str, list[str]]:
        return self.items if kind == "items" else self.blocks

    def expand(self, kind: str, tag: str) -> list[str]:
        """All ids in a tag (nested tags resolved), in first-seen order."""
        out: list[str] = []
        for value in self.registry(kind)[strip_ns(tag).lstrip("#")]:
            if value.startswith("#"):
                out.extend(v for v in self.expand(kind, value) if v not in out)
            elif value not in out:
                out.append(value)
        return out


def _norm(values: list[str]) -> list[str]:
    return [mc(v) for v in values]


def derived_block_tags(data: McData, missing: dict[str, list[str]]) -> dict[str, list[str]]:
    """mineable/<tool> from the block material (plus ``missing``); needs_<tier>_tool from harvestTools."""
    tags: dict[str, list[str]] = {f"mineable/{k}": [] for k in MINEABLE_KINDS}
    tags.update({name: [] for name in NEEDS_TAG_BY_LEVEL.values()})
    for kind, names in missing.items():
        unknown = [n for n in names if n not in data.blocks]
        if kind not in MINEABLE_KINDS or unknown:
            raise ValueError(f"mineable_missing: bad tool kind {kind!r} or blocks {unknown}")
    for block in data.blocks_list:
        parts = str(block.get("material") or "").split(";")
        for kind in MINEABLE_KINDS:
            if f"mineable/{kind}" in parts or block["name"] in missing.get(kind, ()):
                tags[f"mineable/{kind}"].append(mc(block["name"]))
        tools = [data.item_name(int(t)) for t in (block.get("harvestTools") or {})]
        levels = [PICKAXE_LEVELS[t] for t in tools if t in PICKAXE_LEVELS]
        if levels and min(levels) in NEEDS_TAG_BY_LEVEL:
            tags[NEEDS_TAG_BY_LEVEL[min(levels)]].append(mc(block["name"]))
    return tags


def build_tags(data: McData) -> Tags:
    facts = load_facts(TAGS_FACTS)
    items = {k: _norm(v) for k, v in facts["both"].items()}
    blocks = {k: _norm(v) for k, v in facts["both"].items()}
    items.update({k: _norm(v) for k, v in facts["items"].items()})
    blocks.update({k: _norm(v) for k, v in facts["blocks"].items()})
    blocks.update(derived_block_tags(data, facts.get("mineable_missing") or {}))
    tags = Tags(items=items, blocks=blocks)
    _check(tags, data)
    return tags


def _check(tags: Tags, data: McData) -> None:
    for kind, known in (("items", data.items), ("blocks", data.blocks)):
        for name, values in tags.registry(kind).items():
            for value in values:
                if value.startswith("#"):
                    if strip_ns(value)[1:] not in tags.registry(kind):
                        raise ValueError(f"{kind} tag {name}: unknown tag {value}")
                elif strip_ns(value) not in known:
                    raise ValueError(f"{kind} tag {name}: unknown id {value}")


def write_tags(tags: Tags, out: OutputSet) -> None:
    derived = {*(f"mineable/{k}" for k in MINEABLE_KINDS), *NEEDS_TAG_BY_LEVEL.values()}
    for kind in ("items", "blocks"):
        for name, values in sorted(tags.registry(kind).items()):
            obj: dict[str, Any] = {"replace": False, "values": values}
            source = SRC_MCDATA if kind == "blocks" and name in derived else src_facts(TAGS_FACTS)
            out.add(f"data/minecraft/tags/{kind}/{name}.json", obj, source)
