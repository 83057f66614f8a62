"""``mirrorcraft export``: episode records from a results database as JSONL, CSV or Parquet."""

from __future__ import annotations

import argparse
import csv
import importlib
import json
from pathlib import Path
from typing import Any

from mirrorcraft.commands.common import UserError

NESTED = ("milestones", "score_trace", "signatures", "encounters", "template_hashes")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="export episode records (JSONL, CSV or Parquet)")
    p.add_argument("results", help="results database (SQLite) or JSONL file")
    p.add_argument("--format", choices=["jsonl", "csv", "parquet"], default="jsonl")
    p.add_argument("--out", required=True, help="file to write")
    p.set_defaults(handler=run)


def _rows(results: str) -> list[dict[str, Any]]:
    from mirrorcraft.analysis import RecordsError, load_results

    try:
        return [r.to_json() for r in load_results(results, allow_empty=True).records]
    except RecordsError as exc:
        raise UserError(str(exc)) from None


def _flat(doc: dict[str, Any]) -> dict[str, Any]:
    """One row per episode: nested fields (traces, encounters) become JSON text columns."""
    return {k: json.dumps(v, sort_keys=True) if k in NESTED else v for k, v in doc.items()}


def run(args: argparse.Namespace) -> int:
    rows = _rows(args.results)
    out = Path(args.out)
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
                    "Parquet export needs pyarrow: pip install 'mirrorcraft[parquet]'"
                ) from None
            pq.write_table(pa.Table.from_pylist([_flat(r) for r in rows]), str(out))
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"wrote {len(rows)} episode records to {out}")
    return 0
