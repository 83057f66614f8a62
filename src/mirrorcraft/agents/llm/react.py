"""ReAct: thought, action and observation for the 16 most recent steps, then one action.

ReAct with rules is this same agent in the disclosed condition: its system prompt
says the rules changed and carries the exact rule sheet on every call. In the
hidden condition nothing in the prompt says the rules may differ.
"""

from __future__ import annotations

import json
from typing import Any

from mirrorcraft.agents.llm.base import LLMAgent
from mirrorcraft.agents.llm.history import Step
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.body.observation import Observation

TRACE_LENGTH = 16


def step_line(step: Step) -> str:
    r = step.result
    outcome = f"ok: {r.message}" if r.ok else f"failed ({r.reason}): {r.message}"
    if r.produced:
        outcome += f"; produced {json.dumps(dict(r.produced), sort_keys=True)}"
    return load_template("react").render(
        "step",
        {
            "STEP": str(step.index),
            "THOUGHT": " ".join(step.thought.split())[:300] or "-",
            "ACTION": json.dumps(step.action, sort_keys=True)[:300],
            "RESULT": outcome,
        },
    )


class ReActAgent(LLMAgent):
    template_names: tuple[str, ...] = ("common", "react")
    trace_length = TRACE_LENGTH

    def system_prompt(self) -> str:
        return self.disclose(load_template("react").render("system", self.system_common()))

    def _line(self, step: Step) -> str:
        key = ("react", step.index)
        line = self.history.rendered.get(key)
        if line is None:
            line = self.history.rendered[key] = step_line(step)
        return line

    def user_prompt(self, obs: Observation, prefix: str = "") -> str:
        recent = self.history.recent(self.trace_length)
        user = load_template("react").render(
            "user",
            {
                "RECENT_COUNT": str(self.trace_length),
                "RECENT_STEPS": "\n".join(self._line(s) for s in recent) or "(none yet)",
                "OBSERVATION": self.observation_text(obs, with_feedback=False),
            },
        )
        return f"{prefix}\n{user}" if prefix else user

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        got = await self.ask_action(
            self.system_prompt(), self.user_prompt(obs), obs, contract="react_action"
        )
        if got is None:
            return None
        action, reply = got
        return action, str((reply.doc or {}).get("thought", ""))
