"""Reading model replies: the first JSON object in the text, and actions inside it."""

from __future__ import annotations

import json
import math
from typing import Any

from mirrorcraft.body.actions import Action, parse_action


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


STRICT_JSON = json.JSONDecoder(parse_constant=_not_json)
"""Python's JSON decoder without its extensions: NaN, Infinity and -Infinity are not JSON,
and a value holding them would reach actions, traces and knowledge stores."""
_DECODER = STRICT_JSON


REASONING_END = "</think>"
"""Closes the reasoning block that reasoning models (DeepSeek-R1, Qwen3, ...) write before
their answer when the server does not separate it out."""


def answer_part(text: str) -> str:
    """The reply without a leading reasoning block: what follows the last ``</think>``.

    Drafts inside the block are not the answer (a model may try an action there and then
    decide on another); without the tag the whole text is the answer."""
    _reasoning, tag, answer = text.rpartition(REASONING_END)
    return answer if tag else text


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first complete JSON object in ``text`` (code fences and prose around it are ignored,
    and so is a reasoning block closed by ``</think>``: ``answer_part``).

    A reply nested too deeply for the decoder has none (an unusable reply, like one without
    JSON); an object holding a number longer than Python converts, or NaN or Infinity, is
    skipped."""
    decoder = _DECODER
    text = answer_part(text)
    i = text.find("{")
    while i >= 0:
        try:
            value, _end = decoder.raw_decode(text, i)
        except RecursionError:
            return None
        except ValueError:  # not JSON here, NaN, or a number past 4,300 digits
            i = text.find("{", i + 1)
            continue
        if isinstance(value, dict):
            return value
        i = text.find("{", i + 1)
    return None


def number(value: Any) -> float | None:
    """A number a reply gives for a count or distance: a JSON number, or a string holding one
    ("3", " 2.5 "), as models sometimes quote numbers; None for anything else (booleans, NaN
    and infinities included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or value != value or value in (math.inf, -math.inf):
        return None
    return value


def whole_number(value: Any) -> int | None:
    """``number`` when it is a whole number, as an int."""
    n = number(value)
    return int(n) if n is not None and float(n).is_integer() else None


def action_from(doc: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str]:
    """(action, problem): an action object from a reply document, or why there is none."""
    if doc is None:
        return None, "no JSON object found"
    candidate = doc.get("action") if isinstance(doc.get("action"), dict) else doc
    if not isinstance(candidate, dict) or "skill" not in candidate:
        return None, "no 'skill' field"
    action = {"skill": candidate.get("skill"), "args": candidate.get("args", {})}
    parsed = parse_action(action)
    if not isinstance(parsed, Action):
        return None, parsed.message
    return action, ""


def preview(text: str, n: int = 240) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 3] + "..."
