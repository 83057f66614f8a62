"""The rule-encounter log: every action whose outcome differed from what vanilla would do.

For each rule application the body reports, the same application is replayed
under the vanilla RuleSet (same grid, same input, same random key) and compared.
This works for any RuleSet, including a user's own datapack.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.body.draws import LazyKeyedRandom, canon_stacks
from mirrorcraft.body.events import RuleApplication
from mirrorcraft.rules.ruleset import RuleSet


@dataclass(frozen=True)
class Encounter:
    step: int
    kind: str
    rule: str
    signature: tuple[str, ...]
    vanilla: Any
    actual: Any

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "kind": self.kind,
            "rule": self.rule,
            "signature": list(self.signature),
            "vanilla": _jsonable(self.vanilla),
            "actual": _jsonable(self.actual),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return value


@dataclass
class EncounterLog:
    vanilla: RuleSet
    active: RuleSet
    encounters: list[Encounter] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.enabled = self.vanilla.fingerprint != self.active.fingerprint
        self._same_tables: dict[str, bool] = {}
        self._same_context = self.vanilla.game is self.active.game and dict(
            self.vanilla.item_tags
        ) == dict(self.active.item_tags)

    def same_table(self, location: str) -> bool:
        """Whether the active table at ``location`` rolls exactly as vanilla's would.

        True when both rule sets compiled it from the same document with the same item
        tags and game data, every table it references is the same in turn, and the items
        it may smelt (``furnace_smelt``) smelt alike. Then the same keyed draws give the
        same drops, so replaying it cannot log an encounter and is skipped.
        """
        known = self._same_tables.get(location)
        if known is not None:
            return known
        self._same_tables[location] = False  # a reference cycle is not proven the same
        v, a = self.vanilla, self.active
        key = ("loot_tables", location)
        table = a.loot_tables.get(location)
        same = (
            self._same_context
            and table is not None
            and location in v.loot_tables
            and key in a.documents
            and a.documents.get(key) == v.documents.get(key)
            and all(self.same_table(ref) for ref in table.references)
            and (
                not table.smelts
                or all(a.smelt_result(i) == v.smelt_result(i) for i in table.outputs)
            )
        )
        self._same_tables[location] = same
        return same

    def check(self, app: RuleApplication) -> None:
        if not self.enabled:
            return
        if app.kind == "loot" and self.same_table(app.table):
            return
        expected, vanilla_rule = self._replay(app)
        if expected != app.outcome:
            rule = app.rule if not app.rule.endswith("<none>") else vanilla_rule
            self.encounters.append(
                Encounter(app.step, app.kind, rule, app.signature, expected, app.outcome)
            )

    def _replay(self, app: RuleApplication) -> tuple[Any, str]:
        v = self.vanilla
        if app.kind == "craft":
            assert app.grid is not None
            out = v.craft(app.grid, app.station)
            return (
                None if out is None else (out.item, out.count)
            ), f"recipes/{out.recipe}" if out else app.rule
        if app.kind == "cook":
            recipe = v.cooking(app.item, app.station)
            return (None if recipe is None else (recipe.result, recipe.count)), (
                f"recipes/{recipe.location}" if recipe else app.rule
            )
        if app.kind == "loot":
            table = v.loot_tables.get(app.table)
            if table is None or app.loot_context is None:
                return (), app.rule
            drops = v.roll(table, app.loot_context, LazyKeyedRandom(*app.rng_parts))
            return canon_stacks(drops), app.rule
        if app.kind == "harvest":
            return v.can_harvest(app.block, app.tool), app.rule
        if app.kind == "fuel":
            return v.fuel_ticks(app.item), app.rule
        raise ValueError(f"unknown rule application kind {app.kind!r}")

    def first_per_rule(self) -> list[Encounter]:
        seen: set[str] = set()
        out = []
        for enc in self.encounters:
            if enc.rule not in seen:
                seen.add(enc.rule)
                out.append(enc)
        return out
