"""``mirrorcraft report``: a static HTML report (plus Markdown and CSV tables) for results.

The directory it writes works offline: figures are inlined PNGs, the style is
inline, and every episode has its own viewer page linked from the episode list.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mirrorcraft.commands.analyze_cmd import add_common_arguments, comparison, load
from mirrorcraft.commands.common import UserError


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report", help="write an HTML report with tables, figures and an episode viewer"
    )
    add_common_arguments(p)
    p.add_argument(
        "--out",
        required=True,
        help="directory to write the report into: a new or empty one, or an earlier report's "
        "(rewritten in place: its files no longer written are removed, any other file kept)",
    )
    p.add_argument(
        "--compare",
        metavar="REFERENCE",
        default="paper",
        help="published results to put beside yours in compare.html: 'paper' (default), a "
        "reference YAML file of the same layout, or 'none'",
    )
    p.add_argument(
        "--no-viewer",
        action="store_true",
        help="skip the per-episode viewer pages (the episode list is still written)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} exists and is not a directory")
    from mirrorcraft.report.files import ReportFolderError, check_folder

    try:
        check_folder(out)  # before the results load, which takes minutes at scale
    except ReportFolderError as exc:
        raise UserError(f"--out: {exc}") from None
    except OSError as exc:
        raise UserError(f"cannot write the report into {out}: {exc.strerror or exc}") from None
    loaded, summary = load(args)
    doc = comparison(args, loaded)
    try:
        from mirrorcraft.report.build import write_report
    except ImportError as exc:  # matplotlib is a runtime dependency; say so if it is missing
        raise UserError(
            f"the report needs {exc.name or 'matplotlib'}: pip install matplotlib "
            "(from a source checkout, pip install -e . installs it)"
        ) from None

    try:
        files = write_report(loaded, summary, out, viewer=not args.no_viewer, comparison=doc)
    except ReportFolderError as exc:
        raise UserError(f"--out: {exc}") from None
    except OSError as exc:
        raise UserError(f"cannot write the report into {out}: {exc.strerror or exc}") from None
    sys.stdout.write(
        f"wrote {out / 'index.html'}: {len(files.tables)} tables, {len(files.figures)} figures, "
        f"{files.episode_pages} episode pages\n"
    )
    return 0
