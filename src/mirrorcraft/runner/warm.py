"""Load what a batch of episodes needs once, before worker processes are forked.

Forked workers inherit the parent's memory, so worlds (their grids are shared
copy-on-write, see world/cache.py), block indexes and compiled rule sets loaded here
are not loaded again by every worker. A world or rule set that fails to load is left
to the episode, which reports it as usual.
"""

from __future__ import annotations

from collections.abc import Iterable

from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
from mirrorcraft.world.registry import load_world


def warm(conditions: Iterable[tuple[str, str]]) -> None:
    """Load every (world, rule set) named, each once; errors are the episodes' to report."""
    worlds: set[str] = set()
    rule_sets: set[str] = set()
    for world, rules in conditions:
        worlds.add(world)
        rule_sets.add(rules)
    vanilla_rules()
    for name in sorted(rule_sets):
        try:
            resolve_rules(name)
        except Exception:  # reported by the episodes that use it
            continue
    for world in sorted(worlds):
        try:
            load_world(world)
        except Exception:  # reported by the episodes that use it
            continue
