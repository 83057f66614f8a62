"""The Body: one agent's embodiment in one episode's world, under one active RuleSet.

It owns the agent's position, inventory, equipment, health and experience, and
offers the skills' shared machinery: keyed random draws, tool choice, digging a
way to a target, rolling loot, and adding items (overflow lands on the ground).
Every consultation of the RuleSet is reported to the event sink.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from typing import Any

from mirrorcraft.body.actions import Action
from mirrorcraft.body.config import BodyConfig
from mirrorcraft.body.events import EventSink, NullSink, RuleApplication
from mirrorcraft.body.inventory import Inventory, Key, delta
from mirrorcraft.body.paths import Approach, Blocked, plan_approach, settle
from mirrorcraft.body.results import ActionResult
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot import LootTable
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.index import Pos
from mirrorcraft.world.state import GroundDrop, WorldState

ARMOR_SLOTS = {"helmet": "head", "chestplate": "chest", "leggings": "legs", "boots": "feet"}

Handler = Callable[["Body", Mapping[str, Any]], ActionResult]


def keyed_random(*parts: object) -> random.Random:
    """A generator seeded from a key, so the same key always draws the same numbers."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


class Body:
    def __init__(
        self,
        state: WorldState,
        rules: RuleSet,
        config: BodyConfig,
        *,
        episode_seed: int,
        events: EventSink | None = None,
        start_inventory: Mapping[str, int] | None = None,
    ):
        self.state = state
        self.rules = rules
        self.config = config
        self.events: EventSink = events or NullSink()
        self.episode_seed = episode_seed
        self.pos: Pos = state.loaded.world.spawn
        self.inventory = Inventory(rules.game.items, config.inventory_slots)
        self.hand: Key | None = None
        self.armor: dict[str, Key] = {}
        runtime = state.loaded.world.spec.runtime
        self.level = runtime.experience_level
        self.xp_points = 0.0
        self.health = 20.0
        self.food = 20
        self.alive = True
        self.step = 0
        self.enchant_count = 0
        self._tools_seen: frozenset[str] = frozenset()
        self._tools_now: frozenset[str] = frozenset()
        self._tools_version = -1
        self._best_cache: dict[str, str | None] = {}
        self.signature: tuple[str, ...] = ()
        self.aliases = {name: self._expand(target) for name, target in config.aliases.items()}
        for item, count in (start_inventory or {}).items():
            self.inventory.add(ItemStack(item, count))

    # -- names ---------------------------------------------------------------------
    def _expand(self, ref: str) -> frozenset[str]:
        if ref.startswith("#"):
            tag = ref[1:].removeprefix("minecraft:")
            return self.rules.block_tags.get(tag, frozenset()) | self.rules.item_tags.get(
                tag, frozenset()
            )
        return frozenset({ref})

    def block_names(self, target: str) -> list[str] | None:
        """Exact block ids a target names (an alias like "log" names several); None if unknown."""
        if target in self.aliases:
            return sorted(b for b in self.aliases[target] if b in self.rules.game.blocks)
        if target in self.rules.game.blocks:
            return [target]
        return None

    def is_item(self, name: str) -> bool:
        return name in self.rules.game.items

    # -- random draws and rules ------------------------------------------------------
    def rng(self, *parts: object) -> random.Random:
        return keyed_random(self.episode_seed, self.step, *parts)

    def _tool_key(self) -> frozenset[str]:
        if self._tools_version != self.inventory.version:
            tools = self.rules.game.tools
            self._tools_now = frozenset(n for (n, _e) in self.inventory.counts if n in tools)
            self._tools_version = self.inventory.version
        return self._tools_now

    def best_tool(self, block: str) -> str | None:
        """The owned tool the body would use on a block: one that harvests it, best tier first."""
        key = self._tool_key()
        if key != self._tools_seen:
            self._tools_seen, self._best_cache = key, {}
        if block not in self._best_cache:
            self._best_cache[block] = self._best_tool(block, key)
        return self._best_cache[block]

    def _best_tool(self, block: str, owned: frozenset[str]) -> str | None:
        tools = self.rules.game.tools
        candidates = [
            t
            for t in owned
            if t in tools and block in self.rules.block_tags.get(f"mineable/{tools[t].kind}", ())
        ]
        harvesting = [t for t in candidates if self.rules.can_harvest(block, t)]
        pool = harvesting or candidates
        if not pool:
            return None
        return max(pool, key=lambda t: (tools[t].tier_level, tools[t].speed, t))

    def can_harvest_now(self, block: str) -> bool:
        tool = self.best_tool(block)
        return self.rules.can_harvest(block, tool)

    def can_clear(self, block: str) -> bool:
        info = self.rules.game.blocks.get(block)
        if info is None or not info.diggable or info.hardness < 0:
            return False
        return self.can_harvest_now(block)

    def tool_stack(self, tool: str | None) -> ItemStack | None:
        if tool is None:
            return None
        keys = sorted(k for k in self.inventory.counts if k[0] == tool)
        if not keys:
            return None
        best = max(keys, key=lambda k: (len(k[1]), k[1]))
        return ItemStack(best[0], 1, best[1])

    def equip_key(self, key: Key) -> None:
        self.hand = key

    def break_block(self, pos: Pos, *, sub: object = 0) -> list[ItemStack]:
        """Break a block with the best owned tool: harvest check, loot roll, block removed."""
        block = self.state.block(pos)
        tool = self.best_tool(block)
        stack = self.tool_stack(tool)
        if stack is not None:
            self.equip_key((stack.item, stack.enchantments))
        harvestable = self.rules.can_harvest(block, tool)
        self.events.rule_applied(
            RuleApplication(
                "harvest",
                self.step,
                self.signature,
                harvestable,
                f"harvest:{block}",
                block=block,
                tool=tool,
            )
        )
        drops: list[ItemStack] = []
        table = self.rules.block_table(block)
        if harvestable and table is not None:
            info = self.rules.game.blocks[block]
            ctx = LootContext(
                tool=stack,
                block=block,
                block_properties=info.default_state,
                this_entity=EntityState("player"),
                lookup=self._lookup_near(pos),
            )
            drops = self._roll(table, ctx, f"block|{pos[0]},{pos[1]},{pos[2]}|{sub}")
        self.state.set_block(pos, "air")
        self._break_unsupported(pos, drops, sub)
        return drops

    def _roll(self, table: LootTable, ctx: LootContext, key: str) -> list[ItemStack]:
        """Roll a loot table with this action's keyed draws and report it to the evaluator."""
        drops = self.rules.roll(table, ctx, self.rng(key))
        self.events.rule_applied(
            RuleApplication(
                "loot",
                self.step,
                self.signature,
                _canon(drops),
                f"loot_tables/{table.location}",
                table=table.location,
                loot_context=ctx,
                rng_parts=(self.episode_seed, self.step, key),
            )
        )
        return drops

    def _lookup_near(self, pos: Pos) -> Callable[[int, int, int], tuple[str, Mapping[str, str]]]:
        """What location_check predicates see around a broken block (default block states)."""
        state, blocks = self.state, self.rules.game.blocks

        def lookup(dx: int, dy: int, dz: int) -> tuple[str, Mapping[str, str]]:
            name = state.block((pos[0] + dx, pos[1] + dy, pos[2] + dz))
            info = blocks.get(name)
            return name, info.default_state if info else {}

        return lookup

    def _break_unsupported(self, pos: Pos, drops: list[ItemStack], sub: object) -> None:
        above = (pos[0], pos[1] + 1, pos[2])
        if self.state.in_bounds(above) and self.state.block(above) in self.config.needs_support:
            drops.extend(self.break_block(above, sub=f"{sub}^"))

    def roll_entity(self, entity: str, mob_id: int, weapon: ItemStack | None) -> list[ItemStack]:
        table = self.rules.entity_table(entity)
        if table is None:
            return []
        looting = weapon.enchantment_level("looting") if weapon else 0
        ctx = LootContext(
            tool=weapon, this_entity=EntityState(entity), killer_is_player=True, looting=looting
        )
        drops = self._roll(table, ctx, f"entity|{mob_id}")
        return drops

    # -- movement --------------------------------------------------------------------
    def approach(self, target: Pos, reach: float | None = None) -> Approach | Blocked:
        return plan_approach(
            self.state,
            self.pos,
            target,
            self.config.reach if reach is None else reach,
            self.can_clear,
            self.config.max_path_digs,
        )

    def walk(self, plan: Approach, sub: str) -> list[ItemStack]:
        """Dig the planned way (collecting what drops) and move to its end."""
        drops: list[ItemStack] = []
        for i, cell in enumerate(plan.digs):
            if self.state.block_id(cell) in self.state.passable_ids:
                continue
            drops.extend(self.break_block(cell, sub=f"{sub}/path{i}"))
        self.pos = settle(self.state, plan.stand)
        return drops

    # -- items -----------------------------------------------------------------------
    def gain(self, stacks: list[ItemStack]) -> dict[str, int]:
        """Add stacks to the inventory; what does not fit is left on the ground here."""
        added: list[ItemStack] = []
        for stack in stacks:
            if stack.count <= 0:
                continue
            n = self.inventory.add(stack)
            if n:
                added.append(ItemStack(stack.item, n, stack.enchantments))
            if n < stack.count:
                self.state.drops.append(
                    GroundDrop(stack.item, stack.count - n, self.pos, stack.enchantments)
                )
        if added:
            self.events.inventory_changed(self.inventory.stacks(), added, self.step)
        out: dict[str, int] = {}
        for s in added:
            out[s.item] = out.get(s.item, 0) + s.count
        return out

    def spend(self, item: str, count: int) -> list[ItemStack]:
        taken = self.inventory.remove(item, count)
        if self.hand and self.hand not in self.inventory.counts:
            self.hand = None
        for slot, key in list(self.armor.items()):
            if key not in self.inventory.counts:
                del self.armor[slot]
        return taken

    def add_experience(self, points: float) -> None:
        self.xp_points += points
        while True:
            need = _points_for_next(self.level)
            if self.xp_points < need:
                break
            self.xp_points -= need
            self.level += 1

    # -- running a skill ---------------------------------------------------------------
    def execute(self, action: Action, handlers: Mapping[str, Handler]) -> ActionResult:
        before = self.inventory.totals()
        self.signature = action_signature(action)
        result = handlers[action.skill](self, action.args)
        after = self.inventory.totals()
        change = delta(before, after)
        if dict(result.inventory_delta) != change:
            result = ActionResult(
                result.skill,
                result.args,
                result.ok,
                result.reason,
                result.message,
                result.produced,
                result.consumed,
                change,
                result.details,
            )
        return result


def _points_for_next(level: int) -> int:
    if level >= 30:
        return 112 + (level - 30) * 9
    if level >= 15:
        return 37 + (level - 15) * 5
    return 7 + level * 2


def _canon(stacks: list[ItemStack]) -> tuple[tuple[str, int, tuple[tuple[str, int], ...]], ...]:
    merged: dict[tuple[str, tuple[tuple[str, int], ...]], int] = {}
    for s in stacks:
        merged[(s.item, s.enchantments)] = merged.get((s.item, s.enchantments), 0) + s.count
    return tuple(sorted((k[0], c, k[1]) for k, c in merged.items()))


def canon_stacks(
    stacks: list[ItemStack],
) -> tuple[tuple[str, int, tuple[tuple[str, int], ...]], ...]:
    return _canon(stacks)


def action_signature(action: Action) -> tuple[str, ...]:
    """The paper's semantic signature: what was acted on, ignoring counts, fuel and places."""
    a = action.args
    if action.skill == "craft_grid":
        grid = a.get("grid") or ()
        return ("craft_grid", str(a.get("station")), repr(grid))
    if action.skill == "smelt":
        return ("smelt", str(a.get("input")), str(a.get("station")))
    if action.skill == "mine":
        return ("mine", str(a.get("block")))
    if action.skill == "attack":
        return ("attack", str(a.get("target")))
    if action.skill == "place":
        return ("place", str(a.get("block")))
    if action.skill == "enchant":
        return ("enchant", str(a.get("item")), str(a.get("option")))
    return (action.skill,)
