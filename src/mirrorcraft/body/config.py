"""Body configuration (``mirrorcraft/data/body.yaml``), validated on load."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mirrorcraft.safeload import load_yaml_file


class Timing(BaseModel):
    """Game time of what a call does, beyond digging and cooking (``timing`` in body.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    walk_speed: float = Field(5.612, gt=0, le=100)
    break_delay: int = Field(5, ge=0, le=100)
    pillar_ticks: int = Field(10, ge=0, le=200)
    drop_despawn: int = Field(6000, ge=1, le=10_000_000)


class BodyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    mine_radius: float = Field(32, gt=0, le=128)
    observe_radius: float = Field(32, gt=0, le=128)
    drop_radius: float = Field(12, gt=0, le=64)
    station_radius: float = Field(24, gt=0, le=128)
    reach: float = Field(4, gt=0, le=8)
    explore_radius: float = Field(48, gt=0, le=256)
    explore_hops: int = Field(2, ge=1, le=16)
    region_size: int = Field(32, ge=8, le=128)
    max_path_digs: int = Field(32, ge=1, le=1000)
    inventory_slots: int = Field(36, ge=1, le=64)
    aliases: dict[str, str] = {}
    fuel_preference: tuple[str, ...] = ()
    disposable_blocks: tuple[str, ...] = ()
    facilities: tuple[str, ...] = ()
    observable_blocks: tuple[str, ...] = ()
    needs_support: frozenset[str] = frozenset()
    timing: Timing = Timing()


# 6: smelt burns its input's surplus (owned beyond the count) when no other fuel is left, as
# a furnace's fuel slot takes logs while logs cook into charcoal (docs/body.md, "Fuel").
SIMULATOR_VERSION = 6
"""The embedded simulator's behaviour version. Raise it with any change that alters an
episode's result on the simulator (what a skill does, digs, drops, wears or observes): it is
part of each record's ``body_fingerprint``, so a results folder refuses to resume, and the
analysis to pool, episodes of two behaviours (``docs/records.md``). A change that leaves every
result byte-identical (speed, refactoring) keeps it. ``tests/perf_reference.py --write``
refuses to re-record changed reference results under an unchanged version."""


def _data_path(name: str) -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / name))


@lru_cache(maxsize=1)
def default_body_config() -> BodyConfig:
    return BodyConfig.model_validate(load_yaml_file(_data_path("body.yaml")))


@lru_cache(maxsize=4)
def body_fingerprint(backend: str = "sim") -> str:
    """What the body behaves by, as 16 hex digits: the backend (``sim`` or ``mineflayer``),
    the simulator's behaviour version (``sim`` only; a real server's body is the game's and
    the bridge's), the body settings (``data/body.yaml``) and the skill definitions with their
    argument bounds (``data/skills.yaml``), each as parsed values (a comment edited in either
    file changes nothing)."""
    config = default_body_config()
    body = config.model_dump(mode="json")
    for name, value in config:
        if isinstance(value, frozenset):  # a set's order varies between processes
            body[name] = sorted(value)
    if backend != "sim":
        body.pop("timing")  # the embedded clock's settings; a real server keeps its own time
    doc = {
        "backend": backend,
        "simulator_version": SIMULATOR_VERSION if backend == "sim" else None,
        "body": body,
        "skills": load_yaml_file(_data_path("skills.yaml")),
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
