"""Direct LLM: one model call per action, from the current observation alone.

Its only memory is what the shared observation block carries: the bounded record
of verified action effects and the blocked-action evidence.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.llm.base import LLMAgent
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.body.observation import Observation


class DirectAgent(LLMAgent):
    template_names = ("common", "direct")

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        t = load_template("direct")
        system = self.disclose(t.render("system", self.system_common()))
        user = t.render("user", {"OBSERVATION": self.observation_text(obs)})
        got = await self.ask_action(system, user, obs)
        if got is None:
            return None
        action, reply = got
        return action, str((reply.doc or {}).get("thought", ""))
