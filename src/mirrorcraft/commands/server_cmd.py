"""``mirrorcraft server worldgen|validate|prepare|check``: real Minecraft 1.19 servers.

``worldgen`` and ``validate`` need no server jar. ``prepare`` builds the saves the
mineflayer backend runs on, from a 1.19 server jar the user supplies; ``check``
shows what a saves folder holds. See docs/real_server.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mirrorcraft.commands.common import UserError


def add_parser(sub: Any) -> None:
    p = sub.add_parser("server", help="worldgen datapacks and saves for real 1.19 servers")
    s = p.add_subparsers(dest="server_action", metavar="ACTION", required=True)
    wg = s.add_parser(
        "worldgen", help="compile biome specs to 1.19 worldgen datapacks (no jar needed)"
    )
    wg.add_argument("--out", required=True, help="folder for the datapack zips")
    wg.add_argument("--biome", action="append", default=None, help="biome(s) (default: all five)")
    val = s.add_parser("validate", help="structurally validate datapack zips or folders")
    val.add_argument("packs", nargs="+", help="datapack zips or folders")
    val.add_argument("--json", action="store_true", help="print the issues as JSON")
    prep = s.add_parser("prepare", help="build Vanilla and Mirror saves from a 1.19 server jar")
    prep.add_argument("--jar", required=True, help="a Minecraft Java 1.19-1.19.2 server jar")
    prep.add_argument("--out", required=True, help="folder for the saves (and saves.json)")
    prep.add_argument(
        "--world", action="append", default=None, help="world id(s) (default: all ten)"
    )
    prep.add_argument(
        "--suite",
        action="append",
        default=None,
        help="rule suite(s) for the Mirror copies: ids, manifests or datapacks (default: M01-M06)",
    )
    prep.add_argument("--accept-eula", action="store_true", help="you accept the Minecraft EULA")
    prep.add_argument(
        "--server-command",
        default=None,
        help="command starting the server in its folder, {jar} replaced (default: java -Xms1G -Xmx2G -jar {jar} nogui)",
    )
    prep.add_argument(
        "--no-generate", action="store_true", help="lay out the saves without running the server"
    )
    chk = s.add_parser("check", help="list a saves folder's worlds, datapacks and warnings")
    chk.add_argument("saves", help="the folder given to prepare --out")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    action = args.server_action
    if action == "worldgen":
        return _worldgen(args)
    if action == "validate":
        return _validate(args)
    if action == "prepare":
        return _prepare(args)
    return _check(args)


def _worldgen(args: argparse.Namespace) -> int:
    from mirrorcraft.world.registry import biome_spec, world_table
    from mirrorcraft.world.spec import SpecError
    from mirrorcraft.worldgen import compile_biome_pack, validate_zip

    biomes = args.biome or sorted({e.biome for e in world_table().values()})
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for biome in biomes:
        try:
            pack = compile_biome_pack(biome_spec(biome))
        except SpecError as exc:
            raise UserError(str(exc)) from None
        data = pack.zip_bytes()
        report = validate_zip(data)
        (out / pack.file_name).write_bytes(data)
        status = "ok" if report.ok else "INVALID"
        print(f"{out / pack.file_name}: {status} ({report.files} files, preset {pack.preset_id})")
        for issue in report.issues:
            print(f"  {issue}")
        failed += not report.ok
    return 1 if failed else 0


def _validate(args: argparse.Namespace) -> int:
    from mirrorcraft.worldgen.validate import validate_path

    failed = 0
    results = {}
    for ref in args.packs:
        path = Path(ref)
        if not path.exists():
            raise UserError(f"{ref}: no such file or folder")
        report = validate_path(path)
        failed += not report.ok
        results[ref] = report
        if not args.json:
            print(f"{ref}: {'ok' if report.ok else 'INVALID'}; {report.render()}")
    if args.json:
        doc = {
            ref: [
                {"path": i.path, "field": i.field, "message": i.message, "severity": i.severity}
                for i in r.issues
            ]
            for ref, r in results.items()
        }
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    return 1 if failed else 0


def _prepare(args: argparse.Namespace) -> int:
    from mirrorcraft.backends.mineflayer.minecraft import JarError
    from mirrorcraft.backends.mineflayer.saves import PrepareError, prepare_saves
    from mirrorcraft.backends.mineflayer.server import DEFAULT_COMMAND, ServerSettings
    from mirrorcraft.faults import InfrastructureFault

    jar = Path(args.jar)
    settings = ServerSettings(jar=jar.resolve(), command=args.server_command or DEFAULT_COMMAND)
    try:
        manifest = prepare_saves(
            jar,
            Path(args.out),
            worlds=args.world,
            suites=tuple(args.suite) if args.suite else ("M01", "M02", "M03", "M04", "M05", "M06"),
            accept_eula=args.accept_eula,
            settings=settings,
            generate=not args.no_generate,
            log=lambda line: print(line, file=sys.stderr),
        )
    except (JarError, PrepareError) as exc:
        raise UserError(str(exc)) from None
    except InfrastructureFault as exc:
        raise UserError(f"the server failed while preparing saves: {exc}") from None
    print(f"{len(manifest.saves)} saves for Minecraft {manifest.minecraft_version} in {args.out}")
    warned = sorted({w for e in manifest.saves.values() for w in e.warnings})
    for w in warned:
        print(f"warning: {w}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from mirrorcraft.backends.mineflayer.saves import PrepareError, load_manifest

    try:
        manifest = load_manifest(Path(args.saves))
    except PrepareError as exc:
        raise UserError(str(exc)) from None
    print(
        f"Minecraft {manifest.minecraft_version}; jar {manifest.jar} (sha256 {manifest.jar_sha256[:12]})"
    )
    missing = 0
    for key, entry in sorted(manifest.saves.items()):
        packs = ", ".join(p.file for p in entry.datapacks)
        print(f"{key}: seed {entry.seed}, preset {entry.preset}; {packs}")
        if not (Path(args.saves) / entry.folder / "server.properties").is_file():
            missing += 1
            print(
                f"  error: the save folder {entry.folder} is missing or incomplete; prepare it "
                f"again (--world {entry.world}"
                + ("" if entry.rules == "vanilla" else f" --suite {entry.rules}")
                + ")"
            )
        for w in entry.warnings:
            print(f"  warning: {w}")
    return 1 if missing else 0
