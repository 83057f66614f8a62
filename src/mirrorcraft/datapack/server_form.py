"""The form of a datapack a stock 1.19 server loads, for cooking results with a count.

A 1.19 cooking recipe takes one item id as its result, so a recipe that cooks one raw
iron into three nuggets (M01) or two ingots (M03) -- MirrorCraft's ``{"item", "count"}``
extension -- does not load on a real server. The server form keeps everything else and
rewrites each such recipe to give a *marker*: an item nothing else in the game produces
(barrier, structure void, ...: creative-only blocks no recipe, loot table or trade
yields). A tick function then swaps every marker a player holds (inventory, crafting
grid, cursor: what ``clear`` reaches) for ``count`` of the real result. Scoping by
marker, not by item, is what keeps legitimate crafts untouched: nuggets crafted from an
ingot are never multiplied, unlike a grant keyed on the ``minecraft.crafted:`` statistic
(which counts crafted and smelted items alike).

One cooked unit becomes one marker, and one marker becomes ``count`` items within the
next server tick, so taking k units out of the furnace gives k x count items: what the
embedded backend gives for the same ``smelt`` from the extension form. The embedded
backend keeps reading the extension form; ``server_form`` is applied only to packs
installed in server saves. The Mineflayer bridge takes furnace output by shift-click
(the markers never sit on the cursor between two clicks) and waits until no marker is
left before it reports what the call produced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

MARKERS = (
    "barrier",
    "structure_void",
    "light",
    "jigsaw",
    "structure_block",
    "command_block",
    "chain_command_block",
    "repeating_command_block",
    "knowledge_book",
    "debug_stick",
)
"""Items no survival player can obtain: none is the result of a vanilla recipe, loot table
or trade, so a marker in a player's inventory can only come from a rewritten recipe."""
NAMESPACE = "mirrorcraft_cooking"
OBJECTIVE = "mc_cooked"
COOKING = (
    "minecraft:smelting",
    "minecraft:blasting",
    "minecraft:smoking",
    "minecraft:campfire_cooking",
)
RECIPE_RE = re.compile(r"data/[^/]+/recipes/.+\.json$")
NOTE = (
    "cooking results with a count are given on the server by the pack's tick function "
    "(each cooked unit comes out as a marker item that is swapped for the result; see "
    "docs/real_server.md)"
)


class ServerFormError(ValueError):
    """The pack cannot be put in the server form (the message says why)."""


@dataclass(frozen=True)
class ServerForm:
    files: dict[str, bytes]
    """Pack-relative path -> bytes, ready to zip."""
    swaps: dict[str, tuple[str, int]]
    """Marker item -> (result item, count) that the tick function gives for each one."""

    @property
    def changed(self) -> bool:
        return bool(self.swaps)


def _bare(item: str) -> str:
    return item.removeprefix("minecraft:")


def _counted_cooking(files: Mapping[str, bytes]) -> dict[str, tuple[str, int]]:
    """Recipe path -> (result item, count) for cooking recipes whose result has a count > 1."""
    out: dict[str, tuple[str, int]] = {}
    for path, data in sorted(files.items()):
        if not RECIPE_RE.match(path):
            continue
        try:
            doc = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue  # the validator reports it
        if not isinstance(doc, dict) or doc.get("type") not in COOKING:
            continue
        result = doc.get("result")
        if isinstance(result, dict) and isinstance(result.get("item"), str):
            count = result.get("count", 1)
            if isinstance(count, int) and not isinstance(count, bool) and count > 1:
                out[path] = (_bare(result["item"]), count)
    return out


def _mentions(files: Mapping[str, bytes], item: str) -> bool:
    pattern = re.compile(rf'"(minecraft:)?{re.escape(item)}"')
    return any(pattern.search(data.decode("utf-8", errors="replace")) for data in files.values())


def _merge_tag(files: dict[str, bytes], path: str, value: str) -> None:
    doc = json.loads(files[path]) if path in files else {"values": []}
    values = list(doc.get("values", []))
    if value not in values:
        values.append(value)
    doc["values"] = values
    files[path] = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


def _function(lines: list[str]) -> bytes:
    head = "# MirrorCraft: cooking results with a count, for a stock 1.19 server; generated."
    return ("\n".join([head, *lines]) + "\n").encode()


def server_form(files: Mapping[str, bytes]) -> ServerForm:
    """The pack as a stock 1.19 server loads it (unchanged when no cooking result has a count)."""
    counted = _counted_cooking(files)
    if not counted:
        return ServerForm(dict(files), {})
    free = [m for m in MARKERS if not _mentions(files, m)]
    wanted = sorted(set(counted.values()))
    if len(wanted) > len(free):
        raise ServerFormError(
            f"the pack has {len(wanted)} different counted cooking results; the server form "
            f"has {len(free)} marker items left for them"
        )
    marker_of = dict(zip(wanted, free, strict=False))
    out = dict(files)
    for path, key in counted.items():
        doc = json.loads(files[path])
        doc["result"] = f"minecraft:{marker_of[key]}"
        out[path] = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    fn = f"data/{NAMESPACE}/functions"
    out[f"{fn}/load.mcfunction"] = _function([f"scoreboard objectives add {OBJECTIVE} dummy"])
    tick: list[str] = []
    for index, ((item, count), marker) in enumerate(sorted(marker_of.items())):
        give = f"{NAMESPACE}:give_{index}"
        tick += [
            f"execute as @a store result score @s {OBJECTIVE} run clear @s minecraft:{marker}",
            f"execute as @a[scores={{{OBJECTIVE}=1..}}] run function {give}",
        ]
        out[f"{fn}/give_{index}.mcfunction"] = _function(
            [
                f"give @s minecraft:{item} {count}",
                f"scoreboard players remove @s {OBJECTIVE} 1",
                f"execute if score @s {OBJECTIVE} matches 1.. run function {give}",
            ]
        )
    out[f"{fn}/tick.mcfunction"] = _function(tick)
    _merge_tag(out, "data/minecraft/tags/functions/load.json", f"{NAMESPACE}:load")
    _merge_tag(out, "data/minecraft/tags/functions/tick.json", f"{NAMESPACE}:tick")
    swaps = {marker: key for key, marker in marker_of.items()}
    return ServerForm(dict(sorted(out.items())), swaps)
