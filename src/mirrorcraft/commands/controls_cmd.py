"""``mirrorcraft controls``: the integrity and reachability controls, as a table; non-zero on failure."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mirrorcraft.backends.rulesets import VANILLA
from mirrorcraft.commands.common import UserError
from mirrorcraft.datapack.suites import list_suites
from mirrorcraft.evaluator.tasks import task_table
from mirrorcraft.runner.controls import ControlReport, run_controls
from mirrorcraft.runner.integrity import scan_episode
from mirrorcraft.world.registry import world_table


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "controls", help="check routes, the oracle, twin equality, observability and integrity"
    )
    p.add_argument("--world", action="append", default=None, help="worlds (default: all ten)")
    p.add_argument(
        "--rules", action="append", default=None, help="rule sets (default: vanilla and M01-M06)"
    )
    p.add_argument("--task", action="append", default=None, help="tasks (default: all three)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--skip-integrity", action="store_true", help="skip the hidden-rule integrity scan"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    worlds = args.world or list(world_table())
    rules = args.rules or [VANILLA, *(m.id for m in list_suites())]
    tasks = args.task or list(task_table())
    for w in worlds:
        if w not in world_table():
            raise UserError(f"unknown world {w!r}")
    for t in tasks:
        if t not in task_table():
            raise UserError(f"unknown task {t!r}")
    report = run_controls(worlds, rules, tasks)
    leaks = (
        []
        if args.skip_integrity
        else [leak for r in rules for t in tasks for leak in scan_episode(worlds[0], r, t)]
    )
    if args.json:
        print(json.dumps(_as_json(report, leaks), indent=2, sort_keys=True))
    else:
        print(_as_text(report, leaks, args.skip_integrity))
    return 0 if report.passed and not leaks else 1


def _as_json(report: ControlReport, leaks: list[Any]) -> dict[str, Any]:
    return {
        "passed": report.passed and not leaks,
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
