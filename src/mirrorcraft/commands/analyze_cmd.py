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
from mirrorcraft.analysis.validate import Declared
from mirrorcraft.commands.common import UserError

SHOWN_INVALID = 20
"""How many left-out inconsistent records the text output lists (``--json`` lists all)."""


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
        default=None,
        help="action counts for the horizon table, comma-separated (default: the run's grid"
        " spec checkpoints for a results database, else 100,150,200)",
    )
    p.add_argument(
        "--strata",
        choices=("configuration", "model-task"),
        default="configuration",
        help="strata of the 95%% intervals and Cochran's Q: one per model, task and "
        "configuration (default; the paper's '30 episodes per cell'), or one per model and task "
        "whatever the configuration (its 'stratified by model and task' read literally; wider "
        "intervals where configurations are pooled)",
    )
    p.add_argument(
        "--bonferroni",
        choices=("design", "testable"),
        default="design",
        help="the within-suite Bonferroni family: every suite and model where a compared "
        "configuration ran with hidden rules, undefined tests included (default; the paper's "
        "'12 tests (6 suites and 2 models)'), or only those with at least two compared "
        "configurations' RIEs",
    )
    p.add_argument(
        "--allow-empty",
        action="store_true",
        help="accept results without any evaluation episode (otherwise an error)",
    )
    add_record_arguments(p)


def add_record_arguments(p: argparse.ArgumentParser) -> None:
    """Options of every command that reads records (``analyze``, ``report``, ``export``):
    what the record checks accept, and leaving inconsistent records out."""
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out inconsistent records (and list them) instead of refusing the file",
    )
    p.add_argument(
        "--rule-set",
        action="append",
        default=[],
        metavar="ID",
        help="accept this user rule-set id in the records (repeatable)",
    )
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME",
        help="accept this user agent configuration in the records (repeatable)",
    )


def add_parser(sub: Any) -> None:
    p = sub.add_parser("analyze", help="print Score, SR, RIE and the other tables for results")
    add_common_arguments(p)
    p.add_argument(
        "--compare",
        metavar="REFERENCE",
        default=None,
        help="put your numbers beside published ones instead: 'paper' (the MirrorCraft "
        "paper's tables) or a reference YAML file of the same layout",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead")
    p.set_defaults(handler=run)


def parse_checkpoints(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(
            f"--checkpoints must be whole numbers separated by commas, got {text!r}"
        ) from None
    if not values:
        raise UserError(
            f"--checkpoints needs at least one positive action count, got {text!r}"
            " (leave the option out for the default checkpoints)"
        )
    if any(v < 1 for v in values):
        raise UserError(f"--checkpoints are action counts of 1 or more, got {text!r}")
    return values


DEFAULT_CHECKPOINTS = "100,150,200"


def _spec_checkpoints(results: str) -> str:
    """The checkpoints the run itself reported (its spec's), so ``analyze``, ``report`` and
    the run's own report agree; the paper's 100, 150, 200 otherwise. An accumulation
    spec's ``checkpoints`` count training episodes (when its store is frozen), not
    actions, so they are not the horizon table's."""
    from mirrorcraft.analysis.loading import stored_spec

    spec = stored_spec(results) or {}
    if spec.get("kind") == "accumulation":
        return DEFAULT_CHECKPOINTS
    values = spec.get("checkpoints")
    if isinstance(values, list) and values and all(isinstance(v, int) and v > 0 for v in values):
        return ",".join(str(v) for v in values)
    return DEFAULT_CHECKPOINTS


def load(args: argparse.Namespace) -> tuple[LoadedResults, dict[str, Any]]:
    """Read the results named on the command line and summarize them."""
    if not 0.0 <= args.threshold <= 100.0:
        raise UserError("--threshold is a percentage between 0 and 100")
    # An explicit empty value ("--checkpoints ''", e.g. an unset shell variable) is refused,
    # not read as "the default": only an absent option falls back.
    given = args.checkpoints
    checkpoints = parse_checkpoints(_spec_checkpoints(args.results) if given is None else given)
    from mirrorcraft.analysis.coverage import note_unfinished, training_database

    declared = Declared(frozenset(args.rule_set), frozenset(args.agent))
    training = training_database(args.results)
    try:
        loaded = load_results(
            args.results,
            skip_invalid=args.skip_invalid,
            allow_empty=args.allow_empty,
            declared=declared,
        )
    except RecordsError as exc:
        raise UserError(str(exc)) from None
    try:
        # An accumulation run's training episodes: their cost is the run's too, and the
        # training-stream table is theirs.
        train = (
            []
            if training is None
            else load_results(
                training, skip_invalid=args.skip_invalid, allow_empty=True, declared=declared
            ).records
        )
    except RecordsError as exc:
        raise UserError(
            f"{exc} (the training episodes of the accumulation run whose results these are:"
            " their usage is summed with the evaluation's; restore the file or move it away"
            " to analyse the evaluation alone)"
        ) from None
    summary = summarize(
        loaded.records,
        threshold=args.threshold,
        checkpoints=checkpoints,
        excluded=loaded.excluded,
        invalid=[i.to_json() for i in loaded.invalid],
        train_records=train,
        strata=args.strata,
        family=args.bonferroni,
    )
    note_unfinished(summary, args.results, (r.episode_id for r in loaded.records))
    from mirrorcraft.analysis.usage import note_fault_attempts

    try:
        note_fault_attempts(summary, loaded.path, loaded.kind, training)
    except RecordsError as exc:
        raise UserError(str(exc)) from None
    return loaded, summary


def text_report(loaded: LoadedResults, summary: dict[str, Any]) -> str:
    from mirrorcraft.report.render import render_text
    from mirrorcraft.report.tables import build_tables, excluded_notes, skipped, unfinished_note

    counts = summary["episodes"]
    lines = [
        f"{loaded.path}: {counts['total']} episodes "
        f"({counts['vanilla']} Vanilla, {counts['mirror']} Mirror, "
        f"{counts['disclosed']} with disclosed rules)"
        + (f" + {counts['controls']} control episode(s)" if counts["controls"] else "")
    ]
    lines += excluded_notes(counts["excluded"])
    left = unfinished_note(summary)
    if left:
        lines.append(left)
    from mirrorcraft.analysis.coverage import writing_run

    running = writing_run(loaded.path)
    if running:
        lines.append(running)
    invalid = counts["invalid"]
    if invalid:
        lines.append(f"left out: {len(invalid)} inconsistent record(s) (--skip-invalid):")
        lines += [f"  {i['where']}: {i['reason']}" for i in invalid[:SHOWN_INVALID]]
        if len(invalid) > SHOWN_INVALID:
            lines.append(f"  ... and {len(invalid) - SHOWN_INVALID} more (all in --json)")
    lines += [f"note: {why}" for why in skipped(summary)]
    blocks = ["\n".join(lines) + "\n"] + [render_text(t) for t in build_tables(summary)]
    return "\n".join(blocks)


def comparison(args: argparse.Namespace, loaded: LoadedResults) -> dict[str, Any] | None:
    """The side-by-side document for ``--compare`` (None when it is not asked for)."""
    name = getattr(args, "compare", None)
    if name is None or name == "none":
        return None
    from mirrorcraft.analysis.compare import compare
    from mirrorcraft.analysis.reference import ReferenceDataError, load_reference

    try:
        reference = load_reference(name)
    except ReferenceDataError as exc:
        raise UserError(str(exc)) from None
    return compare(
        loaded.records,
        reference,
        threshold=args.threshold,
        strata=args.strata,
        family=args.bonferroni,
    )


def compare_report(loaded: LoadedResults, doc: dict[str, Any]) -> str:
    from mirrorcraft.report.compare_tables import comparison_tables
    from mirrorcraft.report.render import render_text

    c = doc["counts"]
    families = ", ".join(f"{k} -> {v}" for k, v in sorted(doc["model_families"].items()))
    head = (
        f"{loaded.path}: {len(loaded.records)} episodes beside {doc['reference']['title']}\n"
        f"your models by paper family: {families or 'none'}\n"
        f"{c['both']} quantities on both sides ({c['paper_in_your_ci']} of "
        f"{c['with_interval']} published values inside your 95% interval), "
        f"{c['paper only']} only in the paper, {c['yours only']} only in yours\n"
    )
    return "\n".join([head, *(render_text(t) for t in comparison_tables(doc))])


def run(args: argparse.Namespace) -> int:
    loaded, summary = load(args)
    doc = comparison(args, loaded)
    if doc is not None:
        if args.json:
            sys.stdout.write(json.dumps(doc, indent=1, allow_nan=False) + "\n")
        else:
            sys.stdout.write(compare_report(loaded, doc))
        return 0
    if args.json:
        sys.stdout.write(json.dumps(summary, indent=1, sort_keys=False, allow_nan=False) + "\n")
    else:
        sys.stdout.write(text_report(loaded, summary))
    return 0
