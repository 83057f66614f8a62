"""Voyager within one episode: bounded skill programs, a critic, a procedure library.

Each model round writes one program of at most 4 primitive actions with a
declared subgoal and success condition (or names a library entry to reuse).
The agent returns the program's actions one per ``decide`` (each is one
budgeted action) and abandons the rest at the first failed result.

When the model is called (none of these calls acts or costs an action):

- *program*: whenever no program is running. Up to 5 library entries are
  retrieved by relevance (``Library.score``) into the prompt.
- *program repair*: the program call after a failed program carries the failed
  program, its trace, the automatic check and the critique. At most 4 repair
  rounds: by default 4 in the whole episode (the paper's "at most four
  repairs"); with the option ``repair_scope: subgoal`` (the variant
  ``voyager[subgoal_repairs]``) 4 per failing subgoal, as Voyager's original
  code counts them. Once the allowance is used up, the program after a failure
  is written fresh, without the repair feedback.
- *JSON repair*: one extra call when a program reply is unusable (no JSON,
  more than 4 actions, an invalid action, an unknown success kind, an unknown
  library name).
- *fallback*: if the repaired reply is still unusable, one call with the ReAct
  system prompt and the current observation alone, for a single action (with its
  own format repair); only if that fails too does the episode end with no
  executable action.
- *critic*: after a program ran all its actions without a failure, with the
  states before and after, the trace and the automatic check (one JSON repair
  when its reply is unusable; if still unusable, the automatic check decides).
  A program that stopped on a failed action needs no critic: the failure is
  the feedback.

A program succeeds when it ran to the end, its automatic check passed and the
critic agreed; it then enters the library (at most 16 entries). Everything is
cleared at the start of each episode.
"""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.llm.base import LLMAgent
from mirrorcraft.agents.llm.history import Step, j
from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.agents.llm.voyager_library import (
    MAX_PROGRAM_ACTIONS,
    RETRIEVE_LIMIT,
    SUCCESS_KINDS,
    Library,
    Program,
    check_success,
    parse_program,
)
from mirrorcraft.agents.llm.worldview import state_json
from mirrorcraft.body.observation import Observation
from mirrorcraft.llm.base import CallMeta, LLMClient, Sampling
from mirrorcraft.rules.ruleset import RuleSet

MAX_REPAIRS = 4
REPAIR_SCOPES = ("episode", "subgoal")
"""What the repair allowance counts: repairs in the whole episode, or per failing subgoal."""
VARIANTS = {"subgoal_repairs": {"repair_scope": "subgoal"}}
"""Named variants (``voyager[subgoal_repairs]``) and the options they set."""


class VoyagerOptionError(ValueError):
    pass


def _j(value: Any) -> str:
    return j(value)


def _trace_entry(step: Step) -> dict[str, Any]:
    r = step.result
    return {
        "action": step.action,
        "ok": r.ok,
        "reason": r.reason,
        "message": r.message,
        "produced": dict(r.produced),
        "consumed": dict(r.consumed),
    }


class VoyagerAgent(LLMAgent):
    template_names = ("common", "react", "voyager")

    def __init__(
        self,
        name: str,
        client: LLMClient,
        vanilla: RuleSet,
        *,
        sampling: Sampling | None = None,
        options: dict[str, object] | None = None,
    ):
        super().__init__(name, client, vanilla, sampling=sampling)
        opts = dict(options or {})
        variant = opts.pop("variant", None)
        if variant is not None:
            if variant not in VARIANTS:
                raise VoyagerOptionError(f"unknown Voyager variant {variant!r}")
            opts = {**VARIANTS[str(variant)], **opts}
        scope = opts.pop("repair_scope", "episode")
        if scope not in REPAIR_SCOPES:
            raise VoyagerOptionError(
                f"Voyager option repair_scope must be one of {', '.join(REPAIR_SCOPES)}, got {scope!r}"
            )
        if opts:
            raise VoyagerOptionError(f"unknown Voyager option(s): {', '.join(sorted(opts))}")
        self.repair_scope = str(scope)

    def reset(self) -> None:
        self.library = Library()
        self.program: Program | None = None
        self.queue: list[dict[str, Any]] = []
        self.start_obs: Observation | None = None
        self.trace_start = 0
        self.feedback: dict[str, Any] | None = None
        self.repairs: dict[str, int] = {}
        self.programs: list[dict[str, Any]] = []
        """One entry per program run: name, subgoal, actions, executed, outcome (for records and tests)."""
        self.retrievals: list[int] = []
        self.fallbacks = 0

    # -- acting -----------------------------------------------------------------------------
    async def decide(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        if self.program is not None:
            last = self.history.steps[-1] if len(self.history.steps) > self.trace_start else None
            failed = last is not None and not last.result.ok
            if not failed and self.queue:
                return self._next_primitive()
            await self._finish(obs, aborted=failed)
        program = await self._generate(obs)
        if isinstance(program, Program):
            self.program, self.queue = program, list(program.actions)
            self.start_obs, self.trace_start = obs, len(self.history.steps)
            return self._next_primitive()
        return program

    def _next_primitive(self) -> tuple[dict[str, Any], str]:
        assert self.program is not None
        index = len(self.program.actions) - len(self.queue) + 1
        action = self.queue.pop(0)
        return (
            action,
            f"program {self.program.name} ({index}/{len(self.program.actions)}): {self.program.subgoal}",
        )

    # -- program generation -----------------------------------------------------------------
    async def _generate(self, obs: Observation) -> Program | tuple[dict[str, Any], str] | None:
        t = load_template("voyager")
        retrieved = self.library.retrieve(obs, RETRIEVE_LIMIT)
        self.retrievals.append(len(retrieved))
        feedback = self.feedback
        self.feedback = None
        if feedback is not None:
            key = feedback["subgoal_key"] if self.repair_scope == "subgoal" else "episode"
            if self.repairs.get(key, 0) >= MAX_REPAIRS:
                feedback = None  # the repair allowance is used up; write a fresh program
            else:
                self.repairs[key] = self.repairs.get(key, 0) + 1
        system = self.disclose(
            t.render(
                "program_system",
                {
                    **self.system_common(),
                    "MAX_ACTIONS": str(MAX_PROGRAM_ACTIONS),
                    "SUCCESS_KINDS": ", ".join(SUCCESS_KINDS),
                },
            )
        )
        request = t.render("request_repair" if feedback else "request_new", {})
        values = {
            "RETRIEVED": "\n".join(_j(s.card()) for s in retrieved) or t.render("nothing", {}),
            "FEEDBACK": _j({k: v for k, v in feedback.items() if k != "subgoal_key"})
            if feedback
            else t.render("nothing", {}),
            "OBSERVATION": self.observation_text(obs),
        }
        extra = {
            "obs": obs,
            "retrieved": [s.card() for s in retrieved],
            "repair": feedback is not None,
        }
        purpose = "program_repair" if feedback else "program"
        reply = await self.call(
            system,
            t.render("program_user", {**values, "REQUEST": request}),
            CallMeta(purpose, "voyager_program", self.fields(obs), extra),
        )
        program, problem = parse_program(reply.doc, self.library)
        if program is None:
            self.unusable()
            note = t.render(
                "json_repair", {"PROBLEM": problem, "MAX_ACTIONS": str(MAX_PROGRAM_ACTIONS)}
            )
            reply = await self.call(
                system,
                t.render("program_user", {**values, "REQUEST": f"{request}\n{note}"}),
                CallMeta("program_json_repair", "voyager_program", self.fields(obs), extra),
            )
            program, problem = parse_program(reply.doc, self.library)
            if program is None:
                self.unusable()
        if program is not None:
            return program
        return await self._fallback(obs)

    async def _fallback(self, obs: Observation) -> tuple[dict[str, Any], str] | None:
        """A single action from the ReAct system prompt and the current observation alone."""
        self.fallbacks += 1
        system = self.disclose(load_template("react").render("system", self.system_common()))
        user = load_template("voyager").render(
            "fallback_user", {"OBSERVATION": self.observation_text(obs)}
        )
        got = await self.ask_action(system, user, obs, purpose="fallback", contract="react_action")
        if got is None:
            return None
        action, reply = got
        return action, str((reply.doc or {}).get("thought", "")) or "fallback action"

    # -- after a program --------------------------------------------------------------------
    async def _finish(self, obs: Observation, *, aborted: bool) -> None:
        program, start = self.program, self.start_obs
        assert program is not None and start is not None
        trace = [_trace_entry(s) for s in self.history.steps[self.trace_start :]]
        check = check_success(program.success, start, obs, trace, len(program.actions))
        verdict: dict[str, Any] | None = None
        if not aborted:
            verdict = await self._critic(program, start, obs, trace, check)
        success = (
            not aborted and bool(check["passed"]) and (verdict is None or bool(verdict["success"]))
        )
        self.programs.append(
            {
                "name": program.name,
                "subgoal": program.subgoal,
                "reused": program.reused,
                "actions": len(program.actions),
                "executed": len(trace),
                "aborted": aborted,
                "check": check["passed"],
                "critic": None if verdict is None else verdict["success"],
                "success": success,
                "step": obs.step,
            }
        )
        if success:
            self.library.add(program, obs.step)
        else:
            if program.reused:
                self.library.failed(program.name)
            failure = next((t for t in trace if not t["ok"]), None)
            self.feedback = {
                "subgoal_key": " ".join(program.subgoal.lower().split()),
                "program": program.to_json(),
                "executed": len(trace),
                "execution_error": None
                if failure is None
                else {
                    "action": failure["action"],
                    "reason": failure["reason"],
                    "message": failure["message"],
                },
                "trace": trace,
                "automatic_check": check,
                "critique": None if verdict is None else verdict["critique"],
            }
        self.program, self.queue, self.start_obs = None, [], None

    async def _critic(
        self,
        program: Program,
        start: Observation,
        final: Observation,
        trace: list[dict[str, Any]],
        check: dict[str, Any],
    ) -> dict[str, Any] | None:
        t = load_template("voyager")
        system = self.disclose(t.render("critic_system", {}))
        values = {
            "PROGRAM": _j(program.to_json()),
            "START_STATE": _j(state_json(start)),
            "FINAL_STATE": _j(state_json(final)),
            "TRACE": _j(trace),
            "CHECK": _j(check),
        }
        extra = {"obs": final, "check": check, "program": program.to_json()}
        for purpose, request in (
            ("critic", "critic_request"),
            ("critic_json_repair", "critic_json_repair"),
        ):
            user = t.render("critic_user", {**values, "REQUEST": t.render(request, {})})
            reply = await self.call(
                system, user, CallMeta(purpose, "voyager_critic", self.fields(final), extra)
            )
            doc = reply.doc or {}
            if isinstance(doc.get("success"), bool):
                return {"success": doc["success"], "critique": str(doc.get("critique", ""))[:400]}
        return None
