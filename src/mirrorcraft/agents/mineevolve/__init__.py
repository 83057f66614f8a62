"""MineEvolve: typed execution feedback turned into curated skills and remedies, with local plan repair."""
