"""Shared machinery of the LLM configurations.

An ``LLMAgent`` keeps the episode's history, builds the shared observation block,
calls its model through an ``LLMClient`` (counting every call, including calls
that do not act), parses the reply, and gives an unusable reply exactly one
output-repair call; if that is unusable too the agent has no executable action
and the episode ends, as the paper specifies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mirrorcraft.agents.base import Decision, EpisodeContext, Usage
from mirrorcraft.agents.llm.history import History, Step
from mirrorcraft.agents.llm.prior import VanillaPrior
from mirrorcraft.agents.llm.render import Texts, observation_fields, render_fields
from mirrorcraft.agents.llm.replies import action_from, first_json_object, preview
from mirrorcraft.agents.llm.templates import TemplateFile, load_template, prompt_hashes
from mirrorcraft.body.actions import skill_listing
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta, Completion, LLMClient, Message, Sampling
from mirrorcraft.llm.budget import BudgetedClient
from mirrorcraft.rules.ruleset import RuleSet


@dataclass(frozen=True)
class Reply:
    doc: dict[str, Any] | None
    text: str


class LLMAgent:
    """Base class; subclasses implement ``decide``."""

    cross_episode_memory = False
    template_names: tuple[str, ...] = ("common",)

    def __init__(
        self, name: str, client: LLMClient, vanilla: RuleSet, *, sampling: Sampling | None = None
    ):
        self.name = name
        self.client = client
        self.vanilla = vanilla
        self.sampling = sampling or Sampling()
        self.common = load_template("common")
        self.tools = {t: (s.kind, s.tier) for t, s in vanilla.game.tools.items()}
        self.history = History()
        self.ctx: EpisodeContext | None = None
        self.prior: VanillaPrior | None = None
        self._usage = Usage()
        self._last_obs: Observation | None = None
        self._pending: tuple[Any, str] | None = None
        self._fields_key: tuple[int, int, int] | None = None
        self._fields: dict[str, Any] = {}
        self._texts: Texts = {}
        self._system_common: dict[str, str] | None = None
        self.unreported_usage = Usage()
        """Usage of calls that ended in no action, the call budget or an error (the runner adds
        it to the record)."""

    @property
    def template_hashes(self) -> dict[str, str]:
        """Hashes of every template file the prompts use (the observation block's included)."""
        return prompt_hashes((*self.template_names, "observation"))

    # -- episode lifecycle ---------------------------------------------------------------
    def start(self, ctx: EpisodeContext) -> None:
        self.ctx = ctx
        self.history = History()
        self.prior = VanillaPrior.for_task(self.vanilla, ctx.task)
        self._last_obs = None
        self._pending = None
        if isinstance(self.client, BudgetedClient):
            self.client.reset()
        self.reset()

    def reset(self) -> None:
        """Clear configuration-specific state (called by ``start``)."""

    def finish(self, obs: Observation) -> None:
        self._record(obs)

    async def act(self, obs: Observation) -> Decision | None:
        self._record(obs)
        self._usage = Usage()
        try:
            chosen = await self.decide(obs)
        except BaseException:
            # The episode ends here (on its call budget, or on an error of the configuration's
            # own); the calls made before are still reported.
            self._pending = None
            self.unreported_usage, self._usage = self._usage, Usage()
            raise
        usage, self._usage = self._usage, Usage()
        if chosen is None:
            # No executable action: the episode ends; the calls made are still reported.
            self._pending = None
            self.unreported_usage = usage
            return None
        action, thought = chosen
        self._pending = (action, thought)
        self._last_obs = obs
        return Decision(action, thought, usage)

    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        raise NotImplementedError

    def _record(self, obs: Observation) -> None:
        if self._pending is None or self._last_obs is None or obs.last_result is None:
            return
        action, thought = self._pending
        before = self._last_obs
        self.history.record(Step.between(before, obs, action, thought))
        self._pending = None

    # -- prompts -----------------------------------------------------------------------
    def system_common(self) -> dict[str, str]:
        """The values every system prompt shares (rendered once per agent: the template
        file and the skill definitions never change while it runs)."""
        if self._system_common is None:
            self._system_common = {
                "AGENT_RULES": self.common.render("agent_rules", {}),
                "SKILLS": self.common.render("skills", {"SKILL_LIST": skill_listing()}),
            }
        return dict(self._system_common)

    def fields(self, obs: Observation) -> dict[str, Any]:
        """The shared observation block's values (computed once per observation)."""
        assert self.prior is not None
        key = (id(obs), obs.step, len(self.history.steps))
        if self._fields_key != key:
            self._texts = {}
            self._fields = observation_fields(
                obs, self.history, self.prior, self.tools, self._texts
            )
            self._fields["learned_rules"] = self.learned_rules()
            self._fields_key = key
        return self._fields

    def learned_rules(self) -> list[dict[str, str]] | None:
        """The configuration's own verified transformations for the LEARNED RULES line.

        Each entry is ``{"skill", "target", "output"}``. None (the default) means the
        configuration keeps no such ledger and the line is left out of its block.
        """
        return None

    def observation_text(self, obs: Observation, *, with_feedback: bool = True) -> str:
        fields = self.fields(obs)
        return render_fields(fields, with_feedback=with_feedback, texts=self._texts)

    def disclose(self, system: str) -> str:
        """Add the rule sheet to a system prompt, only in the disclosed condition."""
        if self.ctx is None or not self.ctx.rule_sheet:
            return system
        return self.common.render(
            "disclosed_system", {"ORIGINAL_SYSTEM": system, "RULE_SHEET": self.ctx.rule_sheet}
        )

    # -- model calls -----------------------------------------------------------------------
    async def call(self, system: str, user: str, meta: CallMeta) -> Reply:
        completion = await self.client.complete(
            [Message("system", system), Message("user", user)], sampling=self.sampling, meta=meta
        )
        self.count(completion)
        return Reply(first_json_object(completion.text), completion.text)

    def count(self, completion: Completion) -> None:
        """Add one call's tokens, cost and failed attempts to the usage of the current step."""
        self._usage.count_call(completion)

    def unusable(self) -> None:
        """Count a reply the configuration could not use (it asks again, or gives up the step)."""
        self._usage.unusable_replies += 1

    async def ask_action(
        self,
        system: str,
        user: str,
        obs: Observation,
        *,
        purpose: str = "act",
        contract: str = "action",
        extra: Mapping[str, Any] | None = None,
    ) -> tuple[dict[str, Any], Reply] | None:
        """One call for an action; one repair call if the reply is unusable; None if still unusable."""
        meta = CallMeta(purpose, contract, self.fields(obs), {"obs": obs, **(extra or {})})
        reply = await self.call(system, user, meta)
        action, problem = action_from(reply.doc)
        if action is not None:
            return action, reply
        self.unusable()
        repair_system = self.common.render("repair_system", {"ORIGINAL_SYSTEM": system})
        repair_user = self.common.render(
            "repair_user",
            {
                "ORIGINAL_USER": user,
                "PREVIOUS_PREVIEW": preview(reply.text) or "(empty)",
                "PROBLEM": problem,
            },
        )
        reply = await self.call(
            repair_system, repair_user, CallMeta("repair", "action", meta.observation, meta.extra)
        )
        action, _problem = action_from(reply.doc)
        if action is None:
            self.unusable()
            return None
        return action, reply


def template(name: str) -> TemplateFile:
    return load_template(name)
