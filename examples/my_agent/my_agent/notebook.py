"""The greedy agent with a notebook that outlives an episode: an agent with cross-episode memory.

It notes every action that failed and why, and once an action has failed in
``avoid_after`` earlier episodes it stops trying it and explores instead. Run as a
variant of an accumulation spec (``examples/plugin_accumulation.yaml``), its notebook is
kept in a knowledge store: training episodes read it and add to it, each checkpoint
freezes a copy, and the evaluation episodes read that copy (docs/agent_api.md, "Memory").

The store hands the notebook over as records (id -> record) in ``load_knowledge``, and
takes back what the episode changed from ``knowledge_delta``, as operations:
``{"op": "put", "id": ..., "record": {"kind": ..., ...}}`` or ``{"op": "drop", "id": ...}``.
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.base import Decision, EpisodeContext
from mirrorcraft.body.observation import Observation
from my_agent.greedy import GreedyAgent, policy, skill


def action_key(action: dict[str, Any]) -> str:
    return "failed:" + json.dumps(action, sort_keys=True, separators=(",", ":"))


class NotebookAgent(GreedyAgent):
    name = "notebook"
    cross_episode_memory = True

    @classmethod
    def validate_options(cls, options: dict[str, Any]) -> dict[str, Any]:
        """The greedy agent's options, and ``avoid_after`` (1-100 episodes, default 2)."""
        own = dict(options)
        avoid_after = own.pop("avoid_after", 2)
        if (
            not isinstance(avoid_after, int)
            or isinstance(avoid_after, bool)
            or not 1 <= avoid_after <= 100
        ):
            raise ValueError(
                f"avoid_after must be a whole number from 1 to 100, got {avoid_after!r}"
            )
        return {**GreedyAgent.validate_options(own), "avoid_after": avoid_after}

    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.notes: dict[str, dict[str, Any]] = {}
        self.writable = False
        self.failed: dict[str, tuple[dict[str, Any], str]] = {}
        self.last: dict[str, Any] | None = None
        self.avoided = 0

    # -- memory: the store's records in, this episode's operations out --------------------
    def load_knowledge(self, records: dict[str, dict[str, Any]], *, writable: bool) -> None:
        self.notes = {k: dict(v) for k, v in records.items()}
        self.writable = writable

    def knowledge_delta(self) -> list[dict[str, Any]]:
        if not self.writable:
            return []
        ops = []
        for key, (action, reason) in sorted(self.failed.items()):
            before = self.notes.get(key, {}).get("episodes", 0)
            record = {
                "kind": "failed_action",
                "action": action,
                "reason": reason,
                "episodes": before + 1,
            }
            ops.append({"op": "put", "id": key, "record": record})
        return ops

    def memory_stats(self) -> dict[str, Any]:
        return {"notes_at_start": len(self.notes), "actions_avoided": self.avoided}

    # -- the episode ---------------------------------------------------------------------
    def start(self, ctx: EpisodeContext) -> None:
        super().start(ctx)
        self.failed, self.last, self.avoided = {}, None, 0

    async def act(self, obs: Observation) -> Decision | None:
        result = obs.last_result
        if self.last is not None and result is not None and not result.ok:
            self.failed[action_key(self.last)] = (self.last, result.reason)
        action = policy(obs, self.options["logs"], self.options["explore"], self.rng)
        note = self.notes.get(action_key(action))
        if note is not None and note.get("episodes", 0) >= self.options["avoid_after"]:
            self.avoided += 1
            action = skill("explore", target=self.rng.choice(self.options["explore"]))
            thought = f"notebook: that failed in {note['episodes']} episodes ({note['reason']}); exploring"
        else:
            thought = f"greedy: {action['skill']}"
        self.last = action
        return Decision(action, thought=thought)

    def finish(self, obs: Observation) -> None:
        result = obs.last_result
        if self.last is not None and result is not None and not result.ok:
            self.failed[action_key(self.last)] = (self.last, result.reason)
