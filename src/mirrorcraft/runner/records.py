"""Episode and step records: the schema every result is stored and exchanged in.

One ``EpisodeRecord`` per episode (its full condition, outcome, hidden encounter
log, cost and provenance) and one ``StepRecord`` per action (the trace). JSONL
files of ``EpisodeRecord.to_json()`` objects are the documented exchange format
(``docs/records.md``); the results database stores the same JSON.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, NamedTuple

SCHEMA_VERSION = 1

TERMINATIONS = ("success", "budget", "death", "no_action", "agent_error", "call_budget")
"""Evaluation outcomes. Infrastructure faults are not outcomes: they are rerun.
``call_budget``: the agent asked for a model call beyond the episode's call budget."""


@dataclass
class EncounterRecord:
    step: int
    """1-based index of the action that triggered the changed rule."""
    rule: str
    kind: str
    signature: list[str]
    vanilla: Any = None
    actual: Any = None


@dataclass
class EpisodeRecord:
    episode_id: str
    experiment: str
    world: str
    biome: str
    rules: str
    """"vanilla", a suite id (M01..M06) or a user rule-set id."""
    task: str
    agent: str
    """Agent configuration, e.g. "react", "vanilla-planner"."""
    model: str
    """Model name, or "none" for agents without a model."""
    disclosure: str
    """"hidden" or "disclosed" (the rule sheet was given to the agent)."""
    budget: int
    repetition: int
    seed: int
    score: int
    success: bool
    milestones: dict[str, int]
    """Advancement id -> 1-based action index at which it was reached."""
    termination: str
    actions_used: int
    score_trace: list[int]
    """Score after each action (length = actions_used)."""
    signatures: list[list[str]]
    """Semantic signature of each action, in order (see the paper's section 3.6)."""
    encounters: list[EncounterRecord] = field(default_factory=list)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0
    """Model calls answered from the response cache (counted in model_calls, not paid again)."""
    estimated_calls: int = 0
    """Model calls whose token counts were estimated from text (the endpoint reported none);
    the tokens and cost of the episode are then partly estimates."""
    failed_attempts: dict[str, int] | None = None
    """Model-call attempts that failed and were retried before a reply came, by kind
    (``rate_limit``, ``server_error``, ``timeout``, ``connection``, ``malformed_response``):
    not calls, not in the tokens or the cost. None: not recorded (a record written before
    they were counted, or calls an agent reported itself); left out of the JSON then."""
    unusable_replies: int | None = None
    """Calls (counted in ``model_calls``) whose reply the agent could not use. None: not
    recorded, as for ``failed_attempts``."""
    cost_usd: float | None = 0.0
    """Dollar cost; None when the model's price is unknown."""
    software_version: str = ""
    ruleset_fingerprint: str = ""
    vanilla_fingerprint: str = ""
    world_fingerprint: str = ""
    spec_hash: str = ""
    body_fingerprint: str = ""
    """What the body behaved by (``body.config.body_fingerprint``): the backend, the embedded
    simulator's behaviour version, the body settings and the skill definitions. Empty in
    records written before it was stamped."""
    task_fingerprint: str = ""
    """The task's definition: title, milestones and their values (``evaluator.tasks
    .task_fingerprint``; the budget is part of the condition). Empty in older records."""
    template_hashes: dict[str, str] = field(default_factory=dict)
    wall_seconds: float = 0.0
    agent_error: str = ""
    """What went wrong inside the agent: the error that ended the episode (termination
    agent_error; ``in start: ...`` when it came before the first action), or one its
    ``finish`` raised after the episode had ended (``in finish: ...``; the termination then
    stays what the episode's actions made it)."""
    call_budget: int | None = None
    """The cap on model calls per episode the spec set (None: no cap)."""
    agent_origin: dict[str, str] = field(default_factory=dict)
    """Where a user agent came from: ``kind`` (import, entry_point, remote), ``ref`` (import
    path or URL), ``package``, ``version``, ``entry_point``, ``options_hash``. Empty for the
    packaged agents (their provenance is ``software_version``)."""
    memory: dict[str, Any] = field(default_factory=dict)
    """MineEvolve and the baselines: the episode's figures (calls by purpose, memory calls,
    plans, retrieval, store size by kind); in accumulation runs also phase, variant,
    checkpoint, the store and its version (see docs/mineevolve.md). Empty otherwise."""
    rules_title: str | None = None
    """What a user's rule set changes, for the report's "Rule change" column: its manifest's
    name, its datapack's description, or the resources it changes from vanilla
    (``backends.rulesets.rules_title``). None for vanilla and the packaged suites (their
    names are read from the packaged manifests), and left out of the JSON then. Never shown
    to the agent."""
    schema_version: int = SCHEMA_VERSION

    @property
    def is_mirror(self) -> bool:
        return self.rules != "vanilla"

    def prompt_hashes(self) -> dict[str, str]:
        """``template_hashes`` with the prompt-building version made explicit: a record that
        names our observation template but no version was written before the version was
        kept, by prompts built the first way (``agents.llm.templates.PROMPT_VERSION`` 1)."""
        hashes = self.template_hashes
        if "observation" in hashes and "prompt_version" not in hashes:
            return {**hashes, "prompt_version": "1"}
        return hashes

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        for name in UNRECORDED_WHEN_NONE:
            if doc[name] is None:
                del doc[name]
        doc["is_mirror"] = self.is_mirror
        return doc

    def json_text(self) -> str:
        """The text the store keeps: ``json.dumps(self.to_json(), sort_keys=True)``, made
        without ``asdict``'s deep copy (``json_default`` turns the encounters into the
        same dicts)."""
        doc = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for name in UNRECORDED_WHEN_NONE:
            if doc[name] is None:
                del doc[name]
        doc["is_mirror"] = self.is_mirror
        return json.dumps(doc, sort_keys=True, default=json_default)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> EpisodeRecord:
        data = dict(doc)
        data.pop("is_mirror", None)
        data["encounters"] = [EncounterRecord(**e) for e in data.get("encounters", [])]
        known = set(cls.__dataclass_fields__)
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown episode record fields: {sorted(unknown)}")
        return cls(**data)


UNRECORDED_WHEN_NONE = ("failed_attempts", "unusable_replies", "rules_title")
"""Fields added after records were first stored: absent from a record (None here) means "not
recorded", which is not 0; they are left out of the JSON then, so such a record reads as it
always did."""


@dataclass
class StepRecord:
    episode_id: str
    step: int
    action: Any
    """The action as the agent sent it (may be malformed)."""
    thought: str
    result: dict[str, Any]
    inventory: dict[str, int]
    position: list[int]
    score: int
    new_milestones: list[str]
    encounter_rules: list[str]
    """Rules whose changed outcome this action triggered (hidden; for analysis and the viewer)."""

    def to_json(self) -> dict[str, Any]:
        """The fields as a dict that shares their values. They are plain JSON data, so the
        deep copy ``asdict`` would make (most of a grid's writing time) is left out; write
        it with ``json.dumps(..., default=json_default)``, which turns a dataclass inside
        a value (an agent may send one as its action) into what ``asdict`` gives."""
        return {name: getattr(self, name) for name in _STEP_FIELDS}


_STEP_FIELDS = tuple(StepRecord.__dataclass_fields__)


class EncodedStep(NamedTuple):
    """A step as the store writes it, its JSON text made where the episode ran: a worker
    sends these instead of ``StepRecord`` objects, so the parent process (which competes
    with the workers for the cores) neither unpickles nor encodes the trace."""

    episode_id: str
    step: int
    text: str


def encode_step(step: StepRecord | EncodedStep) -> EncodedStep:
    """The step's JSON text. What the agent sent (its action and thought) is kept as it
    was; when that is not JSON (a set, an object, a circular structure, NaN or an infinity,
    which JSON has no number for and the readers refuse), its ``repr`` is stored in its
    place, under ``unencodable_action`` / as text, and the run goes on."""
    if isinstance(step, EncodedStep):
        return step
    doc = step.to_json()
    try:
        text = json.dumps(doc, sort_keys=True, default=json_default, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        doc["action"] = {"unencodable_action": _shown(step.action)}
        doc["thought"] = step.thought if isinstance(step.thought, str) else _shown(step.thought)
        text = json.dumps(doc, sort_keys=True, default=json_default)
    return EncodedStep(step.episode_id, step.step, text)


def _shown(value: Any) -> str:
    try:
        return repr(value)[:2000]
    except Exception as exc:  # a repr that fails or recurses: say so instead
        return f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"


def json_default(value: Any) -> Any:
    """``json.dumps``' ``default`` for records: a dataclass (an encounter record; an agent
    may send one as its action) becomes a dict of its fields. The encoder then comes back
    here for any dataclass inside them, so the text is the one ``asdict`` would give,
    without its deep copy of every value (most of an episode record's encoding time)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
