"""Orchestrates the generation of the vanilla pack and the game facts."""

from __future__ import annotations

import shutil
from pathlib import Path

from .advancements import english_text, write_advancements
from .checks import check_references
from .common import McData, OutputSet, load_facts, src_facts
from .game import write_game
from .loot_blocks import write_block_loot
from .loot_entities import write_entity_loot
from .recipes import write_recipes
from .tags import build_tags, write_tags

PACK_MARKER = "pack.mcmeta"
GAME_MARKER = "blocks.json"


def _reset(folder: Path, marker: str) -> None:
    """Delete a previous output folder; refuse folders that do not look like our output."""
    if folder.exists():
        entries = [p for p in folder.iterdir() if p.name != ".gitkeep"]
        if entries and not (folder / marker).is_file():
            raise SystemExit(f"refusing to delete {folder}: not empty and has no {marker}")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)


def generate() -> tuple[OutputSet, OutputSet]:
    data = McData()
    tags = build_tags(data)
    pack = OutputSet()
    pack_facts = load_facts("pack.yaml")
    pack.add(
        PACK_MARKER,
        {
            "pack": {
                "pack_format": pack_facts["pack_format"],
                "description": pack_facts["description"],
            }
        },
        src_facts("pack.yaml"),
    )
    write_tags(tags, pack)
    write_recipes(data, tags, pack)
    _, drops_like = write_block_loot(data, pack)
    write_entity_loot(pack)
    damageable = {name for name, it in data.items.items() if it.get("maxDurability")}
    advancements = write_advancements(damageable, pack)
    check_references(data, tags, pack.files)
    game = OutputSet()
    write_game(data, tags.items, drops_like, english_text(advancements, data.language()), game)
    return pack, game


def build(pack_dir: Path, game_dir: Path) -> tuple[int, int]:
    pack, game = generate()
    provenance = {
        "pack": dict(sorted(pack.provenance.items())),
        "game": dict(sorted(game.provenance.items())),
    }
    pack.add("PROVENANCE.json", provenance, src_facts("pack.yaml"))
    _reset(pack_dir, PACK_MARKER)
    _reset(game_dir, GAME_MARKER)
    pack.write(pack_dir)
    game.write(game_dir)
    return len(pack.files), len(game.files)
