"""Reference agents that need no model: oracle, vanilla planner, adaptive planner, random.

- ``oracle``: plans with the active rules (it is *given the rules*; a control, not a
  benchmark condition).
- ``vanilla-planner``: plans with vanilla rules from its current inventory and
  surroundings, and never revises what it believes the rules are.
- ``adaptive-planner``: starts from vanilla beliefs, records what each craft, smelt,
  mine and fight actually produced, replans with that, and probes an unexpected
  output (smelting it at the stations it has, crafting it alone) when the item it
  expected is still missing.
- ``random``: uniformly random well-formed actions.
"""

from __future__ import annotations

import math
import random
from typing import Any

from mirrorcraft.agents.base import Decision, EpisodeContext
from mirrorcraft.agents.knowledge import Belief, build_belief
from mirrorcraft.agents.plan_types import Memory, PlanStep, action_key, goal_of, inventory_key
from mirrorcraft.agents.planner import Planner
from mirrorcraft.body.actions import skill_specs
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.rules.ruleset import RuleSet

FURNACES = ("furnace", "blast_furnace", "smoker")


class PlannerAgent:
    """Shared loop of the planning agents: remember failures, plan, act."""

    cross_episode_memory = False
    learns = False

    def __init__(self, name: str, rules: RuleSet):
        self.name = name
        self.rules = rules
        self.belief: Belief = build_belief(rules)
        self.memory = Memory()
        self.goal: tuple[str, tuple[str, ...]] = ("items", ())
        self.pending: PlanStep | None = None
        self.last_inv: dict[str, int] = {}

    def start(self, ctx: EpisodeContext) -> None:
        self.belief = build_belief(self.rules)
        self.memory = Memory()
        self.goal = goal_of(self.rules, get_task(ctx.task).final.advancement)
        self.pending = None
        self.last_inv = {}

    def _learn(self, obs: Observation) -> None:
        """Note failures and cooldowns; subclasses also revise beliefs."""
        last = obs.last_result
        if last is None or self.pending is None:
            return
        if not last.ok:
            if last.skill == "explore" and last.reason == "not_found":
                # Exploring again searches new regions, so it is not a repeat of the same failure.
                target = str(self.pending.action["args"].get("target"))
                cooldown = self.belief.config.explore_cooldown
                self.memory.explore_cooldown[target] = self.memory.step + cooldown
                if last.details.get("all_regions_visited") and target not in self.memory.seen:
                    # A sweep of every region ended without it, and it was never in view.
                    self.memory.absent.add(target)
            else:
                key = (action_key(self.pending.action), inventory_key(self.last_inv))
                self.memory.failures.add(key)

    async def act(self, obs: Observation) -> Decision | None:
        self.memory.step = obs.step
        self._learn(obs)
        step = self.next_step(obs)
        self.pending = step
        self.last_inv = dict(obs.inventory)
        if step is None:
            return None
        return Decision(step.action, step.thought)

    def next_step(self, obs: Observation) -> PlanStep | None:
        return Planner(self.belief, self.memory).decide(obs, self.goal)

    def finish(self, obs: Observation) -> None:
        return None


class OracleAgent(PlannerAgent):
    """Given the active rules (labelled as such wherever it is reported)."""

    def __init__(self, active: RuleSet):
        super().__init__("oracle", active)


class VanillaPlannerAgent(PlannerAgent):
    def __init__(self, vanilla: RuleSet):
        super().__init__("vanilla-planner", vanilla)


class AdaptivePlannerAgent(PlannerAgent):
    learns = True
    max_probes_per_item = 4

    def __init__(self, vanilla: RuleSet):
        super().__init__("adaptive-planner", vanilla)
        self.probes: list[dict[str, Any]] = []
        self.probed: set[str] = set()
        self.wanted: dict[str, str] = {}

    def start(self, ctx: EpisodeContext) -> None:
        super().start(ctx)
        self.probes, self.probed, self.wanted = [], set(), {}

    def _learn(self, obs: Observation) -> None:
        super()._learn(obs)
        last, step = obs.last_result, self.pending
        if last is None or step is None:
            return
        produced = {k: v for k, v in last.produced.items() if v > 0}
        if (
            step.expects
            and step.expects[0] == "craft"
            and last.skill == "craft_grid"
            and last.reason in ("", "no_result")
        ):
            key = str(step.expects[1])
            outputs = tuple(sorted(produced.items()))
            option = self.belief.craft(key)
            if option is not None and outputs != option.outputs:
                self.belief.set_craft(key, outputs)
                self._surprised(option.outputs, outputs)
        elif (
            step.expects
            and step.expects[0] == "smelt"
            and last.skill == "smelt"
            and last.reason in ("", "no_result")
        ):
            item, station = step.expects[1]
            done = int(last.details.get("processed", 0)) or 1
            outputs = tuple(sorted((k, max(1, round(v / done))) for k, v in produced.items()))
            old = self.belief.smelts.get((item, station))
            if old is None or old.outputs != outputs:
                self.belief.set_smelt(item, station, outputs)
        elif last.skill == "mine" and last.ok:
            blocks = list(last.details.get("blocks", []))
            if blocks and len(set(blocks)) == 1:
                drops = dict(last.details.get("drops", {}))
                yields = {k: v / len(blocks) for k, v in drops.items()}
                src = self.belief.blocks.get(blocks[0])
                if src is None or _differs(dict(src.drops), yields):
                    self.belief.set_source("block", blocks[0], yields)
        elif last.skill == "attack" and last.ok:
            killed = int(last.details.get("killed", 0))
            target = str(step.action["args"].get("target"))
            if killed:
                yields = {k: v / killed for k, v in produced.items()}
                src = self.belief.mobs.get(target)
                if src is None or _differs(dict(src.drops), yields, tolerance=1.5):
                    merged = dict(src.drops) if src else {}
                    merged.update({k: v for k, v in yields.items() if k not in merged})
                    self.belief.set_source("mob", target, merged)

    def _surprised(
        self, expected: tuple[tuple[str, int], ...], got: tuple[tuple[str, int], ...]
    ) -> None:
        """Queue probes on an unexpected crafting output, hoping to turn it into what was expected."""
        want = [i for i, _n in expected if i not in dict(got)]
        for item, _n in got:
            if item in dict(expected) or not want:
                continue
            self.wanted[item] = want[0]
            if item in self.probed:
                continue
            self.probed.add(item)
            for station in FURNACES:
                self.probes.append(
                    {"skill": "smelt", "args": {"input": item, "station": station, "count": 1}}
                )
            self.probes.append(
                {
                    "skill": "craft_grid",
                    "args": {"station": "inventory", "grid": [[item, None], [None, None]]},
                }
            )

    def next_step(self, obs: Observation) -> PlanStep | None:
        # Test surprising outputs only when the plan is stuck without them.
        planned = super().next_step(obs)
        if planned is not None:
            return planned
        while self.probes:
            probe = self.probes.pop(0)
            source = str(probe["args"].get("input") or probe["args"]["grid"][0][0])
            wanted = self.wanted.get(source)
            if obs.inventory.get(source, 0) <= 0 or (wanted and obs.inventory.get(wanted, 0) > 0):
                continue
            station = str(probe["args"].get("station", "inventory"))
            if probe["skill"] == "smelt" and station not in {f.id for f in obs.facilities}:
                if obs.inventory.get(station, 0) > 0:
                    self.probes.insert(0, probe)
                    return PlanStep(
                        {"skill": "place", "args": {"block": station}},
                        f"place a {station} to test {source}",
                    )
                # Get the station first if the current beliefs say how; otherwise skip this test.
                step = Planner(self.belief, self.memory).decide(obs, ("items", (station,)))
                if step is not None:
                    self.probes.insert(0, probe)
                    return PlanStep(
                        step.action,
                        f"{step.thought} (to test {source} in a {station})",
                        step.expects,
                    )
                continue
            expects = ("smelt", (source, station)) if probe["skill"] == "smelt" else None
            return PlanStep(probe, f"test what {source} turns into", expects)
        return None


def _differs(a: dict[str, float], b: dict[str, float], tolerance: float = 0.75) -> bool:
    keys = set(a) | set(b)
    return any(
        (a.get(k, 0.0) == 0.0) != (b.get(k, 0.0) == 0.0)
        or abs(a.get(k, 0) - b.get(k, 0)) > tolerance
        for k in keys
    )


class RandomAgent:
    """Uniformly random well-formed actions (a floor, not a strategy)."""

    name = "random"
    cross_episode_memory = False

    def __init__(self, vanilla: RuleSet):
        self.items = sorted(vanilla.game.items)
        self.blocks = sorted(vanilla.game.blocks)
        self.rng = random.Random(0)

    def start(self, ctx: EpisodeContext) -> None:
        self.rng = random.Random(ctx.seed)

    async def act(self, obs: Observation) -> Decision | None:
        r = self.rng
        owned = sorted(obs.inventory) or ["oak_log"]
        seen = [n.id for n in obs.nearby_blocks] or self.blocks
        skill = r.choice(sorted(skill_specs()))
        args: dict[str, Any] = {}
        for spec in skill_specs()[skill].args:
            if spec.type == "int":
                args[spec.name] = r.randint(spec.min or 0, spec.max or 1)
            elif spec.type == "enum":
                args[spec.name] = r.choice(spec.choices)
            elif spec.type == "grid":
                size = 2 if args.get("station") == "inventory" else 3
                args[spec.name] = [
                    [r.choice([None, *owned]) for _ in range(size)] for _ in range(size)
                ]
            elif spec.name in ("block", "target"):
                args[spec.name] = r.choice(seen)
            else:
                args[spec.name] = r.choice(owned)
        if "count" in args and skill == "craft_grid":
            args["count"] = 1
        return Decision({"skill": skill, "args": args}, "random")

    def finish(self, obs: Observation) -> None:
        return None


def make_reference_agent(name: str, active: RuleSet, vanilla: RuleSet) -> Any:
    if name == "oracle":
        return OracleAgent(active)
    if name == "vanilla-planner":
        return VanillaPlannerAgent(vanilla)
    if name == "adaptive-planner":
        return AdaptivePlannerAgent(vanilla)
    if name == "random":
        return RandomAgent(vanilla)
    raise KeyError(name)


REFERENCE_AGENTS = ("oracle", "vanilla-planner", "adaptive-planner", "random")
_ = math
