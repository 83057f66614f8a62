"""``mirrorcraft export``: episode records from a results database as JSONL, CSV or Parquet.

JSONL lines are the stored records (``docs/records.md``). CSV and Parquet have one row per
episode and the same columns in every export (``COLUMNS``, in name order, even with no
rows): the nested fields are JSON text, and a Parquet column keeps its type when all of
its values are null or whole numbers in one run, so files of different runs concatenate.
The file is written beside its destination and moved into place when complete, so a failed
export never leaves half a file (or replaces an earlier export with one).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from mirrorcraft.commands.analyze_cmd import add_record_arguments
from mirrorcraft.commands.common import UserError
from mirrorcraft.report.spreadsheet import formula_safe
from mirrorcraft.runner.records import EpisodeRecord, json_default

FORMATS = ("jsonl", "csv", "parquet")
EXTENSIONS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}

_STR, _INT, _FLOAT, _BOOL, _JSON = "string", "int64", "float64", "bool", "json"
COLUMN_TYPES: dict[str, str] = {
    **dict.fromkeys(
        ("episode_id", "experiment", "world", "biome", "rules", "task", "agent", "model",
         "disclosure", "termination", "software_version", "ruleset_fingerprint",
         "vanilla_fingerprint", "world_fingerprint", "spec_hash", "agent_error",
         "body_fingerprint", "task_fingerprint", "rules_title"),
        _STR,
    ),
    **dict.fromkeys(
        ("budget", "repetition", "seed", "score", "actions_used", "model_calls",
         "prompt_tokens", "completion_tokens", "cached_calls", "estimated_calls",
         "call_budget", "schema_version", "unusable_replies"),
        _INT,
    ),
    **dict.fromkeys(("cost_usd", "wall_seconds"), _FLOAT),
    **dict.fromkeys(("success", "is_mirror"), _BOOL),
    **dict.fromkeys(
        ("milestones", "score_trace", "signatures", "encounters", "template_hashes",
         "agent_origin", "memory", "failed_attempts"),
        _JSON,
    ),
}  # fmt: skip
"""Every column of a CSV or Parquet export and its type (``json``: JSON text): every field of
the record. Nullable: ``cost_usd`` (unknown price), ``call_budget`` (no cap), and the fields a
record may not have recorded (``UNRECORDED_WHEN_NONE``: ``failed_attempts``,
``unusable_replies``, ``rules_title``); an empty CSV cell is a null."""
COLUMNS = tuple(sorted(COLUMN_TYPES))
_TEXT_COLUMNS = tuple(name for name in COLUMNS if COLUMN_TYPES[name] == _STR)
"""The columns a CSV export guards against formulas (JSON text starts with ``{``, ``[`` or a
digit, and numbers are written as numbers)."""
PARQUET_BATCH = 5000
"""Rows per Parquet row group, so an export of any size is written in bounded memory."""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="export episode records (JSONL, CSV or Parquet)")
    p.add_argument("results", help="results database (SQLite) or JSONL file")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="jsonl, csv or parquet (default: from the --out extension; .jsonl if it has none)",
    )
    p.add_argument(
        "--out",
        required=True,
        help="file to write (.jsonl, .csv or .parquet); an existing file is replaced",
    )
    p.add_argument(
        "--csv-raw",
        action="store_true",
        help="CSV: write text exactly as stored; by default a text cell a spreadsheet would "
        "run as a formula (starting =, +, -, @) gets a leading apostrophe",
    )
    add_record_arguments(p)
    p.set_defaults(handler=run)


SHOWN_INVALID = 20
"""How many inconsistent records left out (``--skip-invalid``) are named on stderr."""


def _records(args: argparse.Namespace) -> list[EpisodeRecord]:
    from mirrorcraft.analysis import RecordsError, load_results
    from mirrorcraft.analysis.validate import Declared

    results = args.results
    try:
        loaded = load_results(
            results,
            allow_empty=True,
            skip_invalid=args.skip_invalid,
            declared=Declared(frozenset(args.rule_set), frozenset(args.agent)),
        )
    except RecordsError as exc:
        raise UserError(str(exc)) from None
    from mirrorcraft.report.tables import excluded_notes

    for line in excluded_notes(loaded.excluded):
        print(line, file=sys.stderr)
    if loaded.invalid:
        print(f"left out: {len(loaded.invalid)} inconsistent record(s):", file=sys.stderr)
        for bad in loaded.invalid[:SHOWN_INVALID]:
            print(f"  {bad.message()}", file=sys.stderr)
        if len(loaded.invalid) > SHOWN_INVALID:
            print(f"  ... and {len(loaded.invalid) - SHOWN_INVALID} more", file=sys.stderr)
    from mirrorcraft.analysis.coverage import unfinished, writing_run

    left = unfinished(results, (r.episode_id for r in loaded.records))
    if left is not None and left[0]:
        print(
            f"not run yet: {left[0]} of the {left[1]} episodes its spec plans are not in the "
            "export (a run cut short, interrupted or still running, or episodes that "
            "faulted; `mirrorcraft run` with the same spec and --out finishes them)",
            file=sys.stderr,
        )
    running = writing_run(results)
    if running:
        print(running, file=sys.stderr)
    return loaded.records


def _flat(r: EpisodeRecord) -> dict[str, Any]:
    """One row per episode: nested fields (traces, encounters, memory) become JSON text."""
    row: dict[str, Any] = {}
    for name in COLUMNS:
        value = r.is_mirror if name == "is_mirror" else getattr(r, name)
        if COLUMN_TYPES[name] == _JSON and value is not None:
            value = json.dumps(value, sort_keys=True, default=json_default)
        row[name] = value
    return row


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
    if out.is_dir():
        raise UserError(f"--out {out} is a directory: name the file to write")
    if not out.is_file():
        return  # absent, or a stream (/dev/stdout, a named pipe): reading one would wait forever
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


def _write_jsonl(path: Path, records: Iterable[EpisodeRecord]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            f.write(r.json_text() + "\n")


def _csv_writer(raw: bool) -> Callable[[Path, Iterable[EpisodeRecord]], None]:
    """The CSV writer: text a spreadsheet would run as a formula is guarded unless ``raw``."""

    def row(r: EpisodeRecord) -> dict[str, Any]:
        flat = _flat(r)
        if not raw:
            for name in _TEXT_COLUMNS:
                flat[name] = formula_safe(flat[name])
        return flat

    def write(path: Path, records: Iterable[EpisodeRecord]) -> None:
        with path.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=COLUMNS)
            writer.writeheader()
            writer.writerows(row(r) for r in records)

    return write


def _parquet_writer() -> Callable[[Path, Iterable[EpisodeRecord]], None]:
    """The Parquet writer (imported first, so a missing pyarrow is said before any work)."""
    try:
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise UserError(
            "Parquet export needs pyarrow: pip install 'mirrorcraft[parquet]' "
            "(from a source checkout: pip install -e '.[parquet]')"
        ) from None
    arrow = {_STR: pa.string(), _JSON: pa.string(), _INT: pa.int64(), _FLOAT: pa.float64()}
    arrow[_BOOL] = pa.bool_()
    schema = pa.schema([pa.field(name, arrow[COLUMN_TYPES[name]]) for name in COLUMNS])

    def write(path: Path, records: Iterable[EpisodeRecord]) -> None:
        with pq.ParquetWriter(str(path), schema) as writer:
            for batch in _batches((_flat(r) for r in records), PARQUET_BATCH):
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            # ParquetWriter writes the schema (and so every column's type) with no rows too.

    return write


def _batches(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    args.format = export_format(out, args.format)
    _refuse_database(out)
    if args.csv_raw and args.format != "csv":
        raise UserError(f"--csv-raw is for CSV exports; this one is {args.format}")
    write: Callable[[Path, Iterable[EpisodeRecord]], None] = {
        "jsonl": _write_jsonl,
        "csv": _csv_writer(args.csv_raw),
    }.get(args.format) or _parquet_writer()
    records = _records(args)
    if out.exists() and not out.is_file():  # /dev/stdout, a named pipe: written as it goes
        try:
            write(out, records)
        except BrokenPipeError:
            return 0  # its reader went away (``| head``): end quietly, as analyze does
        except OSError as exc:
            raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
        print(f"wrote {len(records)} episode records to {out}", file=sys.stderr)
        return 0
    target = out.resolve() if out.is_symlink() else out  # a link keeps pointing at the export
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write(partial, records)
        os.replace(partial, target)
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    print(f"wrote {len(records)} episode records to {out}")
    return 0
