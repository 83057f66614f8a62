"""Task definitions (``mirrorcraft/data/tasks.yaml``): milestones, values and budgets."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field


class MilestoneSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    advancement: str
    value: int = Field(ge=1, le=100)
    title: str
    description: str = ""


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    title: str
    budget: int = Field(ge=1, le=10_000)
    milestones: tuple[MilestoneSpec, ...]


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    budget: int
    milestones: tuple[MilestoneSpec, ...]

    @property
    def final(self) -> MilestoneSpec:
        return self.milestones[-1]

    def with_budget(self, budget: int) -> Task:
        return Task(self.id, self.title, budget, self.milestones)


class UnknownTaskError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@lru_cache(maxsize=1)
def task_table() -> dict[str, Task]:
    path = Path(str(resources.files("mirrorcraft") / "data" / "tasks.yaml"))
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    out = {}
    for task_id, doc in raw["tasks"].items():
        spec = TaskSpec.model_validate(doc)
        values = [m.value for m in spec.milestones]
        if values != sorted(values) or values[-1] != 100:
            raise ValueError(f"task {task_id}: milestone values must rise to 100")
        out[task_id] = Task(task_id, spec.title, spec.budget, spec.milestones)
    return out


def get_task(task_id: str) -> Task:
    table = task_table()
    if task_id not in table:
        raise UnknownTaskError(f"unknown task {task_id!r} (known: {', '.join(table)})")
    return table[task_id]
