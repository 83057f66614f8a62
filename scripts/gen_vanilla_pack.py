"""Regenerate the vanilla Minecraft Java 1.19 data pack and game facts shipped with mirrorcraft.

Reads minecraft-data 3.20.0 (``minecraft_data("1.19")``: crafting recipes, blocks, items,
enchantments) and the hand-written vanilla facts in ``scripts/vanilla_facts/``; writes

* the data pack (pack_format 10) to ``src/mirrorcraft/data/packs/vanilla/`` (``--out``), with
  ``PROVENANCE.json`` naming the source of every generated file, and
* hard-coded game facts (blocks, items, tools, fuels, enchanting) to
  ``src/mirrorcraft/data/game/`` (``--game-out``).

Both folders are deleted and rewritten. Output is deterministic (sorted keys, sorted files).

Usage: .venv/bin/python scripts/gen_vanilla_pack.py [--out DIR] [--game-out DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vanillagen.build import build

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PACK = REPO / "src" / "mirrorcraft" / "data" / "packs" / "vanilla"
DEFAULT_GAME = REPO / "src" / "mirrorcraft" / "data" / "game"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_PACK, help="data pack folder")
    parser.add_argument("--game-out", type=Path, default=DEFAULT_GAME, help="game facts folder")
    args = parser.parse_args(argv)
    n_pack, n_game = build(args.out, args.game_out)
    print(f"wrote {n_pack} files to {args.out} and {n_game} files to {args.game_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
