"""The thirteen skills as OpenAI function tools, and reading an action from a model's tool calls.

The tool schemas are generated from the skill definitions (``data/skills.yaml``, read by
``body.actions.skill_specs``), the same source as the text skill listing and the body's
own argument checks, so the three can never disagree: an argument's type, bounds,
choices and default appear once, in that file.

A reply's tool calls are read by ``action_from_calls``: the first call names the skill
and its JSON arguments become the action's ``args``, which then pass the same checks as
any other action (``body.actions.parse_action``). No call, an unknown function, arguments
that are not a JSON object or that fail the checks make the reply unusable; the agent
then gets the one repair call every configuration gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from mirrorcraft.agents.llm.replies import STRICT_JSON
from mirrorcraft.body.actions import MAX_STRING, Action, ArgSpec, parse_action, skill_specs
from mirrorcraft.llm.base import ToolCall, Tools

TOOL_CHOICES = ("auto", "required")

_ID_HINT = "an exact block, item or entity id as the observation writes it, e.g. oak_log"
_GRID_HINT = (
    "rows top to bottom, cells left to right; each cell an owned item id or null "
    "(at most 2x2 at the inventory, 3x3 at a crafting_table)"
)


def arg_schema(arg: ArgSpec) -> dict[str, Any]:
    """The JSON Schema of one skill argument."""
    schema: dict[str, Any]
    if arg.type == "int":
        schema = {"type": "integer"}
        if arg.min is not None:
            schema["minimum"] = arg.min
        if arg.max is not None:
            schema["maximum"] = arg.max
    elif arg.type == "enum":
        schema = {"type": "string", "enum": list(arg.choices)}
    elif arg.type == "grid":
        cell = {"type": ["string", "null"], "maxLength": MAX_STRING}
        row = {"type": "array", "items": cell, "minItems": 1, "maxItems": 3}
        schema = {
            "type": "array",
            "items": row,
            "minItems": 1,
            "maxItems": 3,
            "description": _GRID_HINT,
        }
    else:  # "id"
        schema = {"type": "string", "maxLength": MAX_STRING, "description": _ID_HINT}
    if not arg.required:
        schema["default"] = arg.default
    return schema


@lru_cache(maxsize=1)
def skill_tools() -> tuple[dict[str, Any], ...]:
    """Every skill as an OpenAI function tool (``{"type": "function", "function": {...}}``)."""
    out = []
    for spec in skill_specs().values():
        parameters: dict[str, Any] = {
            "type": "object",
            "properties": {a.name: arg_schema(a) for a in spec.args},
            "required": [a.name for a in spec.args if a.required],
            "additionalProperties": False,
        }
        out.append(
            {
                "type": "function",
                "function": {
                    "name": spec.name,
                    "description": spec.summary,
                    "parameters": parameters,
                },
            }
        )
    return tuple(out)


def skill_toolset(choice: str = "auto") -> Tools:
    if choice not in TOOL_CHOICES:
        raise ValueError(f"tool_choice must be one of {', '.join(TOOL_CHOICES)}, got {choice!r}")
    return Tools(skill_tools(), choice)


def action_from_calls(calls: Sequence[ToolCall]) -> tuple[dict[str, Any] | None, str]:
    """(action, problem): the action the first tool call asks for, or why there is none.

    Further calls in the same reply are ignored: one turn is one action, as in ``react``."""
    if not calls:
        return None, "the reply called no function"
    call = calls[0]
    if call.name not in skill_specs():
        shown = call.name[:MAX_STRING] or "(no name)"
        return None, f"unknown function {shown!r}; call one of {', '.join(skill_specs())}"
    text = call.arguments.strip()
    try:
        args = STRICT_JSON.decode(text) if text else {}
    except (ValueError, RecursionError):
        return None, f"the arguments of {call.name} are not valid JSON"
    if not isinstance(args, dict):
        return None, f"the arguments of {call.name} must be a JSON object"
    action = {"skill": call.name, "args": args}
    parsed = parse_action(action)
    if not isinstance(parsed, Action):
        return None, parsed.message
    return action, ""
