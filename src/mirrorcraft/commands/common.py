"""Helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mirrorcraft.safeload import DataError, parse_json


class UserError(Exception):
    """A problem the user can fix (bad argument, unreadable file); printed without a traceback."""


def model_error(model: str, exc: Exception) -> UserError:
    """A model's configuration problem as one line naming the model once (most messages
    from the client settings already start with it)."""
    text = str(exc)
    prefix = f"model {model!r}"
    return UserError(text if text.startswith(prefix) else f"{prefix}: {text}")


def _whole_number(text: str, least: int, why: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{why}, got {value}")
    return value


def count_int(text: str) -> int:
    """An argparse type: a whole number of at least 0 (``--limit 0`` plans without running)."""
    return _whole_number(text, 0, "must be 0 or more")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (worker processes, concurrent episodes)."""
    return _whole_number(text, 1, "must be at least 1")


def add_progress_flag(parser: Any) -> None:
    """``--progress``: show the progress line on stderr even when it is not a terminal."""
    parser.add_argument(
        "--progress",
        action="store_const",
        const=True,
        default=None,
        help="show progress on stderr even when it is not a terminal (it always shows on one)",
    )


def list_option(values: list[str] | None) -> list[str] | None:
    """A list option given as repeated flags, comma-separated values, or both.

    ``--world a,b --world c`` is ``[a, b, c]``; every list option of the CLI reads this way.
    """
    if values is None:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def print_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, sort_keys=True) + "\n")


def parse_json_arg(text: str, what: str) -> Any:
    """A JSON command-line argument, within the bounds of ``mirrorcraft.safeload``."""
    try:
        return parse_json(text, what)
    except DataError as exc:
        raise UserError(str(exc)) from None


class OutlivingStream:
    """A text stream that outlives its reader. Once a write or flush meets a closed pipe
    (``mirrorcraft run ... 2>&1 | head`` after ``head`` exited), the descriptor is pointed
    at the null device, so this process (and a worker process that inherited it, or code
    writing to the descriptor itself) goes on writing nowhere instead of failing: a run
    keeps running, stores every episode and ends with its own status."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.gone = False

    def write(self, text: str) -> int:
        try:
            return int(self.inner.write(text))
        except BrokenPipeError:
            self._lose()
            return len(text)

    def flush(self) -> None:
        try:
            self.inner.flush()
        except BrokenPipeError:
            self._lose()

    def _lose(self) -> None:
        import contextlib
        import os

        self.gone = True
        with contextlib.suppress(OSError, ValueError):  # not a file: a test's capture
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.inner.fileno())
            os.close(null)
        with contextlib.suppress(OSError, ValueError):
            self.inner.flush()  # what was buffered goes to the null device now

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
