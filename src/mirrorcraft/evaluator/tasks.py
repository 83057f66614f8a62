"""Task definitions: the progression tasks (``data/tasks.yaml``) and the tech-tree suite
(``data/techtree.yaml``), with milestones, values and budgets.

A progression task is a chain of milestones rising to 100. A tech-tree task is
"obtain item X from an empty inventory": one milestone (value 100), the
advancement the packaged ``tasks`` datapack defines for it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mirrorcraft.safeload import load_yaml_file

PROGRESSION = "progression"
TECHTREE = "techtree"
GROUP_PREFIX = "group:"


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


class TechTreeEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^[a-z0-9_]{1,64}$")
    group: str
    title: str
    description: str
    advancement: str = Field(pattern=r"^[a-z0-9_.-]+:[a-z0-9_./-]+$")
    budget: int = Field(ge=1, le=10_000)


class OutsideBody(BaseModel):
    """A task family of MineEvolve's suite that the body cannot do (so none is listed)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    family: str
    missing_skills: tuple[str, ...] = ()
    reason: str


class TechTreeFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: Literal[1]
    groups: tuple[str, ...] = Field(min_length=1)
    hard_groups: tuple[str, ...] = ()
    """The groups MineEvolve's Hard Avg. pools; the other groups make its Easy Avg."""
    outside_body: tuple[OutsideBody, ...] = ()
    tasks: tuple[TechTreeEntry, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> TechTreeFile:
        unknown = sorted(set(self.hard_groups) - set(self.groups))
        if unknown:
            raise ValueError(f"hard_groups names groups that are not listed: {unknown}")
        seen: set[str] = set()
        for entry in self.tasks:
            if entry.group not in self.groups:
                raise ValueError(f"task {entry.id}: group {entry.group!r} is not listed in groups")
            if entry.id in seen:
                raise ValueError(f"task {entry.id} is listed twice")
            seen.add(entry.id)
        return self


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    budget: int
    milestones: tuple[MilestoneSpec, ...]
    suite: str = PROGRESSION
    """``progression`` (the paper's three tasks) or ``techtree`` (obtain-item tasks)."""
    group: str | None = None
    """The tech-tree group (wooden, stone, ...); None for progression tasks."""

    @property
    def final(self) -> MilestoneSpec:
        return self.milestones[-1]

    def with_budget(self, budget: int) -> Task:
        return dataclasses.replace(self, budget=budget)


@lru_cache(maxsize=256)
def task_fingerprint(task: Task) -> str:
    """The task's definition as 16 hex digits: its id, title, suite, group and milestones
    (advancement, value, title, description), not its budget (part of each condition)."""
    doc = {
        "id": task.id,
        "title": task.title,
        "suite": task.suite,
        "group": task.group,
        "milestones": [m.model_dump(mode="json") for m in task.milestones],
    }
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


MAX_BUDGET = 100_000
"""Largest action budget an experiment spec or ``play --budget`` accepts."""


def budget_problem(value: object) -> str | None:
    """Why ``value`` is not an action budget (a whole number from 1 to MAX_BUDGET), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"a budget must be a whole number of actions, got {value!r}"
    if not 1 <= value <= MAX_BUDGET:
        return f"a budget must be between 1 and {MAX_BUDGET} actions, got {value}"
    return None


def budget_arg(text: str) -> int:
    """argparse type for a budget: ``0`` and negatives are refused, never taken as a default."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    problem = budget_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


class UnknownTaskError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def _data_file(name: str) -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / name))


def _progression() -> dict[str, Task]:
    raw = load_yaml_file(_data_file("tasks.yaml"))
    out = {}
    for task_id, doc in raw["tasks"].items():
        spec = TaskSpec.model_validate(doc)
        values = [m.value for m in spec.milestones]
        if values != sorted(values) or values[-1] != 100:
            raise ValueError(f"task {task_id}: milestone values must rise to 100")
        out[task_id] = Task(task_id, spec.title, spec.budget, spec.milestones)
    return out


@lru_cache(maxsize=1)
def techtree_file() -> TechTreeFile:
    raw = load_yaml_file(_data_file("techtree.yaml"))
    return TechTreeFile.model_validate(raw)


def _techtree() -> dict[str, Task]:
    out = {}
    for e in techtree_file().tasks:
        milestone = MilestoneSpec(
            advancement=e.advancement, value=100, title=e.title, description=e.description
        )
        out[e.id] = Task(e.id, e.title, e.budget, (milestone,), TECHTREE, e.group)
    return out


@lru_cache(maxsize=1)
def task_table() -> dict[str, Task]:
    """Every task: the progression tasks first, then the tech-tree suite in file order."""
    progression = _progression()
    techtree = _techtree()
    clash = sorted(set(progression) & set(techtree))
    if clash:
        raise ValueError(f"task ids used by both suites: {', '.join(clash)}")
    return {**progression, **techtree}


def get_task(task_id: str, *, selectors: bool = False) -> Task:
    """The task with this id. ``selectors``: the caller also takes selectors (an experiment
    spec's ``tasks:`` list does; ``play`` and ``make`` do not), so an unknown id's message
    lists them."""
    table = task_table()
    if task_id not in table:
        also = f", or a selector: {', '.join(task_selectors())}" if selectors else ""
        raise UnknownTaskError(
            f"unknown task {task_id!r} (known: {', '.join(progression_tasks())}, "
            f"the {len(table) - len(progression_tasks())} tech-tree tasks obtain_<item>{also})"
        )
    return table[task_id]


def progression_tasks() -> list[str]:
    """The paper's three progression tasks (what the Gym registry and controls default to)."""
    return [t for t, task in task_table().items() if task.suite == PROGRESSION]


def techtree_tasks() -> list[str]:
    return [t for t, task in task_table().items() if task.suite == TECHTREE]


def techtree_groups() -> list[str]:
    """The tech-tree groups in curriculum order (wooden first)."""
    return list(techtree_file().groups)


def techtree_difficulty() -> dict[str, list[str]]:
    """The groups of MineEvolve's Easy Avg. and Hard Avg., in curriculum order."""
    f = techtree_file()
    return {
        "easy": [g for g in f.groups if g not in f.hard_groups],
        "hard": [g for g in f.groups if g in f.hard_groups],
    }


def tasks_in_group(group: str) -> list[str]:
    if group not in techtree_groups():
        raise UnknownTaskError(
            f"unknown task group {group!r} (known: {', '.join(techtree_groups())})"
        )
    return [t for t, task in task_table().items() if task.group == group]


def task_selectors() -> list[str]:
    """Selectors that stand for several tasks in an experiment spec's ``tasks:`` list."""
    return [PROGRESSION, TECHTREE, *(GROUP_PREFIX + g for g in techtree_groups())]


def expand_task_selectors(items: Iterable[str]) -> tuple[str, ...]:
    """Task ids and selectors (``techtree``, ``progression``, ``group:<name>``) -> task ids.

    Order follows the list and the task table; a task named twice is kept once.
    Raises UnknownTaskError for an unknown id or group.
    """
    out: dict[str, None] = {}
    for item in items:
        if item == TECHTREE:
            ids = techtree_tasks()
        elif item == PROGRESSION:
            ids = progression_tasks()
        elif item.startswith(GROUP_PREFIX):
            ids = tasks_in_group(item[len(GROUP_PREFIX) :])
        else:
            ids = [get_task(item, selectors=True).id]
        out.update(dict.fromkeys(ids))
    return tuple(out)


def expand_budgets(raw: Mapping[str, object], tasks: Sequence[str] | None = None) -> dict[str, int]:
    """Check per-task budgets and expand selector keys; ValueError names the bad key.

    Keys are task ids or selectors (``techtree``, ``progression``, ``group:<name>``);
    a task id overrides a selector that also covers it. With ``tasks`` (an
    experiment's expanded task list), every key must cover at least one of them
    and only those are kept. Values are whole numbers from 1 to MAX_BUDGET.
    """
    by_selector: dict[str, int] = {}
    by_id: dict[str, int] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise ValueError(f"key {key!r} is not a task id or selector")
        problem = budget_problem(value)
        if problem:
            raise ValueError(f"{key!r}: {problem}")
        assert isinstance(value, int)
        try:
            ids = expand_task_selectors([key])
        except UnknownTaskError as exc:
            raise ValueError(str(exc)) from None
        if tasks is not None:
            ids = tuple(t for t in ids if t in tasks)
            if not ids:
                raise ValueError(
                    f"{key!r} covers none of this experiment's tasks ({', '.join(tasks)})"
                )
        target = by_id if key in task_table() else by_selector
        target.update(dict.fromkeys(ids, value))
    return {**by_selector, **by_id}
