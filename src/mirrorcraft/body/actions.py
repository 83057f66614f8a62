"""Skill definitions (``mirrorcraft/data/skills.yaml``) and parsing of agent actions.

``parse_action`` turns anything an agent sends into a validated ``Action`` or an
``ActionError`` with a clear message; it never raises on bad input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from mirrorcraft.rules.ids import normalize_id
from mirrorcraft.safeload import load_yaml_file

MAX_STRING = 64


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str  # id | int | enum | grid
    default: Any = None
    required: bool = True
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()

    def signature(self) -> str:
        if self.type == "int":
            text = f"{self.name}:int"
            if self.min is not None and self.min == self.max:
                return f"{text}={self.min} (fixed)"  # as the paper lists craft_grid's count
            if self.min is not None and self.max is not None:
                text += f"={self.default}" if not self.required else ""
                text += f" ({self.min}..{self.max})"
            return text
        if self.type == "enum":
            base = f"{self.name}:{'|'.join(self.choices)}"
            return base + (f"={self.default}" if not self.required else "")
        if self.type == "grid":
            return f"{self.name}:rows of item ids or null"
        return f"{self.name}:string"


@dataclass(frozen=True)
class SkillSpec:
    name: str
    summary: str
    args: tuple[ArgSpec, ...]

    def signature(self) -> str:
        return f"{self.name}(" + ", ".join(a.signature() for a in self.args) + ")"


@dataclass(frozen=True)
class Action:
    skill: str
    args: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"skill": self.skill, "args": dict(self.args)}


@dataclass(frozen=True)
class ActionError:
    message: str
    skill: str = ""
    args: Mapping[str, Any] | None = None


@lru_cache(maxsize=1)
def skill_specs() -> dict[str, SkillSpec]:
    path = Path(str(resources.files("mirrorcraft") / "data" / "skills.yaml"))
    raw = load_yaml_file(path)
    specs: dict[str, SkillSpec] = {}
    for name, doc in raw["skills"].items():
        args = []
        for arg_name, a in doc["args"].items():
            has_default = "default" in a
            args.append(
                ArgSpec(
                    arg_name,
                    a["type"],
                    a.get("default"),
                    not has_default,
                    a.get("min"),
                    a.get("max"),
                    tuple(a.get("choices", ())),
                )
            )
        specs[name] = SkillSpec(name, str(doc["summary"]), tuple(args))
    return specs


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _parse_arg(spec: ArgSpec, value: Any) -> tuple[Any, str]:
    if spec.type == "id":
        if not isinstance(value, str):
            return None, f"{spec.name} must be a string id, got {_short(value)}"
        if len(value) > MAX_STRING:
            return None, f"{spec.name} is longer than {MAX_STRING} characters"
        try:
            return normalize_id(value), ""
        except ValueError:
            return None, f"{spec.name} is not a valid id: {_short(value)}"
    if spec.type == "int":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, f"{spec.name} must be an integer, got {_short(value)}"
        if isinstance(value, float) and not value.is_integer():
            return None, f"{spec.name} must be an integer, got {_short(value)}"
        number = int(value)
        if spec.min is not None and spec.min == spec.max and number != spec.min:
            return None, f"{spec.name} is fixed to {spec.min}; leave it out, got {number}"
        if (spec.min is not None and number < spec.min) or (
            spec.max is not None and number > spec.max
        ):
            return None, f"{spec.name} must be between {spec.min} and {spec.max}, got {number}"
        return number, ""
    if spec.type == "enum":
        if not isinstance(value, str) or value not in spec.choices:
            return (
                None,
                f"{spec.name} must be one of {', '.join(spec.choices)}, got {_short(value)}",
            )
        return value, ""
    if spec.type == "grid":
        return _parse_grid(value)
    return None, f"unsupported argument type {spec.type}"


def _parse_grid(value: Any) -> tuple[Any, str]:
    if not isinstance(value, list) or not value:
        return None, "grid must be a non-empty list of rows"
    if not all(isinstance(row, list) for row in value):
        return (
            None,
            'grid must be nested row arrays, e.g. [["a", null], [null, null]]; a flat list is invalid',
        )
    if len(value) > 3 or any(len(row) > 3 or not row for row in value):
        return None, "grid rows: at most 3 rows of 1 to 3 cells"
    if len({len(row) for row in value}) != 1:
        return None, "grid rows must all have the same length"
    rows = []
    for row in value:
        cells: list[str | None] = []
        for cell in row:
            if cell is None:
                cells.append(None)
                continue
            if not isinstance(cell, str) or len(cell) > MAX_STRING:
                return None, f"grid cells must be item ids or null, got {_short(cell)}"
            try:
                cells.append(normalize_id(cell))
            except ValueError:
                return None, f"grid cell is not a valid item id: {_short(cell)}"
        rows.append(tuple(cells))
    return tuple(rows), ""


def parse_action(raw: Any) -> Action | ActionError:
    """Validate an agent's action against the skill definitions."""
    if not isinstance(raw, Mapping):
        return ActionError(
            f"an action must be an object with 'skill' and 'args', got {_short(raw)}"
        )
    skill = raw.get("skill")
    specs = skill_specs()
    if skill is None:
        return ActionError('the action has no \'skill\'; expected {"skill": ..., "args": {...}}')
    if not isinstance(skill, str) or skill not in specs:
        shown = _short(skill) if skill is not None else "nothing"
        return ActionError(
            f"unknown skill {shown}; skills: {', '.join(specs)}",
            skill=str(skill)[:MAX_STRING] if isinstance(skill, str) else "",
        )
    args = raw.get("args", {})
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        return ActionError("args must be an object", skill=skill)
    spec = specs[skill]
    known = {a.name for a in spec.args}
    unknown = [str(k)[:MAX_STRING] for k in args if k not in known]
    if unknown:
        return ActionError(
            f"{skill} has no argument {unknown[0]!r}; it takes {', '.join(sorted(known))}",
            skill=skill,
        )
    parsed: dict[str, Any] = {}
    for arg in spec.args:
        if arg.name not in args or (args[arg.name] is None and arg.type != "grid"):
            if arg.required:
                return ActionError(f"{skill} needs argument {arg.name!r}", skill=skill)
            parsed[arg.name] = arg.default
            continue
        value, problem = _parse_arg(arg, args[arg.name])
        if problem:
            return ActionError(problem, skill=skill)
        parsed[arg.name] = value
    return Action(skill, parsed)


def skill_listing() -> str:
    """The skill reference shown to agents, generated from the definitions."""
    return "\n".join(f"- {s.signature()}: {s.summary}" for s in skill_specs().values())


def action_signature(action: Action) -> tuple[str, ...]:
    """The paper's semantic signature: what was acted on, ignoring counts, fuel and places."""
    a = action.args
    if action.skill == "craft_grid":
        grid = a.get("grid") or ()
        return ("craft_grid", str(a.get("station")), repr(grid))
    if action.skill == "smelt":
        return ("smelt", str(a.get("input")), str(a.get("station")))
    if action.skill == "mine":
        return ("mine", str(a.get("block")))
    if action.skill == "attack":
        return ("attack", str(a.get("target")))
    if action.skill == "place":
        return ("place", str(a.get("block")))
    if action.skill == "enchant":
        return ("enchant", str(a.get("item")), str(a.get("option")))
    return (action.skill,)
