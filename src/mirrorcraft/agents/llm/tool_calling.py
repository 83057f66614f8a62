"""``tools``: ReAct with native tool calling.

The same loop, limits and prompts' content as ``react`` (the trace of the 16 most recent
steps and the shared observation block in the user prompt; one model call per action),
but the thirteen skills are offered as OpenAI function tools (``agents/llm/tools.py``,
generated from ``data/skills.yaml``) and the action is read from the reply's
``tool_calls`` instead of from JSON in its text. The message text beside the call is
the step's thought. A reply without a usable call gets the one repair call every
configuration gets (with the tools offered again); if that fails too the agent has no
executable action. In the disclosed condition the rule sheet is added to the system
prompt exactly as for ``react``.

Options: ``tool_choice`` (``auto``, the default, which every OpenAI-compatible server
accepts; or ``required``, where the server supports it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mirrorcraft.agents.llm.react import ReActAgent
from mirrorcraft.agents.llm.replies import preview
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.llm.tools import action_from_calls, skill_toolset
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta, Completion, LLMClient, Message, Sampling
from mirrorcraft.rules.ruleset import RuleSet

CONTRACT = "tool_action"
"""The reply contract the mock policy answers with one tool call."""


class ToolsAgent(ReActAgent):
    template_names: tuple[str, ...] = ("common", "react", "tools")

    def __init__(
        self,
        name: str,
        client: LLMClient,
        vanilla: RuleSet,
        *,
        options: Mapping[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> None:
        super().__init__(name, client, vanilla, sampling=sampling)
        opts = dict(options or {})
        unknown = sorted(set(opts) - {"tool_choice"})
        if unknown:
            raise ValueError(f"tools: unknown option {unknown[0]!r} (it takes tool_choice)")
        self.toolset = skill_toolset(str(opts.get("tool_choice", "auto")))

    def system_prompt(self) -> str:
        return self.disclose(load_template("tools").render("system", self.system_common()))

    async def call_tools(self, system: str, user: str, meta: CallMeta) -> Completion:
        completion = await self.client.complete(
            [Message("system", system), Message("user", user)],
            sampling=self.sampling,
            meta=meta,
            tools=self.toolset,
        )
        self.count(completion)
        return completion

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        system, user = self.system_prompt(), self.user_prompt(obs)
        meta = CallMeta("act", CONTRACT, self.fields(obs), {"obs": obs})
        reply = await self.call_tools(system, user, meta)
        action, problem = action_from_calls(reply.tool_calls)
        if action is not None:
            return action, reply.text
        self.unusable()
        template = load_template("tools")
        repair_system = template.render("repair_system", {"ORIGINAL_SYSTEM": system})
        repair_user = template.render(
            "repair_user",
            {
                "ORIGINAL_USER": user,
                "PREVIOUS_PREVIEW": _describe(reply),
                "PROBLEM": problem,
            },
        )
        meta = CallMeta("repair", CONTRACT, meta.observation, meta.extra)
        reply = await self.call_tools(repair_system, repair_user, meta)
        action, _problem = action_from_calls(reply.tool_calls)
        if action is None:
            self.unusable()
            return None
        return action, reply.text


def _describe(reply: Completion) -> str:
    """What the unusable reply held, shortened, for the repair prompt."""
    if reply.tool_calls:
        call = reply.tool_calls[0]
        return f"it called {preview(call.name, 40) or '(no name)'}({preview(call.arguments)})"
    return f"it answered in text: {preview(reply.text) or '(empty)'}"


__all__ = ["CONTRACT", "ToolsAgent"]
