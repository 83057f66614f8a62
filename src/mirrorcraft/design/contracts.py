"""The designer's and the judge's reply contracts, validated with pydantic.

Designer: ``{schema_version, kind, design_summary, resolved_feedback: [...], spec}``
where ``spec`` is a complete replacement specification of the kind.
Judge: ``{schema_version, kind, verdict: accept|revise|reject, confidence,
summary, hard_failures, warnings, task_assessments: [{task, solvable, route,
principal_risk}], change_assessments, revision_instructions: [{path, action,
detail, value?}]}``. ``schema_version`` is ``"1.0"`` (the number 1 is accepted).

``read_designer`` / ``read_judge`` turn reply text into a validated value or a
one-line problem that the repair prompt can quote.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mirrorcraft.agents.llm.replies import first_json_object

SCHEMA_VERSION = "1.0"
Kind = Literal["mirror", "biome"]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("schema_version", mode="before", check_fields=False)
    @classmethod
    def _version(cls, value: object) -> object:
        if value in (1, 1.0, "1", "1.0"):
            return SCHEMA_VERSION
        return value


def _as_texts(value: object) -> object:
    """Lists of notes may come as objects; keep them, as canonical JSON text."""
    if isinstance(value, list | tuple):
        return [v if isinstance(v, str) else canonical(v) for v in value]
    return value


class DesignerReply(_Reply):
    schema_version: Literal["1.0"]
    kind: Kind
    design_summary: str = Field(max_length=4000)
    resolved_feedback: tuple[str, ...] = ()
    spec: dict[str, Any]

    _texts = field_validator("resolved_feedback", mode="before")(_as_texts)


class TaskAssessment(_Reply):
    task: str
    solvable: bool
    route: tuple[str, ...] = ()
    principal_risk: str = ""


class RevisionInstruction(_Reply):
    path: str = Field(description="where in the spec, e.g. changes[1].drops or terrain.relief")
    action: Literal["set", "add", "remove", "replace"]
    detail: str
    value: Any = None


class JudgeVerdict(_Reply):
    schema_version: Literal["1.0"]
    kind: Kind
    verdict: Literal["accept", "revise", "reject"]
    confidence: float = Field(ge=0.0, le=1.0)
    summary: str
    hard_failures: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    task_assessments: tuple[TaskAssessment, ...]
    change_assessments: tuple[dict[str, Any], ...] = ()
    diversity: dict[str, Any] | None = None
    """Rule suites: the closest accepted suite and whether the candidate is distinct from it."""
    revision_instructions: tuple[RevisionInstruction, ...] = ()

    _texts = field_validator("hard_failures", "warnings", mode="before")(_as_texts)

    def repeats_accepted(self) -> bool:
        """The judge found the candidate not distinct from an accepted suite."""
        return isinstance(self.diversity, dict) and self.diversity.get("distinct") is False

    def unsolvable(self, tasks: Sequence[str]) -> list[str]:
        said = {a.task: a.solvable for a in self.task_assessments}
        return [t for t in tasks if not said.get(t, False)]


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "reply"
    return f"field {where!r}: {first['msg']}"


def _parse(text: str) -> tuple[dict[str, Any] | None, str]:
    doc = first_json_object(text)
    if doc is None:
        return None, "the reply holds no JSON object"
    return doc, ""


def read_designer(
    text: str, kind: str, check_spec: Callable[[dict[str, Any]], str]
) -> tuple[DesignerReply | None, str]:
    """(reply, "") or (None, problem). ``check_spec`` returns a schema problem or ""."""
    doc, problem = _parse(text)
    if doc is None:
        return None, problem
    try:
        reply = DesignerReply.model_validate(doc)
    except ValidationError as exc:
        return None, _problem(exc)
    if reply.kind != kind:
        return None, f"kind must be {kind!r}"
    spec_problem = check_spec(reply.spec)
    if spec_problem:
        return None, f"spec: {spec_problem}"
    return reply, ""


def read_judge(text: str, kind: str, tasks: Sequence[str]) -> tuple[JudgeVerdict | None, str]:
    doc, problem = _parse(text)
    if doc is None:
        return None, problem
    try:
        verdict = JudgeVerdict.model_validate(doc)
    except ValidationError as exc:
        return None, _problem(exc)
    if verdict.kind != kind:
        return None, f"kind must be {kind!r}"
    assessed = {a.task for a in verdict.task_assessments}
    missing = [t for t in tasks if t not in assessed]
    if missing:
        return None, f"task_assessments must cover every selected task (missing {missing})"
    return verdict, ""


def canonical(doc: object) -> str:
    """Stable JSON text for prompts and hashes."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
