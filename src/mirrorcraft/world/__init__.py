"""Seeded worlds generated from versioned biome specs, and the per-episode world state."""
