"""MineEvolve settings (``mirrorcraft/data/mineevolve.yaml``), variants and per-run overrides."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirrorcraft.safeload import load_yaml_file


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class MonitorConfig(_Strict):
    weights: dict[Literal["movement", "inventory", "goal"], float]
    movement_scale: float = Field(gt=0)
    inventory_scale: float = Field(gt=0)
    stagnation_threshold: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _weights(self) -> MonitorConfig:
        if set(self.weights) != {"movement", "inventory", "goal"}:
            raise ValueError("weights needs movement, inventory and goal")
        if any(w < 0 for w in self.weights.values()) or sum(self.weights.values()) <= 0:
            raise ValueError("weights must be non-negative with a positive sum")
        return self


class ExecutorConfig(_Strict):
    max_actions: int = Field(ge=1, le=64)
    max_failed_actions: int = Field(ge=1, le=64)
    max_plan_subgoals: int = Field(ge=1, le=32)


class InducerConfig(_Strict):
    window: int = Field(ge=1, le=50)
    failure_rate: float = Field(gt=0, le=1)
    min_skill_segment: int = Field(ge=1, le=20)
    max_skill_segment: int = Field(ge=1, le=20)
    max_inductions_per_episode: int = Field(ge=0, le=1000)


class CuratorConfig(_Strict):
    high_confidence: float = Field(ge=0, le=1)
    retire_below: float = Field(ge=0, le=1)
    min_uses: int = Field(ge=1)
    prior_weight: float = Field(gt=0)
    budget_tokens: int = Field(ge=0, le=100_000)
    top_k: int = Field(ge=0, le=100)
    generic_phrases: tuple[str, ...]


class AdaptorConfig(_Strict):
    max_repairs_per_episode: int = Field(ge=0, le=1000)


class Switches(_Strict):
    feedback: Literal["typed", "binary", "reflection"] = "typed"
    skills: bool = True
    remedies: bool = True
    curator: bool = True
    curator_judge: bool = True
    adaptor: bool = True
    store_updates: bool = True
    read_only_remedies: bool = True
    """Whether an episode that reads its store without updating it (a checkpoint evaluation,
    the static store) still induces remedies for the adaptor's active set."""


class MineEvolveConfig(_Strict):
    schema_version: Literal[1] = 1
    monitor: MonitorConfig
    executor: ExecutorConfig
    inducer: InducerConfig
    curator: CuratorConfig
    adaptor: AdaptorConfig
    failure_types: dict[str, tuple[str, ...]]
    switches: Switches = Switches()
    variants: dict[str, dict[str, Any]] = {}

    @model_validator(mode="after")
    def _variants(self) -> MineEvolveConfig:
        for name, changes in self.variants.items():
            try:
                Switches.model_validate({**self.switches.model_dump(), **changes})
            except ValidationError as exc:
                raise ValueError(f"variant {name!r}: {exc.errors()[0]['msg']}") from None
        return self

    def failure_type(self, reason: str) -> str:
        for kind, reasons in self.failure_types.items():
            if reason in reasons:
                return kind
        return "OTHER" if reason else "NONE"


class MineEvolveConfigError(ValueError):
    """Settings or overrides that cannot be used; the message names the field."""


def config_path() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / "mineevolve.yaml"))


@lru_cache(maxsize=1)
def default_config() -> MineEvolveConfig:
    raw = load_yaml_file(config_path())
    return MineEvolveConfig.model_validate(raw)


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def make_config(variant: str = "full", overrides: dict[str, Any] | None = None) -> MineEvolveConfig:
    """The default settings with a variant's switches and nested ``overrides`` applied."""
    base = default_config()
    if variant not in base.variants:
        raise MineEvolveConfigError(
            f"unknown MineEvolve variant {variant!r} (known: {', '.join(base.variants)})"
        )
    doc = base.model_dump()
    doc["switches"] = {**doc["switches"], **base.variants[variant]}
    doc = _merge(doc, overrides or {})
    try:
        return MineEvolveConfig.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise MineEvolveConfigError(f"MineEvolve setting {where!r}: {first['msg']}") from None
