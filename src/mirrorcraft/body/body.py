"""The Body: one agent's embodiment in one episode's world, under one active RuleSet.

It owns the agent's position, inventory, equipment, health and experience, and
offers the skills' shared machinery: keyed random draws, tool choice, digging a
way to a target, rolling loot, and adding items (overflow lands on the ground).
Every consultation of the RuleSet is reported to the event sink.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.body.actions import Action, action_signature
from mirrorcraft.body.blockstate import block_state, is_two_high, partner
from mirrorcraft.body.config import BodyConfig
from mirrorcraft.body.draws import LazyKeyedRandom, canon_stacks, keyed_random
from mirrorcraft.body.events import EventSink, NullSink, RuleApplication
from mirrorcraft.body.inventory import Inventory, Key, delta, stack_of
from mirrorcraft.body.paths import Approach, Blocked, Clearable, plan_approach, settle
from mirrorcraft.body.results import ActionResult
from mirrorcraft.body.wear import Worn, apply_wear, copies, survives, unbreaking_level
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.loot import LootTable
from mirrorcraft.rules.loot_context import EntityState, LootContext
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.index import Pos
from mirrorcraft.world.state import GroundDrop, WorldState

PLAN_DIG_CAP = 1000
"""Ways longer than this are not planned at all (walking one digs at most max_path_digs per call)."""

ARMOR_SLOTS = {"helmet": "head", "chestplate": "chest", "leggings": "legs", "boots": "feet"}

Handler = Callable[["Body", Mapping[str, Any]], ActionResult]


@dataclass(frozen=True)
class Walked:
    """What walking a planned way did: the drops collected, and where it was cut short."""

    drops: list[ItemStack]
    stopped: Blocked | None = None
    """The block the body could no longer dig (its tool broke on the way), or None."""


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
        # The worlds give every effect at level I (the world compiler's ``effect give``).
        self.haste = 1 if "haste" in runtime.effects else 0
        speed = 1 if "speed" in runtime.effects else 0
        self.walk_per_tick = config.timing.walk_speed * (1 + 0.2 * speed) / 20
        self.clock = 0
        """Game ticks since the episode began: what the calls so far took (``timing``)."""
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
        self._clear_cache: dict[str, bool] = {}
        self._clear_tools: frozenset[str] | None = None
        self._clearable_for: frozenset[str] | None = None
        self._clearable_now: Clearable | None = None
        self.signature: tuple[str, ...] = ()
        self.broken: list[str] = []
        """Tools that broke in the current skill call (its result reports them)."""
        self.dug = 0
        """Blocks dug on the way to targets in the current skill call."""
        self.pillared: dict[str, int] = {}
        """Disposable blocks placed under the feet on the ways of the current skill call."""
        self.keep: dict[str, int] = {}
        """Items the current skill call will use once it gets there (a craft's grid, a
        smelt's input): its ways never pillar with them."""
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
        if self._tools_version != self.inventory.kinds:  # the owned item ids changed
            tools = self.rules.game.tools
            self._tools_now = frozenset(n for (n, _e, _d) in self.inventory.counts if n in tools)
            self._tools_version = self.inventory.kinds
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
        ranked = self._ranked_tools(block, owned)
        return ranked[0] if ranked else None

    def _ranked_tools(self, block: str, owned: frozenset[str]) -> list[str]:
        """Owned tools fit for a block, best first: those that harvest it, best tier first."""
        return ranked_tools(self.rules, block, owned)

    def can_harvest_now(self, block: str) -> bool:
        tool = self.best_tool(block)
        return self.rules.can_harvest(block, tool)

    def harvest_refused(self, block: str) -> None:
        """Report that the rules refused ``block`` to the body's best tool for it, so a rule set
        that asks more of a tool than vanilla is logged where it stops an action."""
        self.events.rule_applied(
            RuleApplication(
                "harvest",
                self.step,
                self.signature,
                False,
                f"harvest:{block}",
                block=block,
                tool=self.best_tool(block),
            )
        )

    def can_clear(self, block: str) -> bool:
        """Whether owned tools can dig ``block`` out of the way (cached per set of owned tools)."""
        key = self._tool_key()
        if key != self._clear_tools:
            self._clear_tools, self._clear_cache = key, {}
        known = self._clear_cache.get(block)
        if known is None:
            info = self.rules.game.blocks.get(block)
            known = (
                info is not None
                and info.diggable
                and info.hardness >= 0
                and self.can_harvest_now(block)
            )
            self._clear_cache[block] = known
        return known

    def choose_copy(self, block: str, needed: bool) -> Key | None:
        """The tool copy that breaks ``block``; None: the bare hand.

        The best owned tool that harvests it (as ``best_tool``), its most worn copy first.
        A block the body does not need (one in its way) is never broken with a copy that
        would break on it while another copy, another harvesting tool or the bare hand
        can break it instead.
        """
        tool = self.best_tool(block)
        if tool is None:
            return None
        first = copies(self.inventory, tool)
        tools = self.rules.game.tools
        hardness = self.rules.game.blocks[block].hardness
        if needed or survives(self.rules.game, first[0], tools[tool].mine_wear(hardness)):
            return first[0]
        for name in self._ranked_tools(block, self._tool_key()):
            if not self.rules.can_harvest(block, name) and name != tool:
                continue
            cost = tools[name].mine_wear(hardness)
            for key in copies(self.inventory, name):
                if survives(self.rules.game, key, cost):
                    return key
        if self.rules.can_harvest(block, None):
            return None
        return first[0]

    def equip_key(self, key: Key | None) -> None:
        self.hand = key

    def wear(self, key: Key, amount: int, sub: object) -> Worn:
        """Spend ``amount`` durability of one copy (Unbreaking may save some); it may break."""
        rng = self.rng("wear", sub) if unbreaking_level(key) > 0 else None
        worn = apply_wear(self.inventory, self.rules.game, key, amount, rng)
        if worn.after != key and self.hand == key:
            self.hand = worn.after
        if worn.broke:
            self.broken.append(key[0])
        return worn

    def break_block(self, pos: Pos, *, sub: object = 0, needed: bool = True) -> list[ItemStack]:
        """Break a block with the body's tool for it: harvest check, loot roll, wear, block removed.

        ``needed``: the block is the call's target (not merely in the way), so the best
        tool is used even if this use breaks it.
        """
        block, properties = block_state(self.state, self.rules.game.blocks, pos)
        key = self.choose_copy(block, needed)
        tool = key[0] if key is not None else None
        stack = stack_of(key) if key is not None else None
        if key is not None:
            self.equip_key(key)
        efficiency = stack.enchantment_level("efficiency") if stack is not None else 0
        ticks = self.rules.dig_ticks(block, tool, efficiency, self.haste)
        if ticks > 0:
            self.clock += ticks + self.config.timing.break_delay
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
            ctx = self.rules.block_context(
                block, stack, properties=properties, lookup=self._lookup_near(pos)
            )
            drops = self._roll(table, ctx, f"block|{pos[0]},{pos[1]},{pos[2]}|{sub}")
        info = self.rules.game.blocks[block]
        silk = stack is not None and stack.enchantment_level("silk_touch") > 0
        if harvestable and info.experience[1] > 0 and not silk:
            self.gain_experience(info.experience, "block", pos, sub)
        if key is not None:
            spec = self.rules.game.tools[key[0]]
            self.wear(key, spec.mine_wear(info.hardness), sub)
        self._remove(pos, block, drops, sub)
        return drops

    def _remove(self, pos: Pos, block: str, drops: list[ItemStack], sub: object) -> None:
        """Take a broken block out of the world, with its other half; what it held up falls."""
        info = self.rules.game.blocks.get(block)
        other = partner(self.state, pos, block) if is_two_high(info) else None
        self.state.set_block(pos, "air")
        top = pos
        if other is not None:
            self.state.set_block(other, "air")
            top = other if other[1] > pos[1] else pos
        self._break_unsupported(top, drops, sub)

    def _drop_unsupported(self, pos: Pos, sub: object) -> list[ItemStack]:
        """A block that lost its support pops off: its loot as the game rolls it, no tool, no player."""
        block, properties = block_state(self.state, self.rules.game.blocks, pos)
        table = self.rules.block_table(block)
        drops: list[ItemStack] = []
        if table is not None:
            ctx = LootContext(
                block=block, block_properties=properties, lookup=self._lookup_near(pos)
            )
            drops = self._roll(table, ctx, f"block|{pos[0]},{pos[1]},{pos[2]}|{sub}")
        self._remove(pos, block, drops, sub)
        return drops

    def _roll(self, table: LootTable, ctx: LootContext, key: str) -> list[ItemStack]:
        """Roll a loot table with this action's keyed draws and report it to the evaluator."""
        drops = self.rules.roll(table, ctx, LazyKeyedRandom(self.episode_seed, self.step, key))
        self.events.rule_applied(
            RuleApplication(
                "loot",
                self.step,
                self.signature,
                canon_stacks(drops),
                f"loot_tables/{table.location}",
                table=table.location,
                loot_context=ctx,
                rng_parts=(self.episode_seed, self.step, key),
            )
        )
        return drops

    def _lookup_near(self, pos: Pos) -> Callable[[int, int, int], tuple[str, Mapping[str, str]]]:
        """What location_check predicates see around a broken block (its neighbours' real states)."""
        state, blocks = self.state, self.rules.game.blocks

        def lookup(dx: int, dy: int, dz: int) -> tuple[str, Mapping[str, str]]:
            return block_state(state, blocks, (pos[0] + dx, pos[1] + dy, pos[2] + dz))

        return lookup

    def _break_unsupported(self, pos: Pos, drops: list[ItemStack], sub: object) -> None:
        above = (pos[0], pos[1] + 1, pos[2])
        if self.state.in_bounds(above) and self.state.block(above) in self.config.needs_support:
            drops.extend(self._drop_unsupported(above, f"{sub}^"))

    def roll_entity(
        self, entity: str, mob_id: int, weapon: ItemStack | None, variant: str = ""
    ) -> list[ItemStack]:
        table = self.rules.entity_table(entity, variant)
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
        """The whole way to ``target`` (a call digs at most ``max_path_digs`` of it: see ``walk``)."""
        return plan_approach(
            self.state,
            self.pos,
            target,
            self.config.reach if reach is None else reach,
            self._clearable(),
            PLAN_DIG_CAP,
            self.disposable_count,  # counted only if a way climbs straight up
        )

    def _spare(self, block: str) -> int:
        return self.inventory.total(block) - self.keep.get(block, 0)

    def disposable_count(self) -> int:
        """Owned blocks the body may pillar with (``disposable_blocks`` in body.yaml), less
        those the current call will use (``keep``)."""
        return sum(max(0, self._spare(b)) for b in self.config.disposable_blocks)

    def _pillar(self, cell: Pos) -> None:
        """Place one disposable block (the first spare, in the configured order) at ``cell``."""
        for block in self.config.disposable_blocks:
            if self._spare(block) > 0 and block in self.state.loaded.world.palette.ids:
                self.spend(block, 1)
                self.state.place_block(cell, block)
                self.pillared[block] = self.pillared.get(block, 0) + 1
                self.clock += self.config.timing.pillar_ticks
                return

    def _clearable(self) -> Clearable:
        """``can_clear`` with its answers kept by block id, for the owned tools of now."""
        key = self._tool_key()
        now = self._clearable_now
        if now is None or self._clearable_for != key:
            ids = len(self.state.loaded.world.palette.names)
            # Asks the rules, not the body: a bound method would make body and cache a cycle.
            ask = functools.partial(clear_answer, self.rules, key)
            now = self._clearable_now = Clearable(ask, ids)
            self._clearable_for = key
        return now

    def walk(self, plan: Approach, sub: str) -> Walked:
        """Dig the planned way (collecting what drops) and move to its end.

        Every block on the way wears the tool that breaks it. The body stops where it
        stands when this call has dug ``max_path_digs`` blocks on its ways, or when a
        tool broke and no owned tool can dig the next block.
        """
        drops: list[ItemStack] = []
        broken = len(self.broken)
        state = self.state
        names = state.loaded.world.palette.names
        pillars, placed = plan.pillars, 0
        for i, cell in enumerate(plan.digs):
            while placed < len(pillars) and pillars[placed][0] <= i:
                self._pillar(pillars[placed][1])  # climbed a level: a block under the feet
                placed += 1
            bid = state.block_id(cell)
            if bid in state.passable_ids:
                continue
            name = names[bid]
            stop: Blocked | None = None
            if self.dug >= self.config.max_path_digs:
                stop = Blocked(cell, name, too_far=True)
            elif len(self.broken) > broken and not self.can_clear(name):
                stop = Blocked(cell, name)
            if stop is not None:
                self.move_to(settle(self.state, plan.froms[i]))
                return Walked(drops, stop)
            drops.extend(self.break_block(cell, sub=f"{sub}/path{i}", needed=False))
            self.dug += 1
        for _k, cell in pillars[placed:]:
            self._pillar(cell)
        self.move_to(settle(self.state, plan.stand))
        return Walked(drops)

    def _despawn(self) -> None:
        """Items that lay on the ground ``timing.drop_despawn`` ticks or more are gone, as in
        the game. Drops are kept in the order they fell, so the old ones lead the list."""
        drops = self.state.drops
        limit = self.clock - self.config.timing.drop_despawn
        gone = 0
        while gone < len(drops) and drops[gone].dropped_at <= limit:
            gone += 1
        if gone:
            del drops[:gone]
            self.state.drops_changed += 1

    def move_to(self, pos: Pos) -> None:
        """Go to ``pos``; the clock counts the straight distance at the body's walking speed
        (a way over terrain is a little longer; the blocks dug on it count apart)."""
        x, y, z = self.pos
        gap = math.sqrt((pos[0] - x) ** 2 + (pos[1] - y) ** 2 + (pos[2] - z) ** 2)
        self.clock += math.ceil(gap / self.walk_per_tick)
        self.pos = pos

    # -- items -----------------------------------------------------------------------
    def gain(self, stacks: list[ItemStack]) -> dict[str, int]:
        """Add stacks to the inventory; what does not fit is left on the ground here."""
        added: list[ItemStack] = []
        for stack in stacks:
            if stack.count <= 0:
                continue
            n = self.inventory.add(stack)
            if n:
                added.append(stack.with_count(n))
            if n < stack.count:
                self.state.drops.append(
                    GroundDrop(
                        stack.item, stack.count - n, self.pos, stack.enchantments, self.clock
                    )
                )
        if added:
            self.events.inventory_changed(self.inventory.stacks(), added, self.step)
        out: dict[str, int] = {}
        for s in added:
            out[s.item] = out.get(s.item, 0) + s.count
        return out

    def spend(self, item: str, count: int) -> list[ItemStack]:
        taken = self.inventory.remove(item, count)
        self.drop_missing_equipment()
        return taken

    def drop_missing_equipment(self) -> None:
        """Forget held or worn copies that are no longer in the inventory."""
        if self.hand and self.hand not in self.inventory.counts:
            self.hand = None
        for slot, key in list(self.armor.items()):
            if key not in self.inventory.counts:
                del self.armor[slot]

    def gain_experience(self, span: tuple[int, int], *parts: object) -> None:
        """The experience a broken block or a killed mob gives: a whole number of points drawn
        uniformly from ``span``, with draws of its own (no loot roll moves), picked up at once."""
        low, high = span
        points = low if low == high else self.rng("xp", *parts).randint(low, high)
        if points > 0:
            self.add_experience(points)

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
        self.broken, self.dug, self.pillared, self.keep = [], 0, {}, {}
        start = self.clock
        result = handlers[action.skill](self, action.args)
        after = self.inventory.totals()
        change = delta(before, after)
        broken = list(self.broken)
        pillared = self.pillared
        self._despawn()
        message, details = result.message, dict(result.details)
        details["ticks"] = self.clock - start  # the game time the call took
        if broken:
            # What a player sees: the tool breaking, and it is gone from the hotbar.
            details["tools_broken"] = broken
            message += "; " + ", ".join(f"the {t} broke" for t in broken)
        if pillared:
            # Blocks placed under the feet to climb on the way: in the inventory change,
            # not in ``consumed`` (what the skill itself used: a recipe's inputs).
            details["pillared"] = dict(sorted(pillared.items()))
            n = sum(pillared.values())
            message += f"; placed {n} block{'s' if n > 1 else ''} underfoot to climb"
        return ActionResult(
            result.skill,
            result.args,
            result.ok,
            result.reason,
            message,
            result.produced,
            result.consumed,
            change,
            details,
        )


def _points_for_next(level: int) -> int:
    if level >= 30:
        return 112 + (level - 30) * 9
    if level >= 15:
        return 37 + (level - 15) * 5
    return 7 + level * 2


def ranked_tools(rules: RuleSet, block: str, owned: frozenset[str]) -> list[str]:
    """Owned tools fit for a block, best first: those that harvest it, best tier first."""
    tools = rules.game.tools
    candidates = [t for t in owned if rules.speeds_up(block, t)]
    harvesting = [t for t in candidates if rules.can_harvest(block, t)]
    pool = harvesting or candidates
    return sorted(pool, key=lambda t: (tools[t].tier_level, tools[t].speed, t), reverse=True)


def clear_answer(rules: RuleSet, owned: frozenset[str], block: str) -> bool:
    """``Body.can_clear`` for one set of owned tools, from the rules alone."""
    info = rules.game.blocks.get(block)
    if info is None or not info.diggable or info.hardness < 0:
        return False
    ranked = ranked_tools(rules, block, owned)
    return rules.can_harvest(block, ranked[0] if ranked else None)
