"""An episode on a real server: the bridge is the body, the server's advancement state is the
evaluator's source of milestones. Same interface and schemas as ``SimEpisode``.

Milestones are read from the server after every action (RCON, or the save's
advancement file), never inferred from the bot's inventory. The hidden encounter
log compares what the server produced with what vanilla rules give for the same
craft grid or cooking input (exact), and flags block and mob drops that vanilla's
loot table for that block or mob can never produce (drop counts are not compared:
the server's random draws cannot be replayed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mirrorcraft.backends.mineflayer.advancements import AdvancementSource, bare_advancement
from mirrorcraft.backends.mineflayer.bridge import BridgeClient
from mirrorcraft.backends.mineflayer.convert import build_observation, build_result
from mirrorcraft.backends.sim import StepOutcome
from mirrorcraft.body.actions import (
    Action,
    ActionError,
    action_signature,
    parse_action,
    skill_specs,
)
from mirrorcraft.body.config import BodyConfig, default_body_config
from mirrorcraft.body.observation import Budget, Observation, ProgressView
from mirrorcraft.body.results import DIED, INVALID_ARGS, ActionResult
from mirrorcraft.evaluator.encounters import Encounter
from mirrorcraft.evaluator.milestones import TaskProgress, tracked_advancements
from mirrorcraft.evaluator.tasks import Task
from mirrorcraft.rules.ruleset import RuleSet

ACT_TIMEOUT_S = 300.0
OBSERVE_TIMEOUT_S = 30.0


@dataclass
class ServerMilestones(TaskProgress):
    task: Task
    completed: dict[str, int] = field(default_factory=dict)
    """advancement id -> 1-based action index at which the server first reported it."""


@dataclass
class ResultEncounters:
    """Encounters judged from results: exact for crafting and cooking, support-only for drops."""

    vanilla: RuleSet
    enabled: bool
    encounters: list[Encounter] = field(default_factory=list)

    def check(self, step: int, action: Action, result: ActionResult) -> None:
        if not self.enabled or not result.ok:
            return
        signature = action_signature(action)
        a = action.args
        if action.skill == "craft_grid":
            out = self.vanilla.craft(a["grid"], a["station"])
            expected = None if out is None else (out.item, out.count)
            got = next(iter(dict(result.details.get("result", {})).items()), None)
            actual = None if got is None else (str(got[0]), int(got[1]))
            if expected != actual:
                rule = f"recipes/{out.recipe}" if out else "recipes/<none>"
                self.encounters.append(Encounter(step, "craft", rule, signature, expected, actual))
        elif action.skill == "smelt":
            recipe = self.vanilla.cooking(a["input"], a["station"])
            processed = int(result.details.get("processed", 0) or 0)
            made = {k: v for k, v in result.produced.items()}
            expected_made = {} if recipe is None else {recipe.result: recipe.count * processed}
            if processed and made != expected_made:
                rule = f"recipes/{recipe.location}" if recipe else "recipes/<none>"
                self.encounters.append(
                    Encounter(
                        step,
                        "cook",
                        rule,
                        signature,
                        sorted(expected_made.items()),
                        sorted(made.items()),
                    )
                )
        elif action.skill == "mine":
            for block in sorted(set(result.details.get("blocks", []))):
                self._drops(
                    step,
                    signature,
                    f"minecraft:blocks/{block}",
                    dict(result.details.get("drops", {})),
                )
        elif action.skill == "attack":
            self._drops(step, signature, f"minecraft:entities/{a['target']}", dict(result.produced))

    def _drops(
        self, step: int, signature: tuple[str, ...], table_id: str, drops: dict[str, int]
    ) -> None:
        table = self.vanilla.loot_tables.get(table_id)
        if table is None or not drops:
            return
        possible = self.vanilla.table_outputs(table)
        unexpected = sorted(i for i in drops if i not in possible)
        if unexpected:
            self.encounters.append(
                Encounter(
                    step,
                    "loot",
                    f"loot_tables/{table_id}",
                    signature,
                    sorted(possible),
                    sorted(drops.items()),
                )
            )


class ServerEvaluator:
    """Milestones and Score from the server's advancements; the agent sees only ``public_view``."""

    def __init__(self, task: Task, source: AdvancementSource, vanilla: RuleSet, *, mirror: bool):
        self.task = task
        self.source = source
        self.milestones = ServerMilestones(task)
        # As the embedded evaluator: minecraft-namespace advancements plus the task's own.
        self.tracked = tracked_advancements(vanilla, task)
        self.done: dict[str, int] = {}
        self.encounters = ResultEncounters(vanilla, enabled=mirror)

    def refresh(self, step: int) -> list[str]:
        pending = [a for a in self.tracked if a not in self.done]
        now = self.source.completed(pending)
        new = sorted(bare_advancement(a) for a in now)
        for adv in new:
            self.done.setdefault(adv, step)
            if any(m.advancement == adv for m in self.task.milestones):
                self.milestones.completed.setdefault(adv, step)
        return new

    def score(self) -> int:
        return self.milestones.score()

    def success(self) -> bool:
        return self.milestones.success()

    def public_view(self) -> ProgressView:
        return self.milestones.view(self.done)


class MineflayerEpisode:
    """A live episode on a server the caller started; ``close`` runs the caller's cleanup."""

    blocking = True
    """Steps wait on the game: the episode loop runs them in a thread."""

    def __init__(
        self,
        bridge: BridgeClient,
        source: AdvancementSource,
        task: Task,
        vanilla: RuleSet,
        *,
        biome: str,
        mirror: bool,
        seed: int = 0,
        config: BodyConfig | None = None,
        health_check: Callable[[], None] | None = None,
        on_close: Callable[[], None] | None = None,
    ):
        self.bridge = bridge
        self.task = task
        self.seed = seed
        self.biome = biome
        self.config = config or default_body_config()
        self.evaluator = ServerEvaluator(task, source, vanilla, mirror=mirror)
        self.used = 0
        self.last: ActionResult | None = None
        self.done = False
        self._health_check = health_check
        self._on_close = on_close
        self.world_fingerprint = ""
        self.world_dir: Path | None = None
        """The running server's world folder (a fresh copy), when the caller sets it."""
        """Identifies the prepared save (jar, datapacks, seed); recorded instead of the embedded world's."""
        self.evaluator.refresh(0)

    def observe(self) -> Observation:
        raw = self.bridge.call("observe", timeout_s=OBSERVE_TIMEOUT_S)
        return build_observation(
            raw,
            step=self.used,
            biome=self.biome,
            facilities=tuple(self.config.facilities),
            progress=self.evaluator.public_view(),
            budget=Budget(self.task.budget, self.used),
            last=self.last,
        )

    def step(self, raw: Any) -> StepOutcome:
        if self.done:
            raise RuntimeError("the episode has ended; start a new one")
        before_score = self.evaluator.score()
        before_done = set(self.evaluator.milestones.completed)
        self.used += 1
        parsed = parse_action(raw)
        if isinstance(parsed, ActionError):
            skill = parsed.skill if parsed.skill in skill_specs() else str(parsed.skill or "")
            result = ActionResult(skill, {}, False, INVALID_ARGS, parsed.message)
        else:
            answer = self.bridge.call(
                "act",
                {"skill": parsed.skill, "args": _jsonable(parsed.args)},
                timeout_s=ACT_TIMEOUT_S,
            )
            result = build_result(answer, parsed.args)
            self.evaluator.encounters.check(self.used, parsed, result)
        if self._health_check is not None:
            self._health_check()
        self.evaluator.refresh(self.used)
        self.last = result
        obs = self.observe()
        score = self.evaluator.score()
        new = tuple(a for a in sorted(self.evaluator.milestones.completed) if a not in before_done)
        # A death is an outcome (termination "death"), never an infrastructure fault.
        terminated = self.evaluator.success() or not obs.alive or result.reason == DIED
        truncated = not terminated and self.used >= self.task.budget
        self.done = terminated or truncated
        return StepOutcome(obs, result, score - before_score, terminated, truncated, score, new)

    def close(self) -> None:
        if self._on_close is not None:
            callback, self._on_close = self._on_close, None
            callback()


def _jsonable(args: Any) -> Any:
    if isinstance(args, dict):
        return {k: _jsonable(v) for k, v in args.items()}
    if isinstance(args, tuple | list):
        return [_jsonable(v) for v in args]
    return args
