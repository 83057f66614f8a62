"""``mirrorcraft analyze``: the paper's tables for a results database or JSONL file.

Plain text by default (one aligned table per section, "–" for a missing cell);
``--json`` prints the same numbers as one JSON document whose keys are listed in
``docs/analysis.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mirrorcraft.analysis.loading import LoadedResults, RecordsError, load_results
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.commands.common import UserError


def add_common_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared by ``analyze`` and ``report``."""
    p.add_argument("results", help="results database (SQLite) or JSONL file of episode records")
    p.add_argument(
        "--threshold",
        type=float,
        default=50.0,
        help="compared set: minimum Vanilla SR (%%) on each compared task (default 50)",
    )
    p.add_argument(
        "--checkpoints",
        default="100,150,200",
        help="action counts for the horizon table, comma-separated (default 100,150,200)",
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser("analyze", help="print Score, SR, RIE and the other tables for results")
    add_common_arguments(p)
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    p.set_defaults(handler=run)


def parse_checkpoints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(
            f"--checkpoints must be whole numbers separated by commas, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise UserError("--checkpoints needs at least one positive action count")
    return values


def load(args: argparse.Namespace) -> tuple[LoadedResults, dict[str, Any]]:
    """Read the results named on the command line and summarize them."""
    if not 0.0 <= args.threshold <= 100.0:
        raise UserError("--threshold is a percentage between 0 and 100")
    checkpoints = parse_checkpoints(args.checkpoints)
    try:
        loaded = load_results(args.results)
    except RecordsError as exc:
        raise UserError(str(exc)) from None
    summary = summarize(
        loaded.records,
        threshold=args.threshold,
        checkpoints=checkpoints,
        excluded=loaded.excluded,
    )
    return loaded, summary


def text_report(loaded: LoadedResults, summary: dict[str, Any]) -> str:
    from mirrorcraft.report.render import render_text
    from mirrorcraft.report.tables import build_tables, skipped

    counts = summary["episodes"]
    lines = [
        f"{loaded.path}: {counts['total']} episodes "
        f"({counts['vanilla']} Vanilla, {counts['mirror']} Mirror, "
        f"{counts['disclosed']} with disclosed rules)"
    ]
    for status, n in counts["excluded"].items():
        if status == "earlier_spec":
            lines.append(
                f"left out: {n} episode(s) of an earlier version of the spec (kept in the "
                "database; the folder was resumed with --allow-changed-spec)"
            )
        else:
            lines.append(f"left out: {n} episode(s) with status {status!r}")
    lines += [f"note: {why}" for why in skipped(summary)]
    blocks = ["\n".join(lines) + "\n"] + [render_text(t) for t in build_tables(summary)]
    return "\n".join(blocks)


def run(args: argparse.Namespace) -> int:
    loaded, summary = load(args)
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=1, sort_keys=False, allow_nan=False) + "\n")
    else:
        sys.stdout.write(text_report(loaded, summary))
    return 0
