"""Naming rule sets: ``vanilla``, a suite id (``M04``) or a datapack path; loaded once per process."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from mirrorcraft.datapack.suites import find_suite, load_manifest_file, suite_pack
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset

VANILLA = "vanilla"


class UnknownRuleSetError(RulesError):
    pass


def vanilla_rules() -> RuleSet:
    return vanilla_ruleset()


@lru_cache(maxsize=32)
def resolve_rules(name: str) -> RuleSet:
    """``vanilla``, a packaged suite id, or a path to a datapack (folder/zip) or suite manifest."""
    if name == VANILLA:
        return vanilla_rules()
    suite = find_suite(name)
    if suite is not None:
        return RuleSet.load([suite_pack(suite)], name=suite.id)
    path = Path(name)
    if path.exists():
        if path.suffix in (".yaml", ".yml") or path.name.endswith(".manifest.json"):
            manifest = load_manifest_file(path)
            return RuleSet.load([suite_pack(manifest)], name=manifest.id)
        return RuleSet.load([path], name=path.stem)
    raise UnknownRuleSetError(
        f"unknown rule set {name!r}: not 'vanilla', a suite id (M01-M06) or an existing path"
    )
