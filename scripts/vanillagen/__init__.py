"""Generator for the vanilla Minecraft Java 1.19 data pack (see scripts/gen_vanilla_pack.py)."""
