"""The construction loop: a designer proposes, the compiler reports, an independent judge audits.

Each round the designer receives the user constraints, the catalog, the current
spec, its static report and the previous judge report (verdict ``not_run`` when
there is none) and returns a complete replacement spec. The candidate gets a
static report; the judge, which sees only the candidate spec, that report and
(for rule suites) the suites already accepted, returns a verdict. A candidate is
accepted when it compiled, its static report has no hard failure, and the judge
says ``accept`` with no hard failure, every selected task solvable and (rule
suites) the candidate distinct from the accepted suites. The deterministic controls then run on it; only a
candidate that passes them is usable. Failed controls go back to the designer as
hard failures in the static report. Unusable replies get one repair call each.
Nothing in the loop ever sees an agent episode.

Static-only runs skip both models: a seeded sampler proposes specs and only the
compiler and the controls judge them.

Every step is appended to the design log (JSONL): a ``start`` record, one
``round`` (or ``attempt``) record each with prompt hashes, replies, the static
report and the verdict, and an ``end`` record.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirrorcraft.agents.llm.templates import load_template
from mirrorcraft.design.contracts import JudgeVerdict, canonical, read_designer, read_judge
from mirrorcraft.design.conversation import Conversation, Usage
from mirrorcraft.design.kinds import BiomeKind, Candidate, ControlsResult, MirrorKind
from mirrorcraft.design.report import not_run
from mirrorcraft.llm.base import (
    CallMeta,
    LLMClient,
    LLMConfigError,
    LLMUnavailable,
    Message,
    Sampling,
)

Kind = MirrorKind | BiomeKind
Watch = Callable[[str, bool], None]
"""Told what the loop is doing: ``(note, step_done)``; ``step_done`` closes a round or attempt."""


def quiet(note: str, step_done: bool) -> None:
    return None


DESIGNER_SAMPLING = Sampling(temperature=0.7, max_tokens=8192)
"""The paper's temperature; more tokens than an agent call, as a full spec is long."""
JUDGE_SAMPLING = Sampling(temperature=0.7, max_tokens=4096)
WHY_CHARS = 300


@dataclass(frozen=True)
class DesignSettings:
    rounds: int = 4
    constraints: str = ""
    seed: int = 0
    max_attempts: int = 200
    designer_sampling: Sampling = DESIGNER_SAMPLING
    judge_sampling: Sampling = JUDGE_SAMPLING


@dataclass
class DesignOutcome:
    accepted: bool
    message: str
    candidate: Candidate | None = None
    controls: ControlsResult | None = None
    rounds_used: int = 0


class DesignLog:
    """Appends one JSON object per line and flushes, so an interrupted run keeps its log.

    A run into a folder that already has a log appends to it (each run begins with its
    ``start`` record): the log of the run that wrote an accepted spec is never lost.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fh = path.open("a", encoding="utf-8")
        if self._fh.tell() > 0:
            with path.open("rb") as fh:
                fh.seek(-1, 2)
                if fh.read(1) != b"\n":
                    self._fh.write("\n")  # a killed run's last line stays apart from ours

    def write(self, record: dict[str, Any]) -> None:
        self._fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def _reasons(cand: Candidate, verdict: JudgeVerdict | None, tasks: Sequence[str]) -> list[str]:
    out = []
    if not cand.report.ok:
        out.append(f"static report: {len(cand.report.hard_failures)} hard failure(s)")
    if verdict is None:
        out.append("no usable judge verdict")
        return out
    if verdict.verdict != "accept":
        out.append(f"judge verdict {verdict.verdict}")
    if verdict.hard_failures:
        out.append(f"judge lists {len(verdict.hard_failures)} hard failure(s)")
    unsolvable = verdict.unsolvable(tasks)
    if unsolvable:
        out.append(f"judge deems {', '.join(unsolvable)} unsolvable")
    if verdict.repeats_accepted():
        closest = (verdict.diversity or {}).get("closest_suite", "an accepted suite")
        out.append(f"judge finds it not distinct from {closest}")
    return out


async def run_controls_for(kind: Kind, cand: Candidate) -> ControlsResult:
    # The controls run episodes with asyncio.run of their own: keep them off this event loop.
    return await asyncio.to_thread(kind.controls, cand)


@dataclass
class Round:
    """What one round leaves for the next: the state the designer sees, or an acceptance."""

    outcome: str
    spec: dict[str, Any]
    report: dict[str, Any]
    judge: dict[str, Any]
    accepted: Candidate | None = None
    controls: ControlsResult | None = None
    why: str = ""
    """Why the round did not accept, in one line (for the run's closing message)."""


class Designer:
    """Runs rounds for one kind with one client; ``state`` is what the next designer call sees."""

    def __init__(
        self,
        kind: Kind,
        client: LLMClient,
        settings: DesignSettings,
        log: DesignLog,
        watch: Watch = quiet,
    ):
        self.kind = kind
        self.watch = watch
        self.settings = settings
        self.log = log
        self.usage = Usage()
        self.talk = Conversation(client, self.usage)
        self.model = client.model
        self.tmpl = load_template(kind.template)
        self.catalog = canonical(kind.catalog())
        self.tasks = list(kind.tasks)

    def _designer_messages(self, rnd: int, state: Round) -> list[Message]:
        values = {
            "ROUND": str(rnd),
            "ROUNDS": str(self.settings.rounds),
            "TASKS": ", ".join(self.tasks),
            "CONSTRAINTS": self.settings.constraints or "none",
            "CATALOG": self.catalog,
            "CURRENT_SPEC": canonical(state.spec),
            "STATIC_REPORT": canonical(state.report),
            "JUDGE_REPORT": canonical(state.judge),
            **self.kind.prompt_values(),
        }
        return [
            Message("system", self.tmpl.render("designer_system", {})),
            Message("user", self.tmpl.render("designer_user", values)),
        ]

    def _judge_messages(self, spec: dict[str, Any], report: dict[str, Any]) -> list[Message]:
        values = {
            "TASKS": ", ".join(self.tasks),
            "SPEC": canonical(spec),
            "STATIC_REPORT": canonical(report),
            **self.kind.judge_values(),
        }
        return [
            Message("system", self.tmpl.render("judge_system", {})),
            Message("user", self.tmpl.render("judge_user", values)),
        ]

    def _repair(self, section: str) -> Callable[[str], str]:
        return lambda problem: self.tmpl.render(section, {"PROBLEM": problem})

    async def round(self, rnd: int, state: Round) -> Round:
        kind, name = self.kind, self.kind.name
        record: dict[str, Any] = {"event": "round", "round": rnd}
        meta = CallMeta(
            "design",
            "design_reply",
            extra={
                "kind": name,
                "round": rnd,
                "tasks": self.tasks,
                "spec": state.spec,
                "static_report": state.report,
                "judge_report": state.judge,
            },
        )
        self.watch(f"round {rnd}: designer", False)
        reply, ex = await self.talk.ask(
            self._designer_messages(rnd, state),
            self.settings.designer_sampling,
            meta,
            lambda text: read_designer(text, name, kind.check_spec),
            self._repair("designer_repair"),
        )
        record["designer"] = ex.to_json()
        if reply is None:
            why = f"the judge did not run: the designer's reply could not be used ({ex.problem})"
            return self._finish(
                record,
                "designer_reply_unusable",
                Round("", state.spec, state.report, not_run(name, why)),
                f"the designer's reply could not be used: {ex.problem}",
            )
        record["designer"].update(
            summary=reply.design_summary, resolved_feedback=list(reply.resolved_feedback)
        )
        cand = kind.evaluate(reply.spec)
        report = cand.report.to_json()
        record.update(spec=reply.spec, static_report=report)
        if not cand.report.compiled:
            why = "the judge did not run: the candidate does not compile"
            errors = report.get("validation_errors") or ["it does not compile"]
            return self._finish(
                record,
                "invalid_spec",
                Round("", reply.spec, report, not_run(name, why)),
                f"the candidate is invalid: {errors[0]}",
            )
        jmeta = CallMeta(
            "judge",
            "judge_verdict",
            extra={
                "kind": name,
                "round": rnd,
                "tasks": self.tasks,
                "spec": reply.spec,
                "static_report": report,
            },
        )
        self.watch(f"round {rnd}: judge", False)
        verdict, jex = await self.talk.ask(
            self._judge_messages(reply.spec, report),
            self.settings.judge_sampling,
            jmeta,
            lambda text: read_judge(text, name, self.tasks),
            self._repair("judge_repair"),
        )
        record["judge"] = jex.to_json()
        judged = (
            verdict.model_dump(mode="json")
            if verdict is not None
            else not_run(name, f"the judge's reply could not be used ({jex.problem})")
        )
        record["verdict"] = judged
        reasons = _reasons(cand, verdict, self.tasks)
        if reasons:
            record["reasons"] = reasons
            why = "; ".join(reasons)
            if cand.report.hard_failures:
                first = cand.report.hard_failures[0]
                why += f"; first hard failure: {first.code}: {first.message}"
            return self._finish(record, "not_accepted", Round("", reply.spec, report, judged), why)
        self.watch(f"round {rnd}: controls", False)
        controls = await run_controls_for(kind, cand)
        record["controls"] = controls.summary
        if controls.passed:
            return self._finish(
                record, "accepted", Round("", reply.spec, report, judged, cand, controls)
            )
        for failure in controls.failures[:20]:
            cand.report.fail("controls_failed", failure)
        return self._finish(
            record,
            "controls_failed",
            Round("", reply.spec, cand.report.to_json(), judged, None, controls),
            f"{len(controls.failures)} control failure(s), first: {controls.failures[0]}"
            if controls.failures
            else "the controls failed",
        )

    def _finish(self, record: dict[str, Any], outcome: str, state: Round, why: str = "") -> Round:
        record["outcome"] = outcome
        self.log.write(record)
        self.watch(f"round {record['round']}: {outcome}", True)
        state.outcome = outcome
        state.why = why if len(why) <= WHY_CHARS else why[: WHY_CHARS - 3] + "..."
        return state

    async def run(self, initial_spec: dict[str, Any]) -> DesignOutcome:
        kind = self.kind
        state = Round(
            "start",
            initial_spec,
            kind.evaluate(initial_spec).report.to_json(),
            not_run(kind.name, "no candidate has been judged yet"),
        )
        self.log.write(
            {
                "event": "start",
                "kind": kind.name,
                "mode": "llm",
                "model": self.model,
                "tasks": self.tasks,
                "rounds": self.settings.rounds,
                "constraints": self.settings.constraints,
                "catalog_hash": hashlib.sha256(self.catalog.encode()).hexdigest()[:16],
                "template_hash": self.tmpl.digest,
                "initial_spec": state.spec,
                "initial_static_report": state.report,
            }
        )
        outcome = DesignOutcome(False, "no round ran")
        try:
            for rnd in range(1, self.settings.rounds + 1):
                state = await self.round(rnd, state)
                if state.accepted is not None:
                    outcome = DesignOutcome(
                        True, f"accepted in round {rnd}", state.accepted, state.controls, rnd
                    )
                    break
            else:
                outcome = DesignOutcome(
                    False,
                    f"no candidate was accepted within {self.settings.rounds} round(s); "
                    f"the last round ended with {state.outcome}"
                    + (f" ({state.why})" if state.why else ""),
                    None,
                    state.controls,
                    self.settings.rounds,
                )
        except LLMUnavailable as exc:
            hint = (
                "; a slow model needs a longer call timeout (--timeout)"
                if exc.kind == "timeout"
                else ""
            )
            outcome = DesignOutcome(False, f"the model endpoint failed: {exc}{hint}")
        except LLMConfigError as exc:
            # Refused credentials, an unknown model, a rejected request: no later round can
            # succeed. The log still gets its end record; the caller reports the setting.
            self._end(DesignOutcome(False, f"the model endpoint refused the setup: {exc}"))
            raise
        self._end(outcome)
        return outcome

    def _end(self, outcome: DesignOutcome) -> None:
        self.log.write(
            {
                "event": "end",
                "accepted": outcome.accepted,
                "message": outcome.message,
                "usage": self.usage.to_json(),
            }
        )


def static_design(
    kind: Kind, settings: DesignSettings, log: DesignLog, watch: Watch = quiet
) -> DesignOutcome:
    """Seeded sampler proposals, audited by the compiler only; the first good one is kept."""
    sampler = kind.sampler(settings.seed)
    log.write(
        {
            "event": "start",
            "kind": kind.name,
            "mode": "static",
            "tasks": list(kind.tasks),
            "seed": settings.seed,
            "max_attempts": settings.max_attempts,
        }
    )
    outcome = DesignOutcome(
        False, f"no sampled candidate passed within {settings.max_attempts} attempt(s)"
    )
    for attempt in range(1, settings.max_attempts + 1):
        spec = sampler.propose(attempt)
        cand = kind.evaluate(spec, fail_fast=True)
        record: dict[str, Any] = {
            "event": "attempt",
            "attempt": attempt,
            "spec": spec,
            "static_report": cand.report.to_json(),
        }
        if not kind.static_accept(cand):
            record["outcome"] = "rejected"
            log.write(record)
            watch(f"attempt {attempt}: rejected", True)
            continue
        watch(f"attempt {attempt}: controls", False)
        controls = kind.controls(cand)
        record["controls"] = controls.summary
        record["outcome"] = "accepted" if controls.passed else "controls_failed"
        log.write(record)
        watch(f"attempt {attempt}: {record['outcome']}", True)
        if controls.passed:
            outcome = DesignOutcome(True, f"accepted at attempt {attempt}", cand, controls, attempt)
            break
    log.write({"event": "end", "accepted": outcome.accepted, "message": outcome.message})
    return outcome
