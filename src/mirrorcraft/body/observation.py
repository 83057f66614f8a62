"""The observation: every field the paper's shared observation block lists, typed.

Built from the body, the evaluator's public progress view, the budget and the
latest action result. ``to_json`` is the canonical serialisation (twins are
compared on it); ``render_text`` is a compact text form. Nothing here names a
rule suite, a twin or a rule.
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass, field
from typing import Any

from mirrorcraft.body.actions import skill_specs
from mirrorcraft.body.body import Body
from mirrorcraft.body.paths import dist2
from mirrorcraft.body.results import ActionResult
from mirrorcraft.body.wear import durability_view

SPARES = 16
"""How many nearest blocks of an id the census keeps when it looks one up again."""
NEARBY_KEPT = 4096
"""Nearby-block entries an observation builder keeps for reuse (then it starts afresh)."""


@dataclass(frozen=True)
class MilestoneStatus:
    advancement: str
    title: str
    description: str
    value: int
    done: bool


@dataclass(frozen=True)
class ProgressView:
    """What the agent may know about its progress (the same in Vanilla and Mirror twins)."""

    task: str
    title: str
    milestones: tuple[MilestoneStatus, ...]
    next_milestone: str | None
    score: int
    completed_advancements: tuple[str, ...]


@dataclass(frozen=True)
class Budget:
    total: int
    used: int

    @property
    def remaining(self) -> int:
        return max(self.total - self.used, 0)


@dataclass(frozen=True)
class Nearby:
    id: str
    distance: float
    count: int = 0  # entities and drops: how many are visible; 0 for blocks


@dataclass(frozen=True)
class Observation:
    step: int
    inventory: dict[str, int]
    enchanted_items: list[dict[str, Any]]
    equipped: dict[str, str | None]
    position: tuple[int, int, int]
    biome: str
    health: float
    food: int
    alive: bool
    experience_level: int
    progress: ProgressView
    nearby_blocks: list[Nearby]
    nearby_drops: list[Nearby]
    nearby_entities: list[Nearby]
    facilities: list[Nearby]
    last_result: ActionResult | None
    budget: Budget
    skills: list[str] = field(default_factory=list)
    durability: list[dict[str, Any]] = field(default_factory=list)
    """Every owned copy of a damageable item: {"item", "remaining", "max"[, "enchantments"]}."""

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "inventory": self.inventory,
            "enchanted_items": self.enchanted_items,
            "durability": self.durability,
            "equipped": self.equipped,
            "position": {"x": self.position[0], "y": self.position[1], "z": self.position[2]},
            "biome": self.biome,
            "survival": {"health": self.health, "food": self.food, "alive": self.alive},
            "experience": {"level": self.experience_level},
            "task": {
                "id": self.progress.task,
                "title": self.progress.title,
                "milestones": [
                    {
                        "id": m.advancement,
                        "title": m.title,
                        "description": m.description,
                        "value": m.value,
                        "done": m.done,
                    }
                    for m in self.progress.milestones
                ],
                "next_milestone": self.progress.next_milestone,
                "score": self.progress.score,
            },
            "completed_advancements": list(self.progress.completed_advancements),
            "nearby_blocks": [
                {"block": n.id, "nearest_distance": n.distance} for n in self.nearby_blocks
            ],
            "nearby_drops": [
                {"item": n.id, "count": n.count, "nearest_distance": n.distance}
                for n in self.nearby_drops
            ],
            "nearby_entities": [
                {"type": n.id, "count": n.count, "nearest_distance": n.distance}
                for n in self.nearby_entities
            ],
            "facilities": [
                {"block": n.id, "nearest_distance": n.distance} for n in self.facilities
            ],
            "last_result": None if self.last_result is None else self.last_result.to_json(),
            "budget": {
                "total": self.budget.total,
                "used": self.budget.used,
                "remaining": self.budget.remaining,
            },
            "skills": self.skills,
        }

    def render_text(self) -> str:
        inv = ", ".join(f"{k} x{v}" for k, v in self.inventory.items()) or "(empty)"
        eq = ", ".join(f"{k}={v}" for k, v in self.equipped.items() if v) or "nothing"
        worn = ", ".join(f"{d['item']} {d['remaining']}/{d['max']}" for d in self.durability)
        blocks = ", ".join(f"{n.id} ({n.distance:g})" for n in self.nearby_blocks) or "none"
        drops = (
            ", ".join(f"{n.id} x{n.count} ({n.distance:g})" for n in self.nearby_drops) or "none"
        )
        ents = (
            ", ".join(f"{n.id} x{n.count} ({n.distance:g})" for n in self.nearby_entities) or "none"
        )
        route = "; ".join(
            f"{'[x]' if m.done else '[ ]'} {m.value} {m.title} ({m.advancement})"
            for m in self.progress.milestones
        )
        last = "none yet"
        if self.last_result is not None:
            lr = self.last_result
            last = f"{lr.skill} ok" if lr.ok else f"{lr.skill} failed ({lr.reason})"
            last += f": {lr.message}"
        return "\n".join(
            [
                f"TASK: {self.progress.title}; progress {self.progress.score}/100; next: {self.progress.next_milestone}",
                f"ROUTE: {route}",
                f"BUDGET: {self.budget.used} used, {self.budget.remaining} left of {self.budget.total}",
                f"INVENTORY: {inv}",
                f"EQUIPPED: {eq}",
                f"DURABILITY (uses left): {worn or 'no tools'}",
                f"POSITION: x={self.position[0]} y={self.position[1]} z={self.position[2]}; biome {self.biome}",
                f"SURVIVAL: health {self.health:g}, food {self.food}; experience level {self.experience_level}",
                f"NEARBY_TARGETS: {blocks}",
                f"NEARBY_DROPS: {drops}",
                f"NEARBY_ENTITIES: {ents}",
                f"COMPLETED_ADVANCEMENTS: {', '.join(self.progress.completed_advancements) or 'none'}",
                f"LAST_RESULT: {last}",
            ]
        )


_BY_DISTANCE = operator.attrgetter("distance", "id")
"""How nearby lists are ordered: nearest first, then by id."""


@functools.lru_cache(maxsize=4096)
def _round(d2: int) -> float:
    """A distance as observations show it (squared distances within a radius: few of them)."""
    return round(math.sqrt(d2), 1)


class ObservationBuilder:
    """Builds observations for one body; caches the expensive nearby-block scan per position."""

    def __init__(self, body: Body):
        self.body = body
        cfg = body.config
        self._observable: list[str] = []
        for ref in cfg.observable_blocks:
            for name in sorted(body._expand(ref)) if ref.startswith("#") else [ref]:
                if name not in self._observable and name in body.state.loaded.world.palette.ids:
                    self._observable.append(name)
        self._facilities = [f for f in cfg.facilities if f in body.state.loaded.world.palette.ids]
        self._observable_ids = frozenset(
            body.state.loaded.world.palette.ids[n] for n in self._observable
        )
        self._cache_key: tuple[Any, ...] | None = None
        self._cache: list[Nearby] = []
        self._census_at: tuple[tuple[int, int, int], int] | None = None
        self._piles: dict[tuple[int, int], dict[tuple[int, int, int], dict[str, int]]] = {}
        """Items on the ground: column section (x // 16, z // 16) -> position -> item -> count."""
        self._piles_at = (-1, 0)
        self._found: dict[int, int] = {}
        self._spares: dict[int, list[tuple[int, tuple[int, int, int]]]] = {}
        """Block id -> its nearest blocks (squared distance, position), nearest first, found
        from where the census stands; see ``_nearest_d2``."""
        self._skills = list(skill_specs())
        self._ents_key: tuple[Any, ...] | None = None
        self._ents: list[Nearby] = []
        self._nearby_made: dict[tuple[int, int], Nearby] = {}
        """(block id, squared distance) -> its entry (frozen, so shared between observations)."""

    def nearby_blocks(self) -> list[Nearby]:
        b = self.body
        key = (b.pos, b.state.version)
        if key != self._cache_key:
            names = b.state.loaded.world.palette.names
            found = self._census()
            made = self._nearby_made  # the same (id, distance) is mostly seen again
            out = []
            for pair in found.items():
                near = made.get(pair)
                if near is None:
                    if len(made) > NEARBY_KEPT:
                        made.clear()
                    near = made[pair] = Nearby(names[pair[0]], _round(pair[1]))
                out.append(near)
            out.sort(key=_BY_DISTANCE)
            self._cache_key, self._cache = key, out
        return self._cache

    def _census(self) -> dict[int, int]:
        """Observable block id -> squared distance of its nearest block within the radius.

        Recomputed when the body moved. When it stands where the last census was taken,
        the census is brought up to date from the block changes since then: a block that
        appeared can only bring its id nearer; an id whose nearest block changed is
        looked up again. Both give exactly what a full recomputation gives.
        """
        b = self.body
        state = b.state
        radius = b.config.observe_radius
        last = self._census_at
        behind = state.version - last[1] if last is not None else 0
        if last is None or last[0] != b.pos or behind > len(state.changes):
            found = state.index.nearest_each(
                state.grid, state.placed, self._observable_ids, b.pos, radius
            )
            self._spares = {}
        else:
            found = dict(self._found)
            r2 = int(radius * radius)
            stale: set[int] = set()
            changes = list(state.changes)[len(state.changes) - behind :] if behind else []
            for where, old, new in changes:
                d2 = dist2(where, b.pos)
                if old in self._observable_ids and found.get(old) == d2:
                    stale.add(old)
                if new in self._observable_ids:
                    self._spares.pop(new, None)  # a new block may be nearer than the spares
                    if d2 <= r2 and d2 < found.get(new, r2 + 1):
                        found[new] = d2
            for bid in sorted(stale):
                nearest = self._nearest_d2(bid, radius)
                if nearest is not None:
                    found[bid] = nearest
                else:
                    found.pop(bid, None)
        self._census_at = (b.pos, state.version)
        self._found = found
        return found

    def _nearest_d2(self, bid: int, radius: float) -> int | None:
        """The squared distance of the nearest ``bid`` block within ``radius`` of the census
        position, exactly as a search gives it.

        A search keeps the ``SPARES`` nearest; later lookups from the same position take the
        first of them still in place. That is exact while no ``bid`` block has appeared
        since the search (the census drops the spares when one does): every block not kept
        is at least as far as the farthest kept one. With none left, it searches again.
        """
        state = self.body.state
        spares = self._spares.get(bid)
        if spares:
            grid, my = state.grid, state.min_y
            while spares:
                d2, (x, y, z) = spares[0]
                if grid.item(x, z, y - my) == bid:
                    return d2
                spares.pop(0)
        hits = state.index.nearest(state.grid, state.placed, [bid], self.body.pos, radius, SPARES)
        self._spares[bid] = [(h.d2, h.pos) for h in hits]
        return hits[0].d2 if hits else None

    def _nearby_entities(self) -> list[Nearby]:
        """Living mobs within the radius per type: nearest distance and how many (kept until
        the body moves or a mob dies: mobs never move)."""
        b = self.body
        key = (b.pos, b.state.mobs_changed, len(b.state.mobs))
        if key != self._ents_key:
            r2 = b.config.observe_radius**2
            ents: dict[str, list[int]] = {}
            px, py, pz = b.pos
            for mob in b.state.mobs:
                if mob.alive:
                    mx, my, mz = mob.pos
                    d2 = (mx - px) ** 2 + (my - py) ** 2 + (mz - pz) ** 2
                    if d2 <= r2:
                        ents.setdefault(mob.type, []).append(d2)
            self._ents = sorted(
                (Nearby(t, _round(min(ds)), len(ds)) for t, ds in ents.items()),
                key=_BY_DISTANCE,
            )
            self._ents_key = key
        return list(self._ents)

    def _drop_piles(self) -> dict[tuple[int, int], dict[tuple[int, int, int], dict[str, int]]]:
        """Items on the ground by column section and position (drops pile up where the body
        stood), kept up to date as drops are added; rebuilt when one was picked up. By
        section, so an observation reads the piles near the body, not every pile of the
        episode (a full inventory leaves one on every spot it mines from)."""
        state = self.body.state
        if self._piles_at[0] != state.drops_changed or self._piles_at[1] > len(state.drops):
            self._piles, self._piles_at = {}, (state.drops_changed, 0)
        for d in state.drops[self._piles_at[1] :]:
            x, _y, z = d.pos
            pile = self._piles.setdefault((x >> 4, z >> 4), {}).setdefault(d.pos, {})
            pile[d.item] = pile.get(d.item, 0) + d.count
        self._piles_at = (state.drops_changed, len(state.drops))
        return self._piles

    def build(
        self, progress: ProgressView, budget: Budget, last: ActionResult | None
    ) -> Observation:
        b = self.body
        blocks = self.nearby_blocks()
        facilities = [n for n in blocks if n.id in self._facilities]
        px, py, pz = b.pos
        dr2 = b.config.drop_radius**2
        drops: dict[str, list[int]] = {}
        drop_counts: dict[str, int] = {}
        sections = self._drop_piles()
        reach = math.ceil(b.config.drop_radius)
        for sx in range((px - reach) >> 4, ((px + reach) >> 4) + 1):
            for sz in range((pz - reach) >> 4, ((pz + reach) >> 4) + 1):
                section = sections.get((sx, sz))
                if section is None:
                    continue
                for (x, y, z), pile in section.items():
                    d2 = (x - px) ** 2 + (y - py) ** 2 + (z - pz) ** 2
                    if d2 <= dr2:
                        for item, count in pile.items():
                            drops.setdefault(item, []).append(d2)
                            drop_counts[item] = drop_counts.get(item, 0) + count
        equipped = {"hand": b.hand[0] if b.hand else None}
        for slot in ("head", "chest", "legs", "feet"):
            equipped[slot] = b.armor[slot][0] if slot in b.armor else None
        return Observation(
            step=b.step,
            inventory=b.inventory.totals(),
            enchanted_items=[
                {
                    "item": s.item,
                    "count": s.count,
                    "enchantments": {n: lv for n, lv in s.enchantments},
                }
                for s in b.inventory.enchanted()
            ],
            equipped=equipped,
            position=b.pos,
            biome=b.state.loaded.world.biome,
            health=b.health,
            food=b.food,
            alive=b.alive,
            experience_level=b.level,
            progress=progress,
            nearby_blocks=blocks,
            nearby_drops=sorted(
                (Nearby(item, _round(min(ds)), drop_counts[item]) for item, ds in drops.items()),
                key=_BY_DISTANCE,
            ),
            nearby_entities=self._nearby_entities(),
            facilities=facilities,
            last_result=last,
            budget=budget,
            skills=self._skills,
            durability=durability_view(b.rules.game, b.inventory.counts),
        )
