"""Helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from typing import Any

from mirrorcraft.safeload import DataError, parse_json


class UserError(Exception):
    """A problem the user can fix (bad argument, unreadable file); printed without a traceback."""


def print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, sort_keys=True) + "\n")


def parse_json_arg(text: str, what: str) -> Any:
    """A JSON command-line argument, within the bounds of ``mirrorcraft.safeload``."""
    try:
        return parse_json(text, what)
    except DataError as exc:
        raise UserError(str(exc)) from None
