"""The MineEvolve configuration: plan checked subgoals, monitor them, learn, repair locally.

Per action the agent runs the current subgoal's action; a subgoal ends when its
checks hold (success), or when it used ``max_actions`` actions or had
``max_failed_actions`` failed ones (failure). The monitor turns each ending into
typed feedback. Then:

- after a success that closes a run of verified successes, the inducer asks the
  model for a skill (unless a live skill already covers the item) and the curator
  decides whether it enters the knowledge base: its deterministic checks first,
  then (unless the ``deterministic_curator`` variant) one model-judged ``curate``
  call on a candidate the checks would admit;
- after a failure that makes a remedy due (``inducer.remedy_due``), the inducer
  asks for a remedy, the curator validates it, and the adaptor asks the model for
  a new unfinished suffix under the active remedies (retrieved ones plus the new
  one), keeping the completed prefix; without the adaptor (ablation) the whole
  plan is made again from scratch, and retrieved knowledge reaches only the
  episode's first plan; a failure that is not yet "repeated" retries the subgoal;
- when the plan runs out, a new plan is made from the current state.

Model calls: *plan*, *repair*, *skill*, *remedy*, *curate*, *reflection* (ablation), and
one *JSON repair* for any unusable reply; none of them costs an action. If no
executable plan comes back after the repair call, the episode ends with no
action, like every configuration.

Knowledge lives in a ``KnowledgeBase``; ``load_knowledge`` gives it the store's
entries before ``start`` and ``knowledge_delta`` returns the operations made, for
the harness to commit. Without a store, knowledge is kept for the episode only
(``memory: episode``) or in this object across episodes (``memory: carry``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from mirrorcraft.agents.llm.base import LLMAgent, Reply
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.mineevolve.checks import COUNTED, satisfied
from mirrorcraft.agents.mineevolve.config import make_config
from mirrorcraft.agents.mineevolve.curator import Curator, Retrieval, Verdict, Vocabulary
from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry, context_terms, dedupe
from mirrorcraft.agents.mineevolve.feedback import Feedback, Monitor
from mirrorcraft.agents.mineevolve.inducer import remedy_due, success_segment
from mirrorcraft.agents.mineevolve.judge import UNUSABLE, judge_prompts, parse_judgement, related
from mirrorcraft.agents.mineevolve.knowledge_base import KnowledgeBase
from mirrorcraft.agents.mineevolve.plan import Plan, PlanReply, Subgoal, entry_ref, parse_plan_reply
from mirrorcraft.agents.mineevolve.prompting import (
    compact,
    feedback_text,
    knowledge_text,
    plan_text,
    prefix_text,
    split_kinds,
    subgoal_line,
    task_text,
    trigger_fields,
)
from mirrorcraft.agents.mineevolve.stats import EpisodeStats
from mirrorcraft.agents.plan_types import goal_of
from mirrorcraft.body.actions import skill_specs
from mirrorcraft.body.observation import Observation
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import CallMeta
from mirrorcraft.rules.ruleset import RuleSet

MAX_LOOPS = 64
MAX_PLANS_PER_STEP = 3
EXTRA_FAILURE_TYPES = ("NONE", "OTHER", "NO_PROGRESS", "UNEXPECTED_OUTPUT")


class MineEvolveAgent(LLMAgent):
    template_names = ("common", "mineevolve")
    cross_episode_memory = True

    def __init__(
        self,
        name: str,
        client: Any,
        vanilla: RuleSet,
        *,
        options: dict[str, Any] | None = None,
        **kwargs: Any,
    ):
        super().__init__(name, client, vanilla, **kwargs)
        opts = dict(options or {})
        self.variant = str(opts.pop("variant", "full"))
        self.memory_mode = str(opts.pop("memory", "episode"))
        if self.memory_mode not in ("episode", "carry"):
            raise ValueError(f"memory must be 'episode' or 'carry', not {self.memory_mode!r}")
        self.cfg = make_config(self.variant, opts.pop("settings", None))
        if opts:
            raise ValueError(f"unknown MineEvolve options: {sorted(opts)}")
        self.switches = self.cfg.switches
        self.mode = self.switches.feedback
        self.prompts = load_template("mineevolve")
        vocab = Vocabulary(
            items=frozenset(vanilla.game.items),
            blocks=frozenset(vanilla.game.blocks),
            skills=frozenset(skill_specs()),
            failure_types=frozenset((*self.cfg.failure_types, *EXTRA_FAILURE_TYPES)),
            entities=frozenset(vanilla.game.entities),
        )
        self.curator = Curator(self.cfg.curator, vocab, enabled=self.switches.curator)
        self.kb = KnowledgeBase()
        self._loaded: list[KnowledgeEntry] = []
        self._writable = True
        self._store_attached = False
        self.stats = EpisodeStats()

    # -- knowledge across episodes ---------------------------------------------------------
    def load_knowledge(self, entries: Sequence[KnowledgeEntry], *, writable: bool) -> None:
        """Entries the next episode starts from (a store's state); read-only when not writable."""
        self._loaded = list(entries)
        self._writable = writable
        self._store_attached = True

    def knowledge_delta(self) -> list[dict[str, Any]]:
        """The operations this episode applied to its knowledge (empty when read-only)."""
        return list(self.kb.ops)

    def memory_stats(self) -> dict[str, Any]:
        return self.stats.to_json()

    # -- episode lifecycle -------------------------------------------------------------------
    def reset(self) -> None:
        if self.memory_mode == "carry" and not self._store_attached:
            start = list(self.kb.entries.values())
        else:
            start = list(self._loaded)
        writable = self._writable and self.switches.store_updates
        self.kb = KnowledgeBase.of(start, writable=writable)
        self.monitor = Monitor(self.cfg.monitor, self.cfg.failure_type)
        self.plan: Plan | None = None
        self.history_fb: list[tuple[Feedback, Subgoal]] = []
        self.temporary: list[KnowledgeEntry] = []
        self._awaiting = False
        self._unseen: list[tuple[dict[str, Any], Observation]] = []
        self._plan_no = 0
        self._claims: tuple[Subgoal | None, tuple[str, ...]] = (None, ())
        self.stats = EpisodeStats(store_at_start=self.kb.counts(), writable=writable)
        assert self.ctx is not None
        self.goal_items = goal_of(self.vanilla, get_task(self.ctx.task).final.advancement)[1]

    def finish(self, obs: Observation) -> None:
        super().finish(obs)
        sg = self.monitor.subgoal
        if self._awaiting and obs.last_result is not None and sg is not None:
            self.monitor.record(obs.last_result)
            fb = self.monitor.close(obs)
            self.history_fb.append((fb, sg))
            self.stats.feedback(fb)
        self._awaiting = False
        self.stats.store_at_end = self.kb.counts()
        self.stats.operations = len(self.kb.ops)

    # -- the control loop ------------------------------------------------------------------------
    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        if self._awaiting and obs.last_result is not None and self.monitor.subgoal is not None:
            self.monitor.record(obs.last_result)
            self._unseen.append((self.monitor.subgoal.action, obs))
        self._awaiting = False
        plans = 0
        for _ in range(MAX_LOOPS):
            if self.plan is None or self.plan.current is None:
                if plans >= MAX_PLANS_PER_STEP:
                    return None
                plans += 1
                stale = plans > 1 and self.plan is not None and self.plan.current is None
                self.plan = await self.make_plan(obs, stale=stale)
                if self.plan is None:
                    return None
                continue
            sg = self.plan.current
            if self.monitor.subgoal is not sg:
                self.monitor.begin(sg, obs)
                if satisfied(sg.checks, obs, None, obs):
                    await self.on_success(self.monitor.close(obs), sg, obs)
                    continue
            elif satisfied(sg.checks, obs, self.monitor.last_ok, self.monitor.start_obs):
                await self.on_success(self.monitor.close(obs), sg, obs)
                continue
            elif (
                self.monitor.failed_actions >= self.cfg.executor.max_failed_actions
                or self.monitor.actions >= sg.max_actions
            ):
                plans += await self.on_failure(self.monitor.close(obs), sg, obs)
                continue
            self._awaiting = True
            return dict(sg.action), f"{sg.id}: {sg.condition}"
        return None

    async def on_success(self, fb: Feedback, sg: Subgoal, obs: Observation) -> None:
        assert self.plan is not None
        self.history_fb.append((fb, sg))
        self.stats.feedback(fb)
        self.plan.done += 1
        self._credit(sg, True)
        if not self.switches.skills or self.mode == "reflection" or not self.kb.writable:
            return  # read-only: a skill could not be kept, and it acts only once stored
        segment = success_segment(self.cfg.inducer, self.history_fb)
        if not segment or not self._may_induce("skill"):
            return
        target = next(c.target for c in sg.checks if c.type in COUNTED)
        if any(e.kind == "skill" and e.topic().endswith(f":{target}") for e in self.kb.live()):
            self.stats.skills_known += 1
            return
        await self.induce_skill(segment, obs)

    async def on_failure(self, fb: Feedback, sg: Subgoal, obs: Observation) -> int:
        """Handle a failed subgoal; returns how many plans it made (0 or 1)."""
        self.history_fb.append((fb, sg))
        self.stats.feedback(fb)
        self._credit(sg, False)
        if not remedy_due(self.cfg.inducer, [f for f, _ in self.history_fb], self.mode):
            self.stats.retries += 1
            return 0
        self.stats.remedies_due += 1
        fresh: KnowledgeEntry | None = None
        generates = self.kb.writable or self.switches.read_only_remedies
        if generates and self._may_induce("remedy"):
            if self.mode == "reflection":
                await self.induce_note(sg, obs)
            elif self.switches.remedies:
                fresh = await self.induce_remedy(sg, obs)
        if self.switches.adaptor and self.stats.repairs < self.cfg.adaptor.max_repairs_per_episode:
            await self.repair(sg, obs, fresh)
            return 1
        self.plan = None
        self.stats.full_replans += 1
        return 0

    def _credit(self, sg: Subgoal, success: bool) -> None:
        # The prompt asks for the entry's id ("skill_0003"); "skill:skill_0003" is read too.
        # A repair's active_remedies_used are credited once, with its first subgoal's outcome.
        claimed = self._claims[1] if self._claims[0] is sg else ()
        if claimed:
            self._claims = (None, ())
        for entry_id, by_claim in ((entry_ref(sg.source), False), *((c, True) for c in claimed)):
            if entry_id in self.kb.entries:
                self.curator.record_use(self.kb, entry_id, success)
                self.stats.uses += 1
                self.stats.remedy_claims += by_claim

    def _may_induce(self, kind: str) -> bool:
        """Skills and remedies (or notes) each have their own per-episode limit."""
        done = self.stats.skill_inductions if kind == "skill" else self.stats.remedy_inductions
        return done < self.cfg.inducer.max_inductions_per_episode

    # -- retrieval -----------------------------------------------------------------------------------
    def _recent_failures(self) -> list[str]:
        """The failure types of the latest executions (none in the binary-feedback ablation,
        which keeps only success or failure: typed fields steer neither retrieval nor prompts)."""
        if self.mode == "binary":
            return []
        return [f.failure_type for f, _ in self.history_fb[-self.cfg.inducer.window :]]

    def retrieve(self, obs: Observation, subgoal: Subgoal | None) -> Retrieval:
        recent = self._recent_failures()
        route = self.prior.relevant if self.prior is not None else ()
        context = context_terms(obs, self.goal_items, subgoal, recent, route)
        kinds = []
        if self.mode == "reflection":
            kinds = ["reflection"]
        else:
            kinds = [
                k
                for k, on in (("skill", self.switches.skills), ("remedy", self.switches.remedies))
                if on
            ]
        started = time.perf_counter()
        found = self.curator.retrieve(self.kb.live(), context, kinds)
        self.stats.retrieval(found, time.perf_counter() - started)
        return found

    # -- planning and repair -------------------------------------------------------------------------
    def _system(self, section: str) -> str:
        plan_format = self.prompts.render(
            "plan_format", {"MAX_SUBGOALS": str(self.cfg.executor.max_plan_subgoals)}
        )
        return self.disclose(
            self.prompts.render(section, {**self.system_common(), "PLAN_FORMAT": plan_format})
        )

    async def _ask(
        self, system: str, user: str, purpose: str, obs: Observation, extra: dict[str, Any]
    ) -> Reply:
        # Observations acted on without a call (only the offline scripted policy reads them).
        observed = [(a, o) for a, o in self._unseen if o.step < obs.step]
        self._unseen = []
        meta = CallMeta(
            purpose,
            f"mineevolve_{purpose}",
            self.fields(obs),
            {"obs": obs, "observed": observed, **extra},
        )
        self.stats.call(purpose)
        return await self.call(system, user, meta)

    async def _ask_json(
        self,
        system: str,
        user: str,
        purpose: str,
        obs: Observation,
        extra: dict[str, Any],
        parse: Any,
    ) -> Any:
        """One call and, when ``parse`` finds the reply unusable, one JSON repair call."""
        reply = await self._ask(system, user, purpose, obs, extra)
        value, problem = parse(reply.doc)
        if value is not None:
            return value
        self.unusable()
        self.stats.json_repairs += 1
        again = self.prompts.render("json_repair", {"ORIGINAL_USER": user, "PROBLEM": problem})
        reply = await self._ask(system, again, purpose, obs, extra)
        value, _problem = parse(reply.doc)
        if value is None:
            self.unusable()
        return value

    def _parse_plan(self, key: str) -> Any:
        ex = self.cfg.executor

        def parse(doc: dict[str, Any] | None) -> tuple[PlanReply | None, str]:
            return parse_plan_reply(doc, key, ex.max_actions, ex.max_plan_subgoals)

        return parse

    async def make_plan(self, obs: Observation, *, stale: bool = False) -> Plan | None:
        """A new plan; ``stale``: the previous one was already complete when it was made.

        Without the adaptor (ablation) retrieved knowledge is injected into the episode's
        first plan only; every later plan is made from scratch without it.
        """
        skills: list[KnowledgeEntry] = []
        active: list[KnowledgeEntry] = []
        if self.switches.adaptor or self._plan_no == 0:
            found = self.retrieve(obs, None)
            skills, remedies = split_kinds(found.entries)
            active = dedupe([*self.temporary, *remedies])
        else:
            self.stats.bare_replans += 1
        prior = self.cfg.curator.prior_weight
        user = self.prompts.render(
            "plan_user",
            {
                "TASK": task_text(obs),
                "PREFIX": prefix_text(self.plan, stale=stale),
                "SKILLS_RETRIEVED": knowledge_text(skills, prior),
                "REMEDIES": knowledge_text(active, prior),
                "OBSERVATION": self.observation_text(obs),
            },
        )
        extra = {
            "skills": [e.model_dump(mode="json") for e in skills],
            "remedies": [e.model_dump(mode="json") for e in active],
        }
        got = await self._ask_json(
            self._system("plan_system"), user, "plan", obs, extra, self._parse_plan("subgoals")
        )
        if got is None:
            return None
        self._plan_no += 1
        self.stats.plans += 1
        return Plan(f"p_{self._plan_no}", list(got.subgoals), constraints=got.constraints)

    async def repair(
        self, failing: Subgoal, obs: Observation, fresh: KnowledgeEntry | None
    ) -> None:
        """Replace the unfinished suffix under the active remedies; the prefix stays."""
        assert self.plan is not None
        self.stats.repairs += 1
        found = self.retrieve(obs, failing)
        skills, remedies = split_kinds(found.entries)
        active = dedupe([*([fresh] if fresh else []), *self.temporary, *remedies])
        prior = self.cfg.curator.prior_weight
        window = [f for f, _ in self.history_fb[-self.cfg.inducer.window :]]
        user = self.prompts.render(
            "repair_user",
            {
                "TASK": task_text(obs),
                "PLAN": plan_text(self.plan, failing),
                "CONSTRAINTS": compact(list(self.plan.constraints))
                if self.plan.constraints
                else "none",
                "PREFIX_IDS": compact([sg.id for sg in self.plan.prefix]),
                "FEEDBACK": feedback_text(window, self.mode),
                "SKILLS_RETRIEVED": knowledge_text(skills, prior),
                "REMEDIES": knowledge_text(active, prior),
                "OBSERVATION": self.observation_text(obs),
            },
        )
        extra = {
            "skills": [e.model_dump(mode="json") for e in skills],
            "remedies": [e.model_dump(mode="json") for e in active],
            "failing": failing.to_json(),
            "prefix": [sg.id for sg in self.plan.prefix],
        }
        got = await self._ask_json(
            self._system("repair_system"),
            user,
            "repair",
            obs,
            extra,
            self._parse_plan("repaired_suffix"),
        )
        self._plan_no += 1
        plan_id = f"p_{self._plan_no}r"
        claimed: tuple[str, ...] = ()
        if got is None:
            fallback = [sg for e in active if e.kind == "remedy" for sg in e.repair_subgoals()]
            if not fallback:
                self.plan = None
                self.stats.full_replans += 1
                return
            suffix = (*fallback[: self.cfg.executor.max_plan_subgoals - 1], failing)
            self.stats.fallback_repairs += 1
        else:
            # The prefix is kept whatever kept_prefix says; a reply that disagrees is counted.
            kept = {sg.id for sg in self.plan.prefix}
            if got.kept_prefix is not None and set(got.kept_prefix) != kept:
                self.stats.prefix_disagreements += 1
            claimed, unknown = got.claimed([e.id for e in active if e.kind == "remedy"])
            self.stats.unknown_claims += unknown
            suffix = got.subgoals
        self.plan = self.plan.with_suffix(plan_id, suffix)
        self._claims = (self.plan.current, claimed)

    def _activate(self, entry: KnowledgeEntry) -> None:
        """Keep a fresh remedy (or note) active for the rest of the episode (the last four)."""
        self.temporary = [*[e for e in self.temporary if e.id != entry.id][-3:], entry]

    # -- induction -----------------------------------------------------------------------------------
    def _candidate(self, kind: str, prefix: str, evidence: Sequence[str]) -> Any:
        def parse(doc: dict[str, Any] | None) -> tuple[KnowledgeEntry | None, str]:
            taken = {e.id for e in self.temporary}
            return self.curator.build(doc, kind, self.kb.fresh_id(prefix, taken), evidence)

        return parse

    def _evidence(self, feedback: Sequence[Feedback]) -> list[str]:
        episode = self.ctx.seed if self.ctx is not None else 0
        return [f"{episode}:{fb.id}" for fb in feedback]

    async def _admit(
        self,
        entry: KnowledgeEntry,
        obs: Observation,
        failing: str = "",
        final: tuple[Observation, dict[str, int]] | None = None,
    ) -> Verdict:
        """Curate a candidate into the knowledge base (or, read-only, only validate it).

        The deterministic checks come first; a candidate they would add then goes to
        the model-judged stage (``judge.py``) unless the variant switches it off. A skill
        that a read-only store could not keep, and a free-text note of the reflection
        ablation, are not judged.
        """
        # Read-only, the candidate is checked against the live entries and the remedies
        # this episode keeps active (the same remedy again merges into its active copy).
        target = (
            self.kb if self.kb.writable else KnowledgeBase.of([*self.kb.live(), *self.temporary])
        )
        verdict = self.curator.screen(entry, target, failing, final)
        judged = self.switches.curator and self.switches.curator_judge
        if (
            judged
            and verdict.accepted
            and verdict.reason != "merged"
            and entry.kind != "reflection"
            and (target is self.kb or entry.kind != "skill")
        ):
            accepted, reason = await self.judge(entry, obs)
            if not accepted:
                verdict = Verdict(False, reason, "rejected by the model-judged stage")
        verdict = self.curator.write(verdict, entry, target)
        self.stats.verdict(verdict)
        return verdict

    async def judge(self, entry: KnowledgeEntry, obs: Observation) -> tuple[bool, str]:
        """One ``curate`` call (and a JSON repair if needed): (accepted, rejection reason)."""
        self.stats.judged += 1
        recent = self._recent_failures()
        system, user = judge_prompts(
            self.prompts,
            entry,
            related(entry, self.kb.live()),
            self.kb.counts(),
            {
                "TASK": task_text(obs),
                "INVENTORY": compact(obs.inventory),
                "FAILURES": compact([f for f in recent if f != "NONE"]),
            },
            self.cfg.curator.prior_weight,
            trigger_fields(),
        )
        extra = {"candidate": entry.model_dump(mode="json")}
        got = await self._ask_json(system, user, "curate", obs, extra, parse_judgement(entry.id))
        return got if got is not None else (False, UNUSABLE)

    async def induce_skill(
        self, segment: Sequence[tuple[Feedback, Subgoal]], obs: Observation
    ) -> None:
        self.stats.skill_inductions += 1
        feedback = [fb for fb, _ in segment]
        user = self.prompts.render(
            "skill_user",
            {
                "TASK": task_text(obs),
                "SEGMENT": feedback_text(feedback, self.mode),
                "SUBGOALS": "\n".join(subgoal_line(sg) for _, sg in segment),
            },
        )
        system = self.prompts.render("skill_system", {"TRIGGER_FIELDS": trigger_fields()})
        extra = {
            "segment": [fb.view(self.mode) for fb in feedback],
            "subgoals": [sg.to_json() for _, sg in segment],
            "goal_items": list(self.goal_items),
        }
        entry = await self._ask_json(
            system,
            user,
            "skill",
            obs,
            extra,
            self._candidate("skill", "skill", self._evidence(feedback)),
        )
        if entry is None:
            self.stats.rejected["schema"] = self.stats.rejected.get("schema", 0) + 1
            return
        gained: dict[str, int] = {}
        for fb in feedback:
            for item, n in fb.delta_inv.items():
                gained[item] = gained.get(item, 0) + n
        await self._admit(entry, obs, final=(obs, gained))

    def _window_block(self, sg: Subgoal, obs: Observation) -> tuple[list[Feedback], dict[str, str]]:
        window = [f for f, _ in self.history_fb[-self.cfg.inducer.window :]]
        return window, {
            "TASK": task_text(obs),
            "SUBGOAL": compact(sg.to_json()),
            "WINDOW": feedback_text(window, self.mode),
        }

    async def induce_remedy(self, sg: Subgoal, obs: Observation) -> KnowledgeEntry | None:
        window, values = self._window_block(sg, obs)
        user = self.prompts.render(
            "remedy_user", {**values, "OBSERVATION": self.observation_text(obs)}
        )
        failure_types = ", ".join((*self.cfg.failure_types, *EXTRA_FAILURE_TYPES[1:]))
        system = self.prompts.render(
            "remedy_system", {"TRIGGER_FIELDS": trigger_fields(), "FAILURE_TYPES": failure_types}
        )
        return await self._induce_from_failures(
            "remedy", "remedy", system, user, sg, obs, window, sg.signature()
        )

    async def induce_note(self, sg: Subgoal, obs: Observation) -> None:
        window, values = self._window_block(sg, obs)
        user = self.prompts.render("reflection_user", values)
        system = self.prompts.render("reflection_system", {})
        await self._induce_from_failures("reflection", "note", system, user, sg, obs, window, "")

    async def _induce_from_failures(
        self,
        call: str,
        kind: str,
        system: str,
        user: str,
        sg: Subgoal,
        obs: Observation,
        window: list[Feedback],
        failing: str,
    ) -> KnowledgeEntry | None:
        """One model call for a remedy (or, in the text-reflection ablation, a note), curated."""
        self.stats.remedy_inductions += 1
        extra = {"window": [f.view(self.mode) for f in window], "failing": sg.to_json()}
        entry = await self._ask_json(
            system, user, call, obs, extra, self._candidate(call, kind, self._evidence(window))
        )
        if entry is None:
            self.stats.rejected["schema"] = self.stats.rejected.get("schema", 0) + 1
            return None
        verdict = await self._admit(entry, obs, failing)
        if not verdict.accepted:
            return None
        active = verdict.entry or entry
        self._activate(active)
        return active
