"""Loot-table predicates ("conditions") of 1.19, compiled to plain functions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mirrorcraft.rules.errors import DatapackError
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.loot_context import EntityState, LootRuntime
from mirrorcraft.rules.predicates import parse_item_predicate

Condition = Callable[[LootRuntime], bool]


class ConditionCompiler:
    def __init__(self, item_tags: Mapping[str, frozenset[str]], known_items: frozenset[str]):
        self.item_tags = item_tags
        self.known_items = known_items

    def all_of(self, raw: Any, field: str) -> Condition | None:
        """Compile a ``conditions`` list; None when there is nothing to check."""
        if raw is None:
            return None
        if not isinstance(raw, list):
            raise DatapackError("must be a list", field=field)
        conds = [self.one(c, f"{field}[{i}]") for i, c in enumerate(raw)]
        if not conds:
            return None
        if len(conds) == 1:
            return conds[0]
        return lambda rt: all(c(rt) for c in conds)

    def one(self, raw: Any, field: str) -> Condition:
        if not isinstance(raw, dict) or not isinstance(raw.get("condition"), str):
            raise DatapackError("a condition needs a 'condition' id", field=field)
        kind = normalize_id(raw["condition"])
        handler = getattr(self, "_" + kind, None)
        if handler is None:
            raise DatapackError(
                f"loot condition {raw['condition']!r} is not interpreted",
                field=f"{field}.condition",
            )
        result: Condition = handler(raw, field)
        return result

    def _survives_explosion(self, raw: dict[str, Any], field: str) -> Condition:
        def check(rt: LootRuntime) -> bool:
            radius = rt.ctx.explosion_radius
            return radius is None or rt.rng.random() <= 1.0 / radius

        return check

    def _match_tool(self, raw: dict[str, Any], field: str) -> Condition:
        pred = parse_item_predicate(
            raw.get("predicate", {}), f"{field}.predicate", self.item_tags, self.known_items
        )
        return lambda rt: rt.ctx.tool is not None and pred.matches(rt.ctx.tool)

    def _random_chance(self, raw: dict[str, Any], field: str) -> Condition:
        chance = _number(raw, "chance", field)
        return lambda rt: rt.rng.random() < chance

    def _random_chance_with_looting(self, raw: dict[str, Any], field: str) -> Condition:
        chance = _number(raw, "chance", field)
        mult = _number(raw, "looting_multiplier", field)
        return lambda rt: rt.rng.random() < chance + rt.ctx.looting * mult

    def _table_bonus(self, raw: dict[str, Any], field: str) -> Condition:
        ench = normalize_id(raw.get("enchantment", ""))
        chances = raw.get("chances")
        if (
            not isinstance(chances, list)
            or not chances
            or not all(isinstance(c, int | float) and not isinstance(c, bool) for c in chances)
        ):
            raise DatapackError("must be a non-empty list of numbers", field=f"{field}.chances")
        values = [float(c) for c in chances]

        def check(rt: LootRuntime) -> bool:
            level = rt.ctx.enchantment_level(ench)
            return rt.rng.random() < values[min(level, len(values) - 1)]

        return check

    def _inverted(self, raw: dict[str, Any], field: str) -> Condition:
        term = self.one(raw.get("term"), f"{field}.term")
        return lambda rt: not term(rt)

    def _alternative(self, raw: dict[str, Any], field: str) -> Condition:
        terms = raw.get("terms")
        if not isinstance(terms, list) or not terms:
            raise DatapackError("must be a non-empty list", field=f"{field}.terms")
        compiled = [self.one(t, f"{field}.terms[{i}]") for i, t in enumerate(terms)]
        return lambda rt: any(c(rt) for c in compiled)

    def _killed_by_player(self, raw: dict[str, Any], field: str) -> Condition:
        return lambda rt: rt.ctx.killer_is_player

    def _block_state_property(self, raw: dict[str, Any], field: str) -> Condition:
        block = normalize_id(raw["block"]) if isinstance(raw.get("block"), str) else None
        props = raw.get("properties", {})
        if not isinstance(props, dict):
            raise DatapackError("must be an object", field=f"{field}.properties")
        exact: dict[str, str] = {}
        for name, value in props.items():
            if isinstance(value, dict):
                raise DatapackError(
                    "ranged block-state properties are not interpreted", field=f"{field}.properties"
                )
            exact[name] = str(value).lower()

        def check(rt: LootRuntime) -> bool:
            if block is not None and rt.ctx.block != block:
                return False
            return all(rt.ctx.block_properties.get(k) == v for k, v in exact.items())

        return check

    def _location_check(self, raw: dict[str, Any], field: str) -> Condition:
        offset = tuple(int(raw.get(k, 0)) for k in ("offsetX", "offsetY", "offsetZ"))
        pred = raw.get("predicate", {})
        if not isinstance(pred, dict) or set(pred) - {"block"}:
            raise DatapackError(
                "only block predicates are interpreted in location_check",
                field=f"{field}.predicate",
            )
        block_pred = pred.get("block", {})
        if set(block_pred) - {"blocks", "tag", "state"}:
            raise DatapackError(
                "block predicate keys other than blocks/tag/state are not interpreted",
                field=f"{field}.predicate.block",
            )
        blocks = {normalize_id(b) for b in block_pred.get("blocks", [])} or None
        state = {
            k: str(v).lower()
            for k, v in block_pred.get("state", {}).items()
            if not isinstance(v, dict)
        }
        if any(isinstance(v, dict) for v in block_pred.get("state", {}).values()):
            raise DatapackError(
                "ranged state predicates are not interpreted",
                field=f"{field}.predicate.block.state",
            )
        if "tag" in block_pred:
            raise DatapackError(
                "block tags in location_check are not interpreted",
                field=f"{field}.predicate.block.tag",
            )

        def check(rt: LootRuntime) -> bool:
            if rt.ctx.lookup is None:
                return False
            name, props = rt.ctx.lookup(*offset)
            if blocks is not None and name not in blocks:
                return False
            return all(props.get(k) == v for k, v in state.items())

        return check

    def _entity_properties(self, raw: dict[str, Any], field: str) -> Condition:
        target = raw.get("entity", "this")
        if target != "this":
            raise DatapackError(
                f"entity_properties on {target!r} is not interpreted (only 'this')",
                field=f"{field}.entity",
            )
        pred = raw.get("predicate", {})
        if not isinstance(pred, dict):
            raise DatapackError("must be an object", field=f"{field}.predicate")
        unknown = set(pred) - {"flags", "type"}
        if unknown:
            raise DatapackError(
                f"entity predicate keys {sorted(unknown)} are not interpreted",
                field=f"{field}.predicate",
            )
        flags = pred.get("flags", {})
        if not isinstance(flags, dict):
            raise DatapackError("must be an object", field=f"{field}.predicate.flags")
        bad = set(flags) - {"is_on_fire", "is_baby"}
        if bad:
            raise DatapackError(
                f"entity flags {sorted(bad)} are not interpreted", field=f"{field}.predicate.flags"
            )
        etype = normalize_id(pred["type"]) if "type" in pred else None

        def check(rt: LootRuntime) -> bool:
            ent: EntityState | None = rt.ctx.this_entity
            if ent is None:
                return False
            if etype is not None and ent.type != etype:
                return False
            if "is_on_fire" in flags and ent.on_fire != bool(flags["is_on_fire"]):
                return False
            return not ("is_baby" in flags and ent.is_baby != bool(flags["is_baby"]))

        return check


def _number(raw: dict[str, Any], key: str, field: str) -> float:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DatapackError("must be a number", field=f"{field}.{key}")
    return float(value)
