"""The remote agent protocol, version 1: one pydantic model per message, the single source of
its JSON Schemas.

Per episode the runner POSTs, as JSON, to the agent's URL:

* ``<url>/reset``: the episode starts (``ResetRequest``); the agent answers ``ResetReply``;
* ``<url>/act``: once per action (``ActRequest``: the observation as JSON, the shared
  observation block as text, the budget left, the last action's result); the agent
  answers ``ActReply`` with one action, or ``"action": null`` for "no executable action";
* ``<url>/close``: the episode is over (``CloseRequest``); the reply body is ignored.

The schema files under ``schemas/`` are generated from these models
(``python -m mirrorcraft.agents.remote.protocol --write``; a test checks they match), so
the protocol is written once. Replies are validated with the models: an unknown key, a
wrong type or a missing field makes the reply malformed, which is the agent's outcome
(``agent_error``), never an infrastructure fault.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL: Final = "mirrorcraft-remote-agent/1"
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# -- the observation, as Observation.to_json writes it ------------------------------------------


class Position(_Strict):
    x: int
    y: int
    z: int


class Survival(_Strict):
    health: float
    food: int
    alive: bool


class Experience(_Strict):
    level: int


class Milestone(_Strict):
    id: str = Field(description="the advancement, e.g. story/mine_stone")
    title: str
    description: str
    value: int = Field(description="the Score reaching it gives")
    done: bool


class TaskState(_Strict):
    id: str
    title: str
    milestones: list[Milestone]
    next_milestone: str | None
    score: int


class NearbyBlock(_Strict):
    block: str
    nearest_distance: float


class NearbyDrop(_Strict):
    item: str
    count: int
    nearest_distance: float


class NearbyEntity(_Strict):
    type: str
    count: int
    nearest_distance: float


class EnchantedItem(_Strict):
    item: str
    count: int
    enchantments: dict[str, int]


class Durability(_Strict):
    item: str
    remaining: int
    max: int
    enchantments: dict[str, int] | None = None


class ActionResultDoc(_Strict):
    """What the last action did: ``ok``, a machine ``reason`` when it failed (e.g.
    ``needs_tool``), what it produced and consumed, and the inventory change."""

    skill: str
    args: dict[str, Any]
    ok: bool
    reason: str
    message: str
    produced: dict[str, int]
    consumed: dict[str, int]
    inventory_delta: dict[str, int]
    details: dict[str, Any]


class BudgetDoc(_Strict):
    total: int
    used: int
    remaining: int


class ObservationDoc(_Strict):
    """Everything the agent observes (never a rule, a suite or a twin)."""

    step: int = Field(description="actions taken so far")
    inventory: dict[str, int]
    enchanted_items: list[EnchantedItem]
    durability: list[Durability]
    equipped: dict[str, str | None]
    position: Position
    biome: str
    survival: Survival
    experience: Experience
    task: TaskState
    completed_advancements: list[str]
    nearby_blocks: list[NearbyBlock]
    nearby_drops: list[NearbyDrop]
    nearby_entities: list[NearbyEntity]
    facilities: list[NearbyBlock]
    last_result: ActionResultDoc | None
    budget: BudgetDoc
    skills: list[str]


# -- messages -------------------------------------------------------------------------------------


class TaskView(_Strict):
    id: str
    title: str


class ResetRequest(_Strict):
    """POST <url>/reset: a new episode starts."""

    protocol: Literal["mirrorcraft-remote-agent/1"] = PROTOCOL
    episode: str = Field(
        description="an opaque token naming this attempt of the episode in the later calls "
        "(not the record's episode id, which could be traced back to the rule set)"
    )
    task: TaskView
    budget: int = Field(description="actions the episode may take")
    seed: int = Field(description="the episode's seed (the same in a Vanilla/Mirror pair)")
    rule_sheet: str | None = Field(
        description="the rules, only in the disclosed condition; null otherwise"
    )
    options: dict[str, Any] = Field(description="the spec's options for this agent")


class AgentInfo(_Strict):
    name: str = Field("", max_length=200)
    version: str = Field("", max_length=100)


class ResetReply(_Strict):
    """The answer to reset: any JSON object of these optional fields (``{}`` will do)."""

    protocol: str | None = Field(
        None, description="if given, must be the protocol the request named"
    )
    agent: AgentInfo | None = Field(
        None, description="the agent's name and version, stored in each episode record"
    )


class ActRequest(_Strict):
    """POST <url>/act: choose the next action."""

    protocol: Literal["mirrorcraft-remote-agent/1"] = PROTOCOL
    episode: str
    step: int = Field(description="actions taken so far (the action asked for is step + 1)")
    observation: ObservationDoc
    text: str | None = Field(
        description="the observation as text: the shared observation block the LLM "
        "configurations read (option text: block), the compact form (text: compact), "
        "or null (text: none)"
    )
    budget_left: int
    last_result: ActionResultDoc | None = Field(
        description="the result of the previous action (null before the first)"
    )


class ActionDoc(_Strict):
    skill: str = Field(max_length=64, description="one of the thirteen skills")
    args: dict[str, Any] = Field(default_factory=dict)


class UsageDoc(_Strict):
    """Model calls the agent made for this action (counted in the record's tokens and cost)."""

    calls: int = Field(0, ge=0)
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float | None = Field(0.0, ge=0, allow_inf_nan=False, description="null: unknown")


class ActReply(_Strict):
    """The answer to act: one action, or null when the agent has no executable action (the
    episode then ends with termination no_action)."""

    action: ActionDoc | None
    thought: str = Field("", max_length=20_000, description="kept in the step trace")
    usage: UsageDoc = Field(default_factory=UsageDoc)


class CloseRequest(_Strict):
    """POST <url>/close: the episode is over (the reply body is ignored)."""

    protocol: Literal["mirrorcraft-remote-agent/1"] = PROTOCOL
    episode: str
    step: int
    observation: ObservationDoc


MESSAGES: dict[str, type[BaseModel]] = {
    "reset_request": ResetRequest,
    "reset_reply": ResetReply,
    "act_request": ActRequest,
    "act_reply": ActReply,
    "close_request": CloseRequest,
}


def schema_of(name: str) -> dict[str, Any]:
    """The JSON Schema of one message, as shipped in ``schemas/<name>.json``."""
    doc = MESSAGES[name].model_json_schema()
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": f"https://mirrorcraft.invalid/remote-agent/1/{name}.json",
        **doc,
    }


def schema_text(name: str) -> str:
    return json.dumps(schema_of(name), indent=2, sort_keys=True) + "\n"


def write_schemas(folder: Path = SCHEMA_DIR) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in MESSAGES:
        path = folder / f"{name}.json"
        path.write_text(schema_text(name), encoding="utf-8")
        out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    """``--write`` regenerates the schema files; ``--check`` fails if they are stale."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        for path in write_schemas():
            print(path)
        return 0
    if args == ["--check"]:
        stale = [
            n
            for n in MESSAGES
            if not (SCHEMA_DIR / f"{n}.json").is_file()
            or (SCHEMA_DIR / f"{n}.json").read_text(encoding="utf-8") != schema_text(n)
        ]
        for name in stale:
            print(f"stale: {SCHEMA_DIR / name}.json")
        return 1 if stale else 0
    print("usage: python -m mirrorcraft.agents.remote.protocol --write | --check")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
