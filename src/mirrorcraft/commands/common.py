"""Helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from typing import Any


class UserError(Exception):
    """A problem the user can fix (bad argument, unreadable file); printed without a traceback."""


def print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, sort_keys=True) + "\n")


def parse_json_arg(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{what} is not valid JSON: {exc.msg} (column {exc.colno})") from None
