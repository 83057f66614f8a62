"""A Gymnasium-shaped API: ``make("plains-1@M04/diamond")``, ``reset(seed=...)``, ``step(action)``.

Environment ids are ``<world>[@<rules>]/<task>``: a world id (``plains-1``), an
optional rule set (``vanilla`` when omitted, a suite id such as ``M04``, or a
datapack path) and a task (``iron_armor``, ``diamond``, ``enchantment``, or a
tech-tree task such as ``obtain_iron_pickaxe``; only the progression tasks are registered).
Observations are ``Observation`` objects (``.to_json()``, ``.render_text()``);
the reward is the increase in task Score. ``info`` holds the score, success flag,
new milestones and the action result; it never names the rule set.
"""

from __future__ import annotations

import operator
import pickle
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.backends.rulesets import VANILLA, current_rules, vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.config import BodyConfig, default_body_config
from mirrorcraft.body.inventory import Inventory
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.tasks import budget_problem, get_task, progression_tasks
from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.rules.items import ItemStack
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.registry import STUDIES, load_world, world_ids


class EnvIdError(ValueError):
    pass


MAX_START_COUNT = 64 * 36
"""The most of one item a starting inventory may name (36 slots of 64)."""


class StartInventoryError(ValueError):
    """A starting inventory the body cannot start with; ``problem`` says why."""

    def __init__(self, problem: str):
        super().__init__(f"start_inventory: {problem}")
        self.problem = problem


def checked_inventory(inventory: object, rules: RuleSet, slots: int) -> dict[str, int]:
    """A debugging start inventory as the body will hold it: ids without the ``minecraft:``
    namespace, every item known to ``rules``, counts whole and positive, all fitting in
    ``slots``. Raises StartInventoryError rather than start with less, or other, items."""
    if not isinstance(inventory, Mapping):
        raise StartInventoryError(f"must map item ids to counts, got {type(inventory).__name__}")
    out: dict[str, int] = {}
    for raw, count in inventory.items():
        try:
            item = normalize_id(raw)
        except ValueError as exc:
            raise StartInventoryError(str(exc)) from None
        if item not in rules.game.items:
            raise StartInventoryError(f"unknown item {raw!r}")
        if item in out:
            raise StartInventoryError(f"{item!r} is named twice")
        if isinstance(count, bool) or not isinstance(count, int):
            raise StartInventoryError(f"count for {raw!r} must be a whole number, got {count!r}")
        if not 0 < count <= MAX_START_COUNT:
            raise StartInventoryError(
                f"count for {raw!r} must be between 1 and {MAX_START_COUNT}, got {count}"
            )
        out[item] = count
    trial = Inventory(rules.game.items, slots)
    for item, count in out.items():
        if trial.add(ItemStack(item, count)) < count:
            raise StartInventoryError(f"does not fit in the body's {slots} inventory slots")
    return out


@dataclass(frozen=True)
class EnvSpec:
    world: str
    rules: str
    task: str

    @property
    def id(self) -> str:
        middle = "" if self.rules == VANILLA else f"@{self.rules}"
        return f"{self.world}{middle}/{self.task}"


def parse_env_id(env_id: str) -> EnvSpec:
    if not isinstance(env_id, str):
        raise EnvIdError(
            f"an environment id is a string like 'plains-1@M04/diamond', got {env_id!r}"
        )
    head, sep, task = env_id.rpartition("/")
    if not sep or not head or not task:
        raise EnvIdError(f"environment id {env_id!r} must look like 'plains-1@M04/diamond'")
    world, _, rules = head.partition("@")
    return EnvSpec(world, rules or VANILLA, task)


def registered_ids(
    rule_sets: tuple[str, ...] = (VANILLA, "M01", "M02", "M03", "M04", "M05", "M06"),
    studies: tuple[str, ...] = STUDIES,
) -> list[str]:
    """Every packaged world x rule set x progression task (tech-tree ids work in ``make``).

    The main study's ten worlds come first (210 ids), then the horizon study's 25 (525).
    """
    tasks = progression_tasks()
    worlds = [w for study in studies for w in world_ids(study)]
    return [EnvSpec(w, r, t).id for w in worlds for r in rule_sets for t in tasks]


def _whole_seed(seed: object) -> int:
    """An episode seed as a plain int. The draws are keyed by the seed's text, so a float
    (``1.0``), a bool or a string would give a different episode from the whole number
    it looks like, without a word; numpy's integers are whole numbers and are taken."""
    if isinstance(seed, bool):
        raise ValueError(f"a seed must be a whole number, got {seed!r}")
    try:
        return operator.index(seed)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"a seed must be a whole number, got {seed!r}") from None


class MirrorCraftEnv:
    def __init__(
        self,
        spec: EnvSpec,
        *,
        budget: int | None = None,
        config: BodyConfig | None = None,
        start_inventory: Mapping[str, int] | None = None,
    ):
        if budget is not None and (problem := budget_problem(budget)):
            raise ValueError(problem)
        self.spec = spec
        self.loaded = load_world(spec.world)
        self.rules = current_rules(spec.rules)
        self.vanilla = vanilla_rules()
        task = get_task(spec.task)
        self.task = task.with_budget(budget) if budget is not None else task
        self.config = config
        self.start_inventory = (
            None
            if start_inventory is None
            else checked_inventory(
                start_inventory, self.rules, (config or default_body_config()).inventory_slots
            )
        )
        self.episode: SimEpisode | None = None
        self._seed = 0
        self._budget = budget
        self._played: list[Any] = []
        """The current episode's actions, as sent: copies and pickles replay them."""

    def reset(
        self, *, seed: int | None = None, options: Mapping[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        if seed is not None:
            self._seed = _whole_seed(seed)
        else:
            self._seed += 1
        self.episode = SimEpisode(
            self.loaded,
            self.rules,
            self.vanilla,
            self.task,
            seed=self._seed,
            config=self.config,
            start_inventory=self.start_inventory,
        )
        self._played = []
        obs = self.episode.observe()
        return obs, {"score": 0, "success": False, "budget": self.task.budget}

    def step(self, action: Any) -> tuple[Observation, int, bool, bool, dict[str, Any]]:
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        out = self.episode.step(action)
        self._played.append(_kept(action))
        info = {
            "score": out.score,
            "success": self.episode.evaluator.success(),
            "new_milestones": list(out.new_milestones),
            "result": out.result.to_json(),
        }
        return out.observation, out.reward, out.terminated, out.truncated, info

    def close(self) -> None:
        """End the current episode, if any, and let it go (Gymnasium's ``close``); a later
        ``reset`` starts a new one."""
        if self.episode is not None:
            self.episode.close()
            self.episode = None
            self._played = []

    def _replayed(self) -> MirrorCraftEnv:
        """An independent copy in the same state: the same seed and actions replayed (the
        simulator is deterministic), sharing the world, rules and task, which never change."""
        other = object.__new__(MirrorCraftEnv)
        other.__dict__.update(self.__dict__)
        other.episode, other._played = None, []
        if self.episode is not None:
            other.reset(seed=self._seed)
            for action in self._played:
                other.step(_as_played(action))
        return other

    def __copy__(self) -> MirrorCraftEnv:
        return self._replayed()

    def __deepcopy__(self, memo: dict[int, Any]) -> MirrorCraftEnv:
        return self._replayed()

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as how it was made, its seed and the episode's actions; unpickling makes
        it again (a rule set named by a path is read from that path then) and replays them."""
        played = None if self.episode is None else [_as_played(a) for a in self._played]
        args = (self.spec, self._budget, self.config, self.start_inventory, self._seed, played)
        return (_unpickled, args)

    def __enter__(self) -> MirrorCraftEnv:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def unwrapped(self) -> MirrorCraftEnv:
        return self


class _Pickled:
    """An action kept as its pickle: a few times cheaper to take at every step than a deep
    copy, and as safe from the caller changing the object afterwards."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


def _kept(action: Any) -> Any:
    """The action as it was when played, should the caller change the object afterwards."""
    try:
        return _Pickled(pickle.dumps(action, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # an object that cannot be pickled is replayed as it is
        return action


def _as_played(kept: Any) -> Any:
    return pickle.loads(kept.data) if isinstance(kept, _Pickled) else kept


def _unpickled(
    spec: EnvSpec,
    budget: int | None,
    config: BodyConfig | None,
    start_inventory: Mapping[str, int] | None,
    seed: int,
    played: list[Any] | None,
) -> MirrorCraftEnv:
    env = MirrorCraftEnv(spec, budget=budget, config=config, start_inventory=start_inventory)
    env._seed = seed
    if played is not None:
        env.reset(seed=seed)
        for action in played:
            env.step(action)
    return env


def make(env_id: str, **kwargs: Any) -> MirrorCraftEnv:
    return MirrorCraftEnv(parse_env_id(env_id), **kwargs)
