"""A greedy agent: each step it takes the first useful action its observation allows.

It knows the usual wooden-then-stone tool route of Minecraft and nothing of the world it is
in: when a changed rule breaks that route (a recipe that gives something else, a block that
drops something else), it does not notice. That makes it a small baseline with an RIE.

It follows MirrorCraft's Agent protocol (docs/agent_api.md): ``validate_options`` checks the
spec's options, ``start`` gets the episode context (with a seeded RNG), ``act`` returns one
action for each observation, ``finish`` sees the last observation.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.base import Decision, EpisodeContext
from mirrorcraft.body.observation import Observation


def skill(name: str, **args: Any) -> dict[str, Any]:
    return {"skill": name, "args": args}


def count(inventory: dict[str, int], suffix: str) -> int:
    return sum(n for item, n in inventory.items() if item.endswith(suffix))


def policy(obs: Observation, logs_wanted: int, explore: list[str], rng: Any) -> dict[str, Any]:
    """The whole policy: the first rule that applies gives the action."""
    inv = obs.inventory
    near = {b.id for b in obs.nearby_blocks}
    table = any(f.id == "crafting_table" for f in obs.facilities)
    log = next((i for i in sorted(inv) if i.endswith("_log")), None)
    plank = next((i for i in sorted(inv) if i.endswith("_planks")), None)
    sticks, stone = inv.get("stick", 0), inv.get("cobblestone", 0)
    pickaxe = count(inv, "_pickaxe") > 0
    row3 = lambda m: [[m, m, m], [None, "stick", None], [None, "stick", None]]  # noqa: E731
    if obs.nearby_drops:
        return skill("collect", item=obs.nearby_drops[0].id)
    if not pickaxe and count(inv, "_log") + count(inv, "_planks") // 4 < logs_wanted and not table:
        return skill("mine", block="log") if any(b.endswith("_log") for b in near) else skill("explore", target="log")
    if log and count(inv, "_planks") < 4:
        return skill("craft_grid", station="inventory", grid=[[log]])
    if not table and "crafting_table" not in inv and plank and inv[plank] >= 4:
        return skill("craft_grid", station="inventory", grid=[[plank, plank], [plank, plank]])
    if not table and "crafting_table" in inv:
        return skill("place", block="crafting_table")
    if sticks < 2 and plank and inv[plank] >= 2:
        return skill("craft_grid", station="inventory", grid=[[plank], [plank]])
    if not pickaxe and table and plank and inv[plank] >= 3 and sticks >= 2:
        return skill("craft_grid", station="crafting_table", grid=row3(plank))
    if pickaxe and "stone_pickaxe" not in inv and stone >= 3 and sticks >= 2 and table:
        return skill("craft_grid", station="crafting_table", grid=row3("cobblestone"))
    if pickaxe and stone < 3:
        return skill("mine", block="stone", count=3)
    target = rng.choice(explore)
    return skill("mine", block=target) if target in near else skill("explore", target=target)


class GreedyAgent:
    name = "greedy"
    cross_episode_memory = False

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """``logs`` (1-16, default 3) and ``explore`` (block ids to look for once it has a
        pickaxe); anything else is refused."""
        unknown = sorted(set(options) - {"logs", "explore"})
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r} (it takes logs, explore)")
        logs = options.get("logs", 3)
        if not isinstance(logs, int) or isinstance(logs, bool) or not 1 <= logs <= 16:
            raise ValueError(f"logs must be a whole number from 1 to 16, got {logs!r}")
        explore = options.get("explore", ["iron_ore", "coal_ore"])
        if not isinstance(explore, list) or not explore or not all(isinstance(e, str) for e in explore):
            raise ValueError("explore must be a non-empty list of block ids")
        return {"logs": logs, "explore": explore}

    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        self.rng: Any = None

    def start(self, ctx: EpisodeContext) -> None:
        self.rng = ctx.rng

    async def act(self, obs: Observation) -> Decision | None:
        action = policy(obs, self.options["logs"], self.options["explore"], self.rng)
        return Decision(action, thought=f"greedy: {action['skill']}")

    def finish(self, obs: Observation) -> None:
        pass
