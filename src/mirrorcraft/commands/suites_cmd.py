"""``mirrorcraft suites list|show|build|check``: the rule suites and users' own manifests or packs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mirrorcraft.commands.common import UserError, add_progress_flag
from mirrorcraft.datapack.manifest import ManifestError, load_manifest_file
from mirrorcraft.datapack.routes import analyse, task_route
from mirrorcraft.datapack.suites import compiled, find_suite, list_suites
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.progress import ProgressLine
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.pack import load_pack
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset
from mirrorcraft.runner.controls import world_resources
from mirrorcraft.world.registry import load_world, world_ids


def add_parser(sub: Any) -> None:
    p = sub.add_parser("suites", help="list, show, build or check rule suites")
    s = p.add_subparsers(dest="suites_command", metavar="ACTION", required=True)
    s.add_parser("list", help="the packaged suites")
    show = s.add_parser("show", help="a suite's rule sheet (the disclosed-condition text)")
    show.add_argument("suite", help="suite id or manifest path")
    build = s.add_parser("build", help="compile suites to datapack zips")
    build.add_argument(
        "suites", nargs="*", help="suite ids or manifest paths (default: all packaged)"
    )
    build.add_argument("--out", required=True, help="folder for the zips and rule sheets")
    check = s.add_parser("check", help="validate a manifest or datapack and check every task route")
    check.add_argument("path", help="a suite id, a manifest (.yaml/.json) or a datapack folder/zip")
    add_progress_flag(check)
    p.set_defaults(handler=run)


def _manifest(ref: str) -> Any:
    found = find_suite(ref)
    if found is not None:
        return found
    path = Path(ref)
    if not path.exists():
        raise UserError(f"{ref!r} is neither a packaged suite id nor an existing file")
    if path.is_dir() or path.suffix == ".zip":
        raise UserError(
            f"{ref} is a datapack, which holds rules but no rule sheet: show and build take "
            "a suite id or a manifest (.yaml); 'suites check' takes a datapack"
        )
    try:
        return load_manifest_file(path)
    except ManifestError as exc:
        raise UserError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    cmd = args.suites_command
    if cmd == "list":
        for m in list_suites():
            print(f"{m.id}  {m.name:<28} {len(m.changes)} changes  {m.description}")
        return 0
    if cmd == "show":
        suite = _compile(_manifest(args.suite))
        print(suite.render_sheet())
        for note in suite.notes:
            print(f"note: {note}")
        return 0
    if cmd == "build":
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for ref in args.suites or [m.id for m in list_suites()]:
            suite = _compile(_manifest(ref))
            (out / f"{suite.manifest.id}.zip").write_bytes(suite.zip_bytes())
            (out / f"{suite.manifest.id}.sheet.txt").write_text(
                suite.render_sheet() + "\n", encoding="utf-8"
            )
            print(f"wrote {out / (suite.manifest.id + '.zip')} ({len(suite.files)} files)")
        return 0
    return _check(args.path, args.progress)


def _compile(manifest: Any) -> Any:
    try:
        return compiled(manifest)
    except ManifestError as exc:
        raise UserError(str(exc)) from None


def _check(ref: str, show: bool | None) -> int:
    path = Path(ref)
    is_pack = find_suite(ref) is None and path.exists() and (path.is_dir() or path.suffix == ".zip")
    try:
        if is_pack:
            rules = RuleSet.load([load_pack(path)])
            tasks = ["iron_armor", "diamond", "enchantment"]
            name = path.name
        else:
            manifest = _manifest(ref)
            suite = _compile(manifest)
            rules = RuleSet.load([suite.pack()], name=manifest.id)
            tasks = list(manifest.selected_tasks)
            name = manifest.id
            for note in suite.notes:
                print(f"note: {note}")
    except RulesError as exc:
        raise UserError(str(exc)) from None
    vanilla = vanilla_ruleset()
    changed = sorted(k for k, doc in rules.documents.items() if vanilla.documents.get(k) != doc)
    print(f"{name}: loads cleanly; {len(changed)} resource(s) differ from vanilla")
    failures = 0
    worlds = world_ids()
    line = ProgressLine("route check", len(worlds), unit="worlds", enabled=show)
    for world in worlds:
        line.set_note(world)
        blocks, mobs = world_resources(load_world(world))
        reach = analyse(rules, blocks, mobs)
        for task in tasks:
            ok, _route = task_route(rules, reach, get_task(task).final.advancement)
            if not ok:
                failures += 1
                print(f"  NO ROUTE: {task} in {world}")
        line.advance()
    line.finish()
    print(
        f"routes: {'every task has a route in every world' if not failures else f'{failures} missing'}"
    )
    return 0 if not failures else 1
