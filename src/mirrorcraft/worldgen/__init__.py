"""Biome specs -> Minecraft 1.19 worldgen datapacks, and structural validation of datapacks.

``compile_biome_pack(spec)`` builds the pack (deterministic bytes);
``validate_pack(files)`` checks every JSON file against the 1.19 formats as far as
that can be done without the game: required fields, types, ranges, references
that must resolve inside the pack or to whitelisted vanilla ids. Passing it does
not prove that a 1.19 server accepts the pack; ``docs/real_server.md`` says which
checks are structural only.
"""

from mirrorcraft.worldgen.compiler import (
    NAMESPACE,
    PACK_FORMAT,
    WorldgenPack,
    compile_biome_pack,
    deterministic_zip,
    packaged_biome_packs,
)
from mirrorcraft.worldgen.validate import Issue, ValidationReport, validate_pack, validate_zip

__all__ = [
    "NAMESPACE",
    "PACK_FORMAT",
    "Issue",
    "ValidationReport",
    "WorldgenPack",
    "compile_biome_pack",
    "deterministic_zip",
    "packaged_biome_packs",
    "validate_pack",
    "validate_zip",
]
