"""Baseline settings (``mirrorcraft/data/baselines.yaml``) and the limits they share with MineEvolve."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirrorcraft.agents.mineevolve.config import (
    ExecutorConfig,
    MineEvolveConfig,
    MineEvolveConfigError,
    MonitorConfig,
    make_config,
)
from mirrorcraft.safeload import load_yaml_file


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DepsConfig(_Strict):
    max_revisions: int = Field(ge=0, le=1000)


class Jarvis1Config(_Strict):
    situation_weight: float = Field(ge=0, le=10)
    min_score: float = Field(ge=0, le=10)
    max_plan_steps: int = Field(ge=1, le=200)


class Optimus1Config(_Strict):
    max_graph_nodes: int = Field(ge=1, le=500)
    max_continues: int = Field(ge=0, le=20)
    max_experience_subgoals: int = Field(ge=1, le=200)


class Optimus2Config(_Strict):
    history_length: int = Field(ge=0, le=64)
    max_actions_per_subgoal: int = Field(ge=1, le=200)


class BaselinesConfig(_Strict):
    schema_version: Literal[1] = 1
    deps: DepsConfig
    jarvis1: Jarvis1Config
    optimus1: Optimus1Config
    optimus2: Optimus2Config


def config_path() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / "baselines.yaml"))


@lru_cache(maxsize=1)
def default_baselines() -> BaselinesConfig:
    raw = load_yaml_file(config_path())
    return BaselinesConfig.model_validate(raw)


class SharedLimits(_Strict):
    """What every compared method shares: executor limits, monitor, retrieval top-K and budget."""

    executor: ExecutorConfig
    monitor: MonitorConfig
    top_k: int
    budget_tokens: int
    failure_types: dict[str, tuple[str, ...]]

    def failure_type(self, reason: str) -> str:
        for kind, reasons in self.failure_types.items():
            if reason in reasons:
                return kind
        return "OTHER" if reason else "NONE"


SHARED_KEYS = ("executor", "monitor", "curator")


def shared_limits(overrides: dict[str, Any] | None = None) -> SharedLimits:
    """The shared limits of mineevolve.yaml, with the same per-experiment overrides applied."""
    shared = {k: v for k, v in (overrides or {}).items() if k in SHARED_KEYS}
    cfg: MineEvolveConfig = make_config("full", shared)
    return SharedLimits(
        executor=cfg.executor,
        monitor=cfg.monitor,
        top_k=cfg.curator.top_k,
        budget_tokens=cfg.curator.budget_tokens,
        failure_types=cfg.failure_types,
    )


def baseline_settings(name: str, overrides: dict[str, Any] | None = None) -> Any:
    """One baseline's settings with ``overrides[name]`` applied (unknown keys are errors)."""
    base = default_baselines()
    doc = base.model_dump()
    changes = dict((overrides or {}).get(name, {}) or {})
    unknown = set(overrides or {}) - {*SHARED_KEYS, name}
    if unknown:
        raise MineEvolveConfigError(
            f"settings for {name}: unknown sections {sorted(unknown)} "
            f"(allowed: {', '.join((*SHARED_KEYS, name))})"
        )
    doc[name] = {**doc[name], **changes}
    try:
        return getattr(BaselinesConfig.model_validate(doc), name)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise MineEvolveConfigError(f"{name} setting {where!r}: {first['msg']}") from None


BASELINE_SECTIONS = ("deps", "jarvis1", "optimus1", "optimus2")


def settings_for(agent: str, settings: dict[str, Any] | None) -> dict[str, Any]:
    """The part of an experiment's ``agent_settings`` one configuration takes.

    MineEvolve takes every section but the baselines' own; a baseline takes the
    shared sections (executor, monitor, curator) and its own.
    """
    doc = dict(settings or {})
    if agent in BASELINE_SECTIONS:
        return {k: v for k, v in doc.items() if k in (*SHARED_KEYS, agent)}
    return {k: v for k, v in doc.items() if k not in BASELINE_SECTIONS}
