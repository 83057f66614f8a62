"""``mirrorcraft controls``: the integrity and reachability controls, as a table; non-zero on failure."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mirrorcraft.backends.rulesets import VANILLA, resolve_rules
from mirrorcraft.commands.common import UserError, add_progress_flag, list_option
from mirrorcraft.datapack.suites import list_suites
from mirrorcraft.evaluator.tasks import (
    UnknownTaskError,
    expand_task_selectors,
    progression_tasks,
    techtree_tasks,
)
from mirrorcraft.progress import ProgressLine
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.runner.controls import ControlReport, run_controls
from mirrorcraft.runner.integrity import scan_episode
from mirrorcraft.runner.techtree_controls import TechTreeReport, run_techtree_controls
from mirrorcraft.world.registry import MAIN, STUDIES, world_ids, world_problem


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "controls", help="check routes, the oracle, twin equality, observability and integrity"
    )
    p.add_argument(
        "--study",
        choices=[*STUDIES, "all"],
        default=MAIN,
        help="packaged worlds to check when no --world is given: main (the ten, default),"
        " horizon (the horizon study's 25) or all",
    )
    p.add_argument(
        "--world",
        action="append",
        default=None,
        help="worlds, repeated or comma-separated (default: the --study's worlds)",
    )
    p.add_argument(
        "--rules",
        action="append",
        default=None,
        help="rule sets, repeated or comma-separated (default: vanilla and M01-M06)",
    )
    p.add_argument(
        "--task",
        action="append",
        default=None,
        help="task ids or selectors such as group:iron, repeated or comma-separated (default:"
        " the three progression tasks,"
        " or every tech-tree task with --techtree)",
    )
    p.add_argument(
        "--techtree",
        action="store_true",
        help="tech-tree control instead: the oracle obtains every item in every world, and"
        " the tasks each rule set leaves without a static route are listed",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    add_progress_flag(p)
    p.add_argument(
        "--skip-integrity", action="store_true", help="skip the hidden-rule integrity scan"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    args.world, args.rules, args.task = (
        list_option(args.world),
        list_option(args.rules),
        list_option(args.task),
    )
    worlds = args.world or world_ids(None if args.study == "all" else args.study)
    rules = args.rules or [VANILLA, *(m.id for m in list_suites())]
    default = techtree_tasks() if args.techtree else progression_tasks()
    try:
        tasks = list(expand_task_selectors(args.task)) if args.task else default
    except UnknownTaskError as exc:
        raise UserError(str(exc)) from None
    for w in worlds:
        if problem := world_problem(w):
            raise UserError(problem)
    for name in rules:
        try:
            resolve_rules(name)
        except RulesError as exc:
            raise UserError(str(exc)) from None
    if args.techtree:
        return _run_techtree(worlds, rules, tasks, args.json, args.progress)
    line = ProgressLine(
        "controls", len(worlds) * len(rules) * len(tasks), unit="conditions", enabled=args.progress
    )
    report = run_controls(
        worlds,
        rules,
        tasks,
        progress=lambda row: line.advance(note=f"{row.world} {row.rules} {row.task}"),
    )
    line.finish()
    leaks = (
        []
        if args.skip_integrity
        else [leak for r in rules for t in tasks for leak in scan_episode(worlds[0], r, t)]
    )
    if args.json:
        print(json.dumps(_as_json(report, leaks, args.skip_integrity), indent=2, sort_keys=True))
    else:
        print(_as_text(report, leaks, args.skip_integrity))
    return 0 if report.passed and not leaks else 1


def _as_json(report: ControlReport, leaks: list[Any], skipped: bool) -> dict[str, Any]:
    return {
        "passed": report.passed and not leaks,
        "integrity_scan": "skipped" if skipped else "done",
        "rows": [dict(r.__dict__, passed=r.passed) for r in report.rows],
        "observability": [dict(o.__dict__, passed=o.passed) for o in report.observability],
        "changes_on_no_route": [
            {"suite": s, "change": i, "sheet": text} for s, i, text in report.off_route
        ],
        "integrity_leaks": [leak.__dict__ for leak in leaks],
    }


def _as_text(report: ControlReport, leaks: list[Any], skipped: bool) -> str:
    head = f"{'world':<16}{'rules':<9}{'task':<13}{'route':<7}{'oracle':<14}{'twins':<14}result"
    lines = [head, "-" * len(head)]
    for r in report.rows:
        oracle = f"{r.oracle_actions}/{r.budget}" + ("" if r.oracle_success else " FAIL")
        twins = ("equal" if r.twins_equal and r.neutral_equal else "DIFFER") + f" ({r.twin_prefix})"
        lines.append(
            f"{r.world:<16}{r.rules:<9}{r.task:<13}{('yes' if r.route else 'NO'):<7}{oracle:<14}{twins:<14}"
            f"{'ok' if r.passed else 'FAIL'}"
        )
    obs_ok = sum(o.passed for o in report.observability)
    lines.append("")
    lines.append(
        f"observable changes: {obs_ok}/{len(report.observability)} triggers differ from vanilla and are logged"
    )
    for o in report.observability:
        if not o.passed:
            lines.append(f"  FAIL {o.world} {o.rules} change {o.change} ({o.trigger}): {o.detail}")
    if report.off_route:
        lines.append("changes that lie on no selected task's route (flagged):")
        lines += [f"  {s} change {i}: {text}" for s, i, text in report.off_route]
    else:
        lines.append("every change lies on at least one task's route")
    if skipped:
        lines.append("integrity scan: skipped")
    else:
        lines.append(f"integrity scan: {'no leaks' if not leaks else f'{len(leaks)} LEAKS'}")
        lines += [
            f"  {leak.rules} {leak.task} {leak.where}: {leak.token!r} in {leak.excerpt!r}"
            for leak in leaks[:20]
        ]
    passed = report.passed and not leaks
    lines.append(
        f"controls {'PASSED' if passed else 'FAILED'}: {sum(r.passed for r in report.rows)}/{len(report.rows)} rows"
    )
    return "\n".join(lines)


def _run_techtree(
    worlds: list[str], rules: list[str], tasks: list[str], as_json: bool, show: bool | None
) -> int:
    line = ProgressLine(
        "tech-tree controls", len(worlds) * len(tasks), unit="oracle runs", enabled=show
    )
    report = run_techtree_controls(
        worlds, rules, tasks, progress=lambda run: line.advance(note=f"{run.world} {run.task}")
    )
    line.finish()
    if as_json:
        print(json.dumps(_techtree_json(report), indent=2, sort_keys=True))
    else:
        print(_techtree_text(report, worlds, tasks))
    return 0 if report.passed else 1


def _techtree_json(report: TechTreeReport) -> dict[str, Any]:
    return {
        "passed": report.passed,
        "oracle": [dict(r.__dict__, passed=r.passed) for r in report.oracle],
        "no_route": report.no_route,
    }


def _techtree_text(report: TechTreeReport, worlds: list[str], tasks: list[str]) -> str:
    runs: dict[str, list[Any]] = {t: [] for t in tasks}
    for r in report.oracle:
        runs[r.task].append(r)
    head = f"{'task':<40}{'budget':>7}{'oracle max':>12}{'solved':>9}  result"
    lines = [head, "-" * len(head)]
    for task, rows in runs.items():
        solved = sum(r.success for r in rows)
        worst = max((r.actions for r in rows if r.success), default=0)
        failed = [r.world for r in rows if not r.passed]
        lines.append(
            f"{task:<40}{rows[0].budget if rows else 0:>7}{worst:>12}{solved:>5}/{len(worlds):<3}  "
            + ("ok" if not failed else "FAIL in " + ", ".join(failed))
        )
    lines.append("")
    for name, missing in report.no_route.items():
        if not missing:
            lines.append(f"{name}: every task has a route in every world")
            continue
        lines.append(f"{name}: {len(missing)} task(s) without a route")
        lines += [f"  {task} ({len(ws)}/{len(worlds)} worlds)" for task, ws in missing.items()]
    ok = sum(r.passed for r in report.oracle)
    lines.append(
        f"tech-tree controls {'PASSED' if report.passed else 'FAILED'}: "
        f"{ok}/{len(report.oracle)} oracle runs within budget"
    )
    return "\n".join(lines)
