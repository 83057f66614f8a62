"""Body configuration (``mirrorcraft/data/body.yaml``), validated on load."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from mirrorcraft.safeload import load_yaml_file


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


@lru_cache(maxsize=1)
def default_body_config() -> BodyConfig:
    path = Path(str(resources.files("mirrorcraft") / "data" / "body.yaml"))
    return BodyConfig.model_validate(load_yaml_file(path))
