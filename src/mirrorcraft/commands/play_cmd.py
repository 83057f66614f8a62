"""``mirrorcraft play``: drive one episode by hand from a file of actions (JSON lines).

Prints one JSON object per action: step, skill, ok, reason, message, inventory,
milestones (completed milestone codes), score. This is how people debug a suite;
keep the output stable.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from mirrorcraft.commands.common import UserError, parse_json_arg, print_json
from mirrorcraft.env import EnvSpec, MirrorCraftEnv, StartInventoryError
from mirrorcraft.evaluator.tasks import MAX_BUDGET, UnknownTaskError, budget_arg
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.safeload import DataError, decode_text, parse_json
from mirrorcraft.world.registry import UnknownWorldError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("play", help="run actions from a file in one world and print what happened")
    p.add_argument("--world", required=True, help="world id, e.g. plains-1")
    p.add_argument(
        "--suite", default="vanilla", help="vanilla, a suite id (M01-M06) or a datapack path"
    )
    p.add_argument(
        "--task",
        required=True,
        help="iron_armor, diamond, enchantment, or a tech-tree task id (e.g. obtain_iron_pickaxe;"
        " see docs/techtree.md)",
    )
    p.add_argument("--actions", required=True, help="JSON-lines file of actions, or - for stdin")
    p.add_argument(
        "--seed", type=int, default=0, help="episode seed: loot draws and mob placement (default 0)"
    )
    p.add_argument(
        "--budget",
        type=budget_arg,
        default=None,
        help=f"override the task's action budget (1 to {MAX_BUDGET})",
    )
    p.add_argument(
        "--inventory",
        default=None,
        help="starting inventory for debugging, e.g. '{\"oak_log\": 2}'",
    )
    p.add_argument(
        "--observe", action="store_true", help="also print the observation text after each step"
    )
    p.set_defaults(handler=run)


def _actions(stream: IO[bytes] | IO[str], label: str) -> Iterator[tuple[int, Any]]:
    """(line number, action) per non-blank line; DataError for bytes or JSON past the bounds."""
    for n, line in enumerate(stream, 1):
        raw = decode_text(line, label, first_line=n) if isinstance(line, bytes) else str(line)
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            yield n, parse_json(text, label, line=n)
        except DataError as exc:
            if not exc.syntax:
                raise  # too deep, too long a number: refused, not played
            yield n, text  # still an attempted action: the body answers invalid_args


def _start_inventory(raw: str | None) -> dict[str, Any] | None:
    """The ``--inventory`` object; the environment checks its ids and counts."""
    if raw is None:
        return None
    doc = parse_json_arg(raw, "--inventory")
    if not isinstance(doc, dict):
        raise UserError("--inventory must be a JSON object of item: count")
    return doc


def run(args: argparse.Namespace) -> int:
    start = _start_inventory(args.inventory)
    try:
        env = MirrorCraftEnv(
            EnvSpec(args.world, args.suite, args.task), budget=args.budget, start_inventory=start
        )
    except (UnknownWorldError, UnknownTaskError, RulesError) as exc:
        raise UserError(str(exc)) from None
    except StartInventoryError as exc:
        raise UserError(f"--inventory: {exc.problem}") from None
    obs, _info = env.reset(seed=args.seed)
    if args.actions == "-":
        stream: IO[bytes] | IO[str] = getattr(sys.stdin, "buffer", sys.stdin)
        label = "stdin"
    else:
        path = Path(args.actions)
        if not path.is_file():
            raise UserError(f"no such actions file: {path}")
        stream, label = path.open("rb"), str(path)
    try:
        for _line, action in _actions(stream, label):
            obs, _reward, terminated, truncated, info = env.step(action)
            result = info["result"]
            print_json(
                {
                    "step": obs.step,
                    "skill": result["skill"],
                    "ok": result["ok"],
                    "reason": result["reason"],
                    "message": result["message"],
                    "inventory": obs.inventory,
                    "milestones": [m.advancement for m in obs.progress.milestones if m.done],
                    "score": info["score"],
                }
            )
            if args.observe:
                sys.stdout.write(obs.render_text() + "\n")
            # A program driving play through pipes waits for each reply before it writes the
            # next action: hold nothing back in the pipe's buffer.
            sys.stdout.flush()
            if terminated or truncated:
                why = (
                    "the task is complete"
                    if info["success"]
                    else "the action budget is spent"
                    if truncated
                    else "the body died"
                )
                print(
                    f"mirrorcraft play: the episode ended at step {obs.step} ({why});"
                    " no further actions are played",
                    file=sys.stderr,
                )
                break
    except DataError as exc:
        raise UserError(str(exc)) from None
    finally:
        if args.actions != "-":
            stream.close()
    return 0
