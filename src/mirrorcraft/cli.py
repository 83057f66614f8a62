"""The ``mirrorcraft`` command: a thin layer that parses arguments and calls the package.

Each subcommand lives in ``mirrorcraft.commands.<name>`` and registers itself with
``add_parser(subparsers)``; its handler returns the process exit code. Errors the
user can fix are printed as one clear line, never as a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from collections.abc import Sequence

from mirrorcraft import __version__
from mirrorcraft.redact import redact_text

# The commands and what they raise are imported inside ``main`` (about 0.6 s of imports):
# a Ctrl-C then lands in ``entry``'s net and ends in one line, not in an import traceback.


class _Version(argparse.Action):
    """``--version``: the version and whether the compiled core runs (imported only here,
    so other commands start without it)."""

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kw: object) -> None:
        from mirrorcraft.native import core_summary

        print(f"mirrorcraft {__version__}\n{core_summary()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    from mirrorcraft.commands import COMMANDS

    parser = argparse.ArgumentParser(
        prog="mirrorcraft",
        description="Paired evaluation of agents in Minecraft 1.19 worlds under hidden rule changes.",
    )
    parser.add_argument(
        "--version", action=_Version, nargs=0, help="show the version and which core runs"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    if args.command not in OUTLIVE_READER:
        return _handle(args)
    from mirrorcraft.commands.common import OutlivingStream

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = OutlivingStream(sys.stdout), OutlivingStream(sys.stderr)
    try:
        return _handle(args)
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        sys.stdout, sys.stderr = saved


OUTLIVE_READER = frozenset({"run", "controls", "design", "report", "export", "server"})
"""Commands whose product is stored (results, reports, exports, saves, designs): their output
outlives a reader that goes away (``| head``); the others end quietly with status 0."""


def _handle(args: argparse.Namespace) -> int:
    from mirrorcraft.analysis.loading import RecordsError
    from mirrorcraft.commands.common import UserError
    from mirrorcraft.runner.store import StoreError
    from mirrorcraft.safeload import DataError

    try:
        code: int = args.handler(args)
    except (UserError, StoreError, DataError, RecordsError) as exc:
        # DataError and StoreError are caught nearer their source where a command can say
        # more; this is the net that keeps any that escape to one line.
        print(f"mirrorcraft: error: {redact_text(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``| head``). What is still buffered cannot be written either:
        # send it nowhere, or the interpreter's last flush reports it and exits with 120.
        with contextlib.suppress(OSError, ValueError):  # not a file: a test's capture
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        # A path the user gave cannot be read or written (missing folder, no permission, full disk).
        where = f" ({exc.filename})" if exc.filename else ""
        print(
            f"mirrorcraft: error: {redact_text(str(exc.strerror or exc))}{where}", file=sys.stderr
        )
        return 2
    except KeyboardInterrupt:
        print("mirrorcraft: interrupted", file=sys.stderr)
        return 130
    return code


def entry() -> int:
    """The ``mirrorcraft`` command. Its objects are frozen before the process ends: the
    interpreter's last collection would otherwise walk every one of them (after a
    2,520-episode run, about 0.8 s spent freeing memory the process hands back anyway).

    A Ctrl-C can land outside ``main``'s own net: on ``producer | mirrorcraft play`` the
    terminal interrupts both programs at once, and play may see its input end and return
    before Python raises the interrupt. It ends as any interrupt does, not as a traceback."""
    try:
        code = main()
        gc.freeze()
    except KeyboardInterrupt:
        print("mirrorcraft: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(entry())
