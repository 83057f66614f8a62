"""Experiment specs (YAML, validated, unknown keys rejected) and their expansion into episodes.

An episode's id is derived from its condition (world, rules, task, agent, model,
disclosure, budget, and the agent's options when it has any) and repetition, so
reruns and resumes address the same episode. Its seed is derived from the condition *without* the rules, so a
Vanilla episode and its Mirror twins share world, task, agent, model, budget and
seed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mirrorcraft.agents.registry import is_builtin, needs_model
from mirrorcraft.evaluator.tasks import (
    MAX_BUDGET,
    UnknownTaskError,
    expand_budgets,
    expand_task_selectors,
    get_task,
)
from mirrorcraft.redact import redact_url
from mirrorcraft.runner.execution_spec import ExecutionSpec
from mirrorcraft.safeload import DataError, load_yaml_file


class SpecError(Exception):
    """An experiment spec is unreadable or invalid; the message names the file and field."""


class ModelSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    base_url: str | None = None
    api_key_env: str | None = Field(
        None, description="name of the environment variable holding the key"
    )
    client: dict[str, Any] = Field(
        default_factory=dict,
        description="client settings, e.g. timeout_s, max_retries, concurrency, reasoning_effort, extra_body",
    )

    def redacted(self) -> ModelSpec:
        """This model with any key in its base URL (user-info, ?api_key=) masked."""
        if self.base_url is None or redact_url(self.base_url) == self.base_url:
            return self
        return self.model_copy(update={"base_url": redact_url(self.base_url)})


TRANSPORT_SETTINGS = frozenset(
    {
        "timeout_s",
        "max_retries",
        "concurrency",
        "backoff_base_s",
        "backoff_max_s",
        "retry_after_max_s",
        "seed",
        "prompt_budget_tokens",
    }
)
"""Model client settings that change how calls are made, never what they return; editing
them keeps the spec hash (so a run can be resumed with a longer timeout)."""

AGENT_LABEL = r"^[A-Za-z0-9][A-Za-z0-9_.:@/\[\]+-]{0,99}$"


class AgentEntry(BaseModel):
    """An agent with options: ``{name: "mypkg.agents:MyAgent", options: {...}, label: ...}``.

    ``name`` is a packaged configuration, an import path, an installed entry point or an
    ``http://`` URL; ``options`` are checked by the agent and are part of the condition (a
    hash of them enters the episode id); ``label`` is the id the records and tables use
    (default: the name), needed when one agent runs with several sets of options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=500)
    options: dict[str, Any] = Field(default_factory=dict)
    label: str | None = Field(None, pattern=AGENT_LABEL)

    @property
    def id(self) -> str:
        return self.label or self.name

    @model_validator(mode="after")
    def _label_is_not_another_agent(self) -> AgentEntry:
        """A label that names a packaged configuration would pass one agent off as another
        in the records: labelled ``oracle`` it becomes the control left out of every table,
        labelled ``react`` it is the configuration told the rules."""
        if self.label is not None and self.label != self.name and is_builtin(self.label):
            raise ValueError(
                f"label {self.label!r} of agent {self.name!r} is the name of a packaged agent; "
                "records and tables would take one for the other: choose another label"
            )
        return self


def repeated(values: Iterable[str]) -> str | None:
    """The first value that occurs a second time, or None."""
    seen: set[str] = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def unique_model_names(models: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
    """``models`` if no name occurs twice (episodes are keyed by the model's name: two
    entries of one name would share them); a pydantic validator's ValueError otherwise."""
    if twice := repeated(m.name for m in models):
        raise ValueError(
            f"model {twice!r} is listed twice; episodes are keyed by the model's name, "
            "so give each entry its own"
        )
    return models


def runner_options(options: dict[str, Any]) -> dict[str, Any]:
    """Agent options without the ``client`` block (how a remote agent is reached, never what
    it is shown): the part that is hashed into the condition."""
    return {k: v for k, v in options.items() if k != "client"}


def identity_json(
    model: BaseModel,
    leave_out: Iterable[str] = (),
    *,
    endpoints: Mapping[str, str | None] | None = None,
) -> str:
    """The JSON a spec hash is taken over: the spec without ``execution``, the fields named
    in ``leave_out``, the model client's transport settings and each model's ``base_url``
    (specs that set none of them hash as they always did). What a run measures is the model
    it names, not the address it is reached at: a proxy that moves does not orphan a
    folder's results.

    ``endpoints`` gives the hash as earlier versions took it, with the base URLs in: the
    spec's own, or those it maps by model name (see ``run_identity``)."""
    doc = model.model_dump(mode="json", exclude={"execution", *leave_out})
    return json.dumps(identity_doc(doc, endpoints), separators=(",", ":"), ensure_ascii=False)


def identity_doc(
    doc: dict[str, Any], endpoints: Mapping[str, str | None] | None = None
) -> dict[str, Any]:
    """A spec's JSON (``model_dump``) as ``identity_json`` hashes it (changed in place)."""
    for m in doc.get("models") or []:
        if isinstance(m, dict) and isinstance(m.get("client"), dict):
            m["client"] = {k: v for k, v in m["client"].items() if k not in TRANSPORT_SETTINGS}
        if isinstance(m, dict) and "base_url" in m:
            if endpoints is None:
                m["base_url"] = None
            elif m.get("name") in endpoints:
                m["base_url"] = endpoints[m["name"]]
    for a in doc.get("agents") or []:
        if isinstance(a, dict) and isinstance(a.get("options"), dict):
            a["options"] = runner_options(a["options"])
    for v in doc.get("variants") or []:
        if isinstance(v, dict) and v.get("options") == {}:
            del v["options"]  # accumulation variants without options hash as they always did
    return doc


class ExperimentSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: Literal[1] = 1
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    description: str = ""
    backend: Literal["sim", "mineflayer"] = "sim"
    worlds: tuple[str, ...] = Field(min_length=1)
    mirror_worlds: tuple[str, ...] | None = None
    """Worlds whose Mirror twins run (default: every world). The others run Vanilla rules only,
    as in the paper's horizon study and its third-model study."""
    rules: tuple[str, ...] = Field(
        min_length=1, description="vanilla, suite ids or datapack/manifest paths"
    )
    tasks: tuple[str, ...] = Field(
        min_length=1,
        description="task ids or selectors (techtree, progression, group:<name>); stored expanded",
    )
    agents: tuple[str | AgentEntry, ...] = Field(min_length=1)
    """Agent names, or entries with options (``AgentEntry``)."""
    models: tuple[ModelSpec, ...] = Field((ModelSpec(name="none"),), min_length=1)
    disclosure: tuple[Literal["hidden", "disclosed"], ...] = Field(("hidden",), min_length=1)
    disclosed_agents: tuple[str, ...] = ("react",)
    """Agents that are also run with the rule sheet when ``disclosed`` is listed (Mirror only)."""
    repetitions: int = Field(1, ge=1, le=1000)
    budgets: dict[str, int] = {}
    """Per-task budget overrides, e.g. {"diamond": 200} for a horizon study."""
    budget: int | None = Field(
        None, ge=1, le=MAX_BUDGET, strict=True, description="one budget for every task"
    )
    seed: int = 0
    checkpoints: tuple[Annotated[int, Field(ge=1, le=MAX_BUDGET, strict=True)], ...] = ()
    """Action counts at which horizon analyses read cumulative success."""
    call_budget: int | None = Field(
        None,
        ge=1,
        le=1_000_000,
        description="model calls one episode may make, the same for every configuration",
    )
    """The equal evaluation-time call budget: an episode asking for one more call ends
    with termination ``call_budget``. None: no cap."""
    execution: ExecutionSpec = ExecutionSpec()
    """Retries, endpoint pauses, the episode time limit and the preflight (see ExecutionSpec)."""

    @field_validator("tasks")
    @classmethod
    def _tasks_known(cls, tasks: tuple[str, ...]) -> tuple[str, ...]:
        """Expand selectors into task ids (plain ids stay as they are); unknown ones fail."""
        try:
            return expand_task_selectors(tasks)
        except UnknownTaskError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("budgets", mode="before")
    @classmethod
    def _budgets_valid(cls, raw: Any, info: ValidationInfo) -> Any:
        """Positive whole budgets for task ids or selectors of this experiment's tasks."""
        if not isinstance(raw, dict):
            return raw  # the type check words the error
        return expand_budgets(raw, info.data.get("tasks"))

    @field_validator("worlds", "mirror_worlds", "rules", "disclosure")
    @classmethod
    def _listed_once(cls, values: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """An entry listed twice would expand into the same episodes twice (one id, run twice,
        stored once)."""
        if values and (twice := repeated(values)):
            raise ValueError(f"{twice!r} is listed twice")
        return values

    @field_validator("checkpoints")
    @classmethod
    def _checkpoints_ascending(cls, values: tuple[int, ...]) -> tuple[int, ...]:
        if list(values) != sorted(set(values)):
            raise ValueError("checkpoints must be distinct and ascending")
        return values

    @field_validator("models")
    @classmethod
    def _model_names_unique(cls, models: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
        return unique_model_names(models)

    @model_validator(mode="after")
    def _agent_ids_unique(self) -> ExperimentSpec:
        ids = [e.id for e in self.agent_entries]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"agent {twice[0]!r} is listed twice; give each entry its own label")
        return self

    @property
    def agent_entries(self) -> tuple[AgentEntry, ...]:
        return tuple(AgentEntry(name=a) if isinstance(a, str) else a for a in self.agents)

    @property
    def agent_ids(self) -> tuple[str, ...]:
        """The agents as records and tables name them (labels where given)."""
        return tuple(e.id for e in self.agent_entries)

    @model_validator(mode="after")
    def _mirror_worlds_are_worlds(self) -> ExperimentSpec:
        if self.mirror_worlds is not None:
            stray = [w for w in self.mirror_worlds if w not in self.worlds]
            if stray:
                raise ValueError(f"mirror_worlds names {stray[0]!r}, which is not in worlds")
        return self

    @model_validator(mode="after")
    def _asks_for_episodes(self) -> ExperimentSpec:
        """Refuse a spec whose settings cancel out (say, only Mirror suites with
        ``mirror_worlds: []``): it would run nothing and report success. The same
        conditions as ``expand``'s, without building the episodes."""
        told = any(a in self.disclosed_agents for a in self.agent_ids)
        runs = [r for w in self.worlds for r in self.rules if r == "vanilla" or self.runs_mirror(w)]
        if not any(
            d == "hidden" or (r != "vanilla" and told) for r in runs for d in self.disclosure
        ):
            raise ValueError(
                "the spec asks for no episodes: its rules, mirror_worlds, disclosure and "
                "disclosed_agents leave no condition to run"
            )
        return self

    def runs_mirror(self, world: str) -> bool:
        return self.mirror_worlds is None or world in self.mirror_worlds

    def budget_for(self, task: str) -> int:
        if task in self.budgets:
            return self.budgets[task]
        if self.budget is not None:
            return self.budget
        return get_task(task).budget

    def redacted(self) -> ExperimentSpec:
        """The spec as stored and hashed: keys in model URLs masked (the client keeps them)."""
        models = tuple(m.redacted() for m in self.models)
        return self if models == self.models else self.model_copy(update={"models": models})

    def public_dump(self) -> dict[str, Any]:
        """What the results database records of the spec (never a credential)."""
        return self.redacted().model_dump(mode="json")

    @property
    def hash(self) -> str:
        return self.hash_with_endpoints(None)

    def hash_with_endpoints(self, endpoints: Mapping[str, str | None] | None) -> str:
        """``hash``, or with ``endpoints`` the hash older versions took (``identity_json``)."""
        # Fields added later are left out while unset, so older specs keep their hash.
        unset = {k for k in ("mirror_worlds", "call_budget") if getattr(self, k) is None}
        doc = identity_json(self.redacted(), unset, endpoints=endpoints)
        return hashlib.sha256(doc.encode()).hexdigest()[:16]


class HashedSpec(Protocol):
    @property
    def hash(self) -> str: ...

    def hash_with_endpoints(self, endpoints: Mapping[str, str | None] | None) -> str: ...


def run_identity(spec: HashedSpec, meta: Callable[[str], Any]) -> str:
    """The spec hash a run stamps on its episodes in a folder whose ``meta`` table (read by
    ``meta(key)``) describes the spec that ran last.

    It is ``spec.hash`` except in a folder first run by a version that hashed the models'
    base URLs: when the spec differs from the folder's only in those URLs (or not at all),
    the folder's own hash is kept, so its episodes still count as this spec's (resumed, not
    rerun; read by the analysis, not left out as an earlier spec's). ``meta_identity``
    records the endpoint-free hash beside it, so later moves of the endpoint keep it too."""
    now = spec.hash
    stored = meta("spec_hash")
    if not isinstance(stored, str) or not stored or stored == now:
        return now
    if meta(IDENTITY_KEY) == now:
        return stored
    if spec.hash_with_endpoints({}) == stored:
        return stored
    old = meta("spec")
    models = old.get("models") if isinstance(old, dict) else None
    urls = {
        m["name"]: m.get("base_url")
        for m in models or []
        if isinstance(m, dict) and isinstance(m.get("name"), str)
    }
    if urls and spec.hash_with_endpoints(urls) == stored:
        return stored
    return now


IDENTITY_KEY = "spec_identity"
"""``meta`` key holding ``ExperimentSpec.hash`` (endpoint-free) of the spec that ran last."""


@dataclass(frozen=True)
class EpisodeCondition:
    world: str
    rules: str
    task: str
    agent: str
    model: str
    disclosure: str
    budget: int
    repetition: int
    seed: int
    call_budget: int | None = None
    options_hash: str = ""
    """A hash of the agent's options (``agents.plugins.options_hash``); empty without options."""

    @property
    def episode_id(self) -> str:
        parts: list[object] = [
            self.world,
            self.rules,
            self.task,
            self.agent,
            self.model,
            self.disclosure,
            self.budget,
            self.repetition,
            self.seed,
        ]
        if self.call_budget is not None:
            parts.append({"call_budget": self.call_budget})
        if self.options_hash:
            parts.append({"options": self.options_hash})
        key = json.dumps(parts)
        return hashlib.sha256(key.encode()).hexdigest()[:20]


def episode_seed(
    base: int, world: str, task: str, agent: str, model: str, budget: int, repetition: int
) -> int:
    key = json.dumps([base, world, task, agent, model, budget, repetition])
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big")


def expand(spec: ExperimentSpec) -> list[EpisodeCondition]:
    """Every episode of the experiment, in a fixed order (pairs adjacent)."""
    from mirrorcraft.agents.plugins import options_hash

    out = []
    for world in spec.worlds:
        for task in spec.tasks:
            budget = spec.budget_for(task)
            for entry in spec.agent_entries:
                agent = entry.id
                opts = options_hash(runner_options(entry.options))
                for model in spec.models:
                    for rep in range(spec.repetitions):
                        seed = episode_seed(spec.seed, world, task, agent, model.name, budget, rep)
                        for rules in spec.rules:
                            if rules != "vanilla" and not spec.runs_mirror(world):
                                continue
                            for disclosure in spec.disclosure:
                                if disclosure == "disclosed" and (
                                    rules == "vanilla" or agent not in spec.disclosed_agents
                                ):
                                    continue
                                out.append(
                                    EpisodeCondition(
                                        world,
                                        rules,
                                        task,
                                        agent,
                                        model.name,
                                        disclosure,
                                        budget,
                                        rep,
                                        seed,
                                        spec.call_budget if needs_model(entry.name) else None,
                                        opts,
                                    )
                                )
    return out


def load_spec(path: Path) -> ExperimentSpec:
    try:
        raw = load_yaml_file(path)
    except OSError as exc:
        raise SpecError(f"{path}: cannot read ({exc.strerror})") from None
    except DataError as exc:
        raise SpecError(str(exc)) from None
    return parse_spec(raw, str(path))


def parse_spec(raw: object, source: str) -> ExperimentSpec:
    if not isinstance(raw, dict):
        raise SpecError(f"{source}: an experiment spec must be a mapping")
    if "kind" in raw and raw["kind"] != "accumulation":
        raise SpecError(
            f"{source}: field 'kind': {raw['kind']!r} is not a kind of spec; write "
            "'accumulation' for a MineEvolve stream, or leave it out for a grid"
        )
    try:
        return ExperimentSpec.model_validate(raw)
    except ValidationError as exc:
        raise SpecError(validation_message(exc, source)) from None


def validation_message(exc: ValidationError, source: str) -> str:
    """A spec's first validation error as one line: the file, the field's path, the problem.

    An entry that may be a name or a mapping (``agents``) fails both ways; when the mapping
    was given, its own error is the one that says what is wrong (not "Input should be a
    valid string"), and pydantic's names of the union's branches leave the path."""
    errors = exc.errors()
    first = next((e for e in errors if not _other_branch(e, errors)), errors[0])
    where = ".".join(str(p) for p in first["loc"] if not _branch_name(p)) or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    return f"{source}: field {where!r}: {message}"


def _branch_name(part: object) -> bool:
    return isinstance(part, str) and (
        part == "str" or part.startswith("function-") or part[:1].isupper()
    )


def _other_branch(error: Any, errors: list[Any]) -> bool:
    """Whether ``error`` is the name branch of a union whose mapping branch failed too."""
    loc = tuple(error["loc"])
    if not loc or loc[-1] != "str" or not isinstance(error.get("input"), dict):
        return False
    prefix = loc[:-1]
    return any(e is not error and tuple(e["loc"][: len(prefix)]) == prefix for e in errors)
