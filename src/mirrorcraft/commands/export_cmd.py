"""``mirrorcraft export``: episode records from a results database as JSONL, CSV or Parquet."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from mirrorcraft.commands.common import UserError

NESTED = ("milestones", "score_trace", "signatures", "encounters", "template_hashes")
FORMATS = ("jsonl", "csv", "parquet")
EXTENSIONS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="export episode records (JSONL, CSV or Parquet)")
    p.add_argument("results", help="results database (SQLite) or JSONL file")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="jsonl, csv or parquet (default: from the --out extension; .jsonl if it has none)",
    )
    p.add_argument("--out", required=True, help="file to write (.jsonl, .csv or .parquet)")
    p.set_defaults(handler=run)


def _rows(results: str) -> list[dict[str, Any]]:
    from mirrorcraft.analysis import RecordsError, load_results

    try:
        loaded = load_results(results, allow_empty=True)
    except RecordsError as exc:
        raise UserError(str(exc)) from None
    for status, n in loaded.excluded.items():
        print(f"left out: {n} episode(s) with status {status!r}", file=sys.stderr)
    return [r.to_json() for r in loaded.records]


def _flat(doc: dict[str, Any]) -> dict[str, Any]:
    """One row per episode: nested fields (traces, encounters) become JSON text columns."""
    return {k: json.dumps(v, sort_keys=True) if k in NESTED else v for k, v in doc.items()}


def export_format(out: Path, given: str | None) -> str:
    """The format to write: the one given, else the one the extension names.

    A format that contradicts a known extension (``--format jsonl --out e.csv``) is refused
    rather than writing one format under another's name.
    """
    by_ext = EXTENSIONS.get(out.suffix.lower())
    if given is None:
        if by_ext is None and out.suffix:
            raise UserError(
                f"cannot tell the format from {out.name!r}: pass --format "
                f"({', '.join(FORMATS)}) or use a .jsonl, .csv or .parquet file name"
            )
        return by_ext or "jsonl"
    if by_ext is not None and by_ext != given:
        raise UserError(
            f"--format {given} does not match the file name {out.name!r} ({by_ext}): "
            "change one of them"
        )
    return given


SQLITE_HEADER = b"SQLite format 3\x00"


def _refuse_database(out: Path) -> None:
    """Never write an export over a SQLite file: ``--format jsonl --out results.sqlite``
    would otherwise replace a run's results (its own input, even) with the export."""
    try:
        with out.open("rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError:
        return  # absent (or unreadable: the write below says why)
    if head == SQLITE_HEADER:
        raise UserError(
            f"--out {out} is a SQLite database (a results file?); export does not write "
            "over one: name another file"
        )


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    args.format = export_format(out, args.format)
    _refuse_database(out)
    rows = _rows(args.results)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        if args.format == "jsonl":
            with out.open("w", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(row, sort_keys=True) + "\n")
        elif args.format == "csv":
            flat = [_flat(r) for r in rows]
            fields = sorted({k for r in flat for k in r})
            with out.open("w", encoding="utf-8", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=fields)
                writer.writeheader()
                writer.writerows(flat)
        else:
            try:
                pa = importlib.import_module("pyarrow")
                pq = importlib.import_module("pyarrow.parquet")
            except ImportError:
                raise UserError(
                    "Parquet export needs pyarrow: pip install 'mirrorcraft[parquet]' "
                    "(from a source checkout: pip install -e '.[parquet]')"
                ) from None
            pq.write_table(pa.Table.from_pylist([_flat(r) for r in rows]), str(out))
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"wrote {len(rows)} episode records to {out}")
    return 0
