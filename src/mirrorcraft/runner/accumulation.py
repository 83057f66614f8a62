"""Knowledge-accumulation experiments (``kind: accumulation``): learn, freeze, evaluate.

For each variant, a *training stream* of episodes runs in a fixed order with one
knowledge store that every episode reads and then extends; the store is frozen
into a snapshot after ``M`` episodes for each checkpoint ``M``. Each snapshot is
then *evaluated*: every evaluation condition (world x rules x task x repetition)
runs once per checkpoint, reading the snapshot read-only (``updates: false``), or
with the store carried on through the evaluation episodes, one stream per rule
set (``updates: true``). Evaluation episodes share their seeds across variants and
checkpoints, and Vanilla and Mirror twins share seeds, so every comparison is paired.

A variant is a name, optionally with its own MineEvolve switches (an ablation in
``mineevolve.yaml``) and its own training tasks; ``train: none`` means it never
learns (a cold start), which is also the checkpoint-0 condition of every variant.
A variant may run another configuration (``agent:``): a baseline with memory
(``jarvis1``, ``optimus1``) trains and freezes its own store exactly as MineEvolve
does; one without (``deps``, ``optimus2``) must say ``train: none`` and is
evaluated on the same conditions and seeds, so every method is paired. A user's agent
(an import path or entry point, with its ``options``) takes part the same way: with a
knowledge store when it implements ``load_knowledge`` and ``knowledge_delta``
(``agents/memory.py``, docs/agent_api.md), else only with ``train: none``.
Training a store in Vanilla worlds and evaluating in Mirror twins is the transfer
case: ``train.rules: [vanilla]`` with Mirror suites in ``eval.rules``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mirrorcraft.evaluator.tasks import (
    MAX_BUDGET,
    UnknownTaskError,
    expand_budgets,
    expand_task_selectors,
    get_task,
)
from mirrorcraft.runner.execution_spec import ExecutionSpec
from mirrorcraft.runner.spec import (
    EpisodeCondition,
    ModelSpec,
    episode_seed,
    identity_json,
    repeated,
    unique_model_names,
)

AGENT = "mineevolve"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _expand(selectors: tuple[str, ...]) -> tuple[str, ...]:
    try:
        return expand_task_selectors(selectors)
    except UnknownTaskError as exc:
        raise ValueError(str(exc)) from None


class TrainSpec(_Strict):
    worlds: tuple[str, ...] = Field(min_length=1)
    rules: tuple[str, ...] = ("vanilla",)
    tasks: tuple[tuple[str, ...], ...] = Field(
        min_length=1, description="task pools (each a list of ids or selectors)"
    )
    mix: tuple[int, ...] = ()
    """Episodes drawn from each pool per round (default: 1 each)."""
    episodes: int = Field(ge=0, le=100_000)
    hold_out: bool = True
    """Leave the evaluation tasks out of the training pools (evaluation on held-out tasks)."""

    @field_validator("tasks", mode="before")
    @classmethod
    def _pools(cls, raw: Any) -> Any:
        if isinstance(raw, list | tuple) and raw and all(isinstance(x, str) for x in raw):
            return (tuple(raw),)
        return raw

    @field_validator("tasks")
    @classmethod
    def _known(cls, pools: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        return tuple(_expand(p) for p in pools)

    @model_validator(mode="after")
    def _mix(self) -> TrainSpec:
        if self.mix and (len(self.mix) != len(self.tasks) or min(self.mix) < 1):
            raise ValueError("mix needs one positive count per task pool")
        return self

    def pattern(self) -> list[int]:
        counts = self.mix or tuple(1 for _ in self.tasks)
        return [i for i, n in enumerate(counts) for _ in range(n)]


class EvalSpec(_Strict):
    worlds: tuple[str, ...] = Field(min_length=1)
    rules: tuple[str, ...] = ("vanilla",)
    tasks: tuple[str, ...] = Field(min_length=1)
    repetitions: int = Field(1, ge=1, le=1000)
    updates: bool = False
    """True: the store keeps learning through the evaluation episodes (one stream per rule set)."""

    @field_validator("tasks")
    @classmethod
    def _known(cls, tasks: tuple[str, ...]) -> tuple[str, ...]:
        return _expand(tasks)

    @field_validator("worlds", "rules")
    @classmethod
    def _listed_once(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        """A world or rule set listed twice would give the same evaluation episodes twice."""
        if twice := repeated(values):
            raise ValueError(f"{twice!r} is listed twice")
        return values


class VariantSpec(_Strict):
    name: str = Field(pattern=r"^[a-z0-9_]{1,40}$")
    agent: str = AGENT
    """The configuration: mineevolve (default), a baseline (deps, jarvis1, optimus1, optimus2),
    or a user's agent by import path or entry point (``docs/agent_api.md``, "Memory")."""
    options: dict[str, Any] = {}
    """A user agent's options, checked by its ``validate_options`` (part of the spec hash)."""
    switches: str = ""
    """A MineEvolve variant from mineevolve.yaml (default: the name if it is one, else full)."""
    train: dict[str, Any] | Literal["none", "inherit"] = "inherit"
    """Changes to the top-level training stream, or "none" for no training."""
    start_from: str | None = None
    """A knowledge-store file this variant starts from instead of an empty store (it is
    copied, never written): e.g. a static store evaluated without updates."""
    freeze_after: int | None = Field(None, ge=0)
    """Training episodes after this many read the store without changing it (a static store
    built from the first episodes only)."""
    store_of: str | None = None
    """Evaluate another variant's checkpoints instead of training a store of its own (e.g.
    the same store evaluated with and without updates)."""
    eval_updates: bool | None = None
    """Overrides eval.updates for this variant."""


class AccumulationSpec(_Strict):
    schema_version: Literal[1] = 1
    kind: Literal["accumulation"]
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    description: str = ""
    models: tuple[ModelSpec, ...] = Field((ModelSpec(name="none"),), min_length=1)
    """The models of LLM configurations; ``none`` (the default) for agents that call none."""
    agent_settings: dict[str, Any] = {}
    """Overrides of mineevolve.yaml for every variant (e.g. {curator: {budget_tokens: 256}})."""
    variants: tuple[VariantSpec, ...] = Field(min_length=1)
    train: TrainSpec | None = None
    checkpoints: tuple[int, ...] = Field(min_length=1)
    eval: EvalSpec
    budgets: dict[str, int] = {}
    budget: int | None = Field(None, ge=1, le=MAX_BUDGET, strict=True)
    seed: int = 0
    call_budget: int | None = Field(None, ge=1, le=1_000_000)
    """Model calls one episode may make (training and evaluation), the same for every variant."""
    execution: ExecutionSpec = ExecutionSpec()
    """Retries, endpoint pauses, the episode time limit and the preflight (not hashed)."""

    @field_validator("budgets", mode="before")
    @classmethod
    def _budgets_valid(cls, raw: Any) -> Any:
        """Positive whole budgets keyed by task ids or selectors (selectors expanded)."""
        return expand_budgets(raw) if isinstance(raw, dict) else raw

    @field_validator("models")
    @classmethod
    def _model_names_unique(cls, models: tuple[ModelSpec, ...]) -> tuple[ModelSpec, ...]:
        return unique_model_names(models)

    @field_validator("variants", mode="before")
    @classmethod
    def _names(cls, raw: Any) -> Any:
        if isinstance(raw, list | tuple):
            return [{"name": v} if isinstance(v, str) else v for v in raw]
        return raw

    @model_validator(mode="after")
    def _consistent(self) -> AccumulationSpec:
        from mirrorcraft.agents.mineevolve.config import default_config

        known = default_config().variants
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise ValueError("variant names must be unique")
        by_name = {v.name: v for v in self.variants}
        from mirrorcraft.agents.registry import keeps_memory, needs_model

        for v in self.variants:
            _check_agent(v)
            if v.agent != AGENT and v.switches:
                raise ValueError(f"variant {v.name!r}: switches apply to mineevolve only")
            if not keeps_memory(v.agent) and (
                self.train_for(v) is not None or v.start_from or v.store_of
            ):
                raise ValueError(
                    f"variant {v.name!r}: {v.agent} keeps no memory across episodes; "
                    "give it train: none"
                )
            if needs_model(v.agent) and any(m.name == "none" for m in self.models):
                raise ValueError(
                    f"variant {v.name!r}: {v.agent} calls a model; name one under models"
                )
            if v.store_of is not None and by_name.get(v.store_of, v).agent != v.agent:
                raise ValueError(f"variant {v.name!r}: store_of must name a variant of {v.agent}")
            if v.store_of is not None:
                src = by_name.get(v.store_of)
                if src is None or src.store_of is not None or self.train_for(src) is None:
                    raise ValueError(
                        f"variant {v.name!r}: store_of must name a variant that trains its own store"
                    )
            if v.agent == AGENT and self.switches(v) not in known:
                raise ValueError(
                    f"variant {v.name!r}: unknown switches {self.switches(v)!r} "
                    f"(known: {', '.join(known)})"
                )
            ablations = [k for k in known if k != "full"]
            near = difflib.get_close_matches(v.name, ablations, n=1, cutoff=0.8)
            if v.agent == AGENT and not v.switches and v.name not in known and near:
                # A misspelt ablation would otherwise run, and be reported as, full MineEvolve.
                raise ValueError(
                    f"variant {v.name!r}: not a MineEvolve variant, so it would run the full "
                    f"switches; did you mean {near[0]!r}? (to keep this name, say which "
                    "switches it runs: switches: full)"
                )
            train = self.train_for(v)
            if train is not None and max(self.checkpoints) > train.episodes:
                raise ValueError(
                    f"variant {v.name!r}: checkpoint {max(self.checkpoints)} is beyond its "
                    f"{train.episodes} training episodes"
                )
        if sorted(set(self.checkpoints)) != list(self.checkpoints) or self.checkpoints[0] < 0:
            raise ValueError("checkpoints must be distinct, ascending and non-negative")
        return self

    @staticmethod
    def switches(v: VariantSpec) -> str:
        """The MineEvolve variant a mineevolve variant runs ("" for other configurations)."""
        from mirrorcraft.agents.mineevolve.config import default_config

        if v.agent != AGENT:
            return ""
        if v.switches:
            return v.switches
        return v.name if v.name in default_config().variants else "full"

    def train_for(self, v: VariantSpec) -> TrainSpec | None:
        if v.train == "none" or self.train is None or v.store_of is not None:
            return None
        if v.train == "inherit":
            return self.train
        return TrainSpec.model_validate({**self.train.model_dump(), **v.train})

    def budget_for(self, task: str) -> int:
        if task in self.budgets:
            return self.budgets[task]
        return self.budget if self.budget is not None else get_task(task).budget

    def redacted(self) -> AccumulationSpec:
        """The spec as stored and hashed: keys in model URLs masked (the client keeps them)."""
        models = tuple(m.redacted() for m in self.models)
        return self if models == self.models else self.model_copy(update={"models": models})

    def public_dump(self) -> dict[str, Any]:
        """What the results databases record of the spec (never a credential)."""
        return self.redacted().model_dump(mode="json")

    @property
    def hash(self) -> str:
        return self.hash_with_endpoints(None)

    def hash_with_endpoints(self, endpoints: Mapping[str, str | None] | None) -> str:
        """``hash``, or with ``endpoints`` the hash older versions took (``identity_json``)."""
        unset = {"call_budget"} if self.call_budget is None else set()
        doc = identity_json(self.redacted(), unset, endpoints=endpoints)
        return hashlib.sha256(doc.encode()).hexdigest()[:16]


def _check_agent(v: VariantSpec) -> None:
    """A packaged configuration without options, or a user agent (not a remote one) whose
    own ``validate_options`` accepts the variant's options."""
    from mirrorcraft.agents.plugins import PluginError, check_options, is_plugin, is_remote
    from mirrorcraft.agents.registry import LLM_AGENTS

    if v.agent in LLM_AGENTS:
        if v.options:
            raise ValueError(
                f"variant {v.name!r}: options apply to user agents; configure {v.agent} "
                "with agent_settings"
            )
        return
    if is_remote(v.agent):
        raise ValueError(
            f"variant {v.name!r}: remote agents cannot run accumulation experiments "
            "(they keep no knowledge store); run them in a grid spec"
        )
    if not is_plugin(v.agent):
        from mirrorcraft.agents.registry import agent_problem

        why = agent_problem(v.agent) or f"unknown agent {v.agent!r}"
        raise ValueError(f"variant {v.name!r}: {why}")
    try:
        check_options(v.agent, v.options)
    except PluginError as exc:
        raise ValueError(f"variant {v.name!r}: {exc}") from None


@dataclass(frozen=True)
class Stream:
    """Episodes that run one after another over one store (or one read-only snapshot)."""

    key: str
    variant: str
    switches: str
    phase: str  # "train" | "eval"
    checkpoint: int | None
    conditions: list[EpisodeCondition]
    writable: bool
    snapshots: dict[int, str] = field(default_factory=dict)
    """Training: episodes done -> snapshot file name to write then."""
    store_variant: str = ""
    """The variant whose store and snapshots this stream uses (itself unless ``store_of``)."""
    frozen_after: int | None = None
    """Training: episodes after this many run without updating the store."""
    agent: str = AGENT
    """The configuration the stream's episodes run."""

    @property
    def agent_name(self) -> str:
        """What the registry builds: ``mineevolve[<switches>]`` or the baseline's name."""
        return f"{AGENT}[{self.switches}]" if self.agent == AGENT else self.agent


def agent_label(variant: str, phase: str, checkpoint: int | None, agent: str = AGENT) -> str:
    if phase == "train":
        return f"{agent}:{variant}:train"
    return f"{agent}:{variant}@{checkpoint}"


def training_stream(spec: AccumulationSpec, v: VariantSpec, model: str) -> Stream | None:
    train = spec.train_for(v)
    if train is None:
        return None
    pattern = train.pattern()
    label = agent_label(v.name, "train", None, v.agent)
    held = set(spec.eval.tasks) if train.hold_out else set()
    pools = [sorted(set(p) - held) for p in train.tasks]
    if any(not p for p in pools):
        raise ValueError(
            f"variant {v.name!r}: a training pool has no task left once the evaluation tasks "
            "are held out (set train.hold_out: false to train on them too)"
        )
    conditions = []
    for i in range(train.episodes):
        rng = random.Random(
            json.dumps([spec.seed, "train", i, [list(p) for p in train.tasks], pattern])
        )
        task = rng.choice(pools[pattern[i % len(pattern)]])
        world = rng.choice(sorted(train.worlds))
        rules = train.rules[i % len(train.rules)]
        budget = spec.budget_for(task)
        seed = episode_seed(spec.seed, world, task, "train", model, budget, i)
        conditions.append(
            EpisodeCondition(
                world, rules, task, label, model, "hidden", budget, i, seed, spec.call_budget
            )
        )
    snapshots = {m: f"{v.name}@{m}.sqlite" for m in spec.checkpoints}
    return Stream(
        f"train/{v.name}/{model}",
        v.name,
        spec.switches(v),
        "train",
        None,
        conditions,
        True,
        snapshots,
        v.name,
        v.freeze_after,
        v.agent,
    )


def evaluation_streams(
    spec: AccumulationSpec, v: VariantSpec, model: str, checkpoint: int
) -> list[Stream]:
    e = spec.eval
    label = agent_label(v.name, "eval", checkpoint, v.agent)
    by_rules: dict[str, list[EpisodeCondition]] = {r: [] for r in e.rules}
    ordered: list[EpisodeCondition] = []
    for world in e.worlds:
        for task in e.tasks:
            budget = spec.budget_for(task)
            for rep in range(e.repetitions):
                seed = episode_seed(spec.seed, world, task, AGENT, model, budget, rep)
                for rules in e.rules:
                    c = EpisodeCondition(
                        world,
                        rules,
                        task,
                        label,
                        model,
                        "hidden",
                        budget,
                        rep,
                        seed,
                        spec.call_budget,
                    )
                    by_rules[rules].append(c)
                    ordered.append(c)
    base = f"eval/{v.name}@{checkpoint}/{model}"
    sw = spec.switches(v)
    source = v.store_of or v.name
    updates = e.updates if v.eval_updates is None else v.eval_updates
    from mirrorcraft.agents.registry import keeps_memory

    if not keeps_memory(v.agent):
        updates = False  # nothing to carry: the configuration keeps no memory
    if not updates:
        return [
            Stream(
                f"{base}/{i}", v.name, sw, "eval", checkpoint, [c], False, {}, source, None, v.agent
            )
            for i, c in enumerate(ordered)
        ]
    return [
        Stream(f"{base}/{r}", v.name, sw, "eval", checkpoint, cs, True, {}, source, None, v.agent)
        for r, cs in by_rules.items()
    ]


def plan_streams(spec: AccumulationSpec) -> tuple[list[Stream], list[Stream]]:
    """(training streams, evaluation streams) of the whole experiment, in a fixed order."""
    train: list[Stream] = []
    evals: list[Stream] = []
    for model in spec.models:
        for v in spec.variants:
            t = training_stream(spec, v, model.name)
            if t is not None:
                train.append(t)
            for m in spec.checkpoints:
                evals.extend(evaluation_streams(spec, v, model.name, m))
    return train, evals
