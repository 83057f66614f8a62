"""Server saves for the real-server backend: ``server prepare`` builds them from a user's jar.

For every world a Vanilla save (server.properties with the world's seed and our
world preset, the worldgen, tasks and nothing else in ``world/datapacks/``), generated
once by running the server; then one Mirror copy per rule suite with the suite's
datapack added (the server enables a new pack in ``world/datapacks`` on its next start).
``saves.json`` records what went in (pack hashes, jar, version) so a run can check
that the server loaded exactly that.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from mirrorcraft import __version__
from mirrorcraft.backends.mineflayer.minecraft import (
    JarVersion,
    base_properties,
    parse_datapack_list,
    read_jar_version,
    write_properties,
)
from mirrorcraft.backends.mineflayer.server import ServerProcess, ServerSettings
from mirrorcraft.datapack.compiler import EXTENSION_NOTE
from mirrorcraft.datapack.server_form import NOTE as SERVER_FORM_NOTE
from mirrorcraft.datapack.server_form import ServerFormError, server_form
from mirrorcraft.datapack.suites import compiled, find_suite, load_manifest_file
from mirrorcraft.faults import InfrastructureFault
from mirrorcraft.world.registry import biome_spec, world_ids, world_table
from mirrorcraft.worldgen import compile_biome_pack, deterministic_zip, validate_zip
from mirrorcraft.worldgen.compiler import WORLD_BORDER
from mirrorcraft.worldgen.validate import ValidationReport

MANIFEST = "saves.json"
TASKS_PACK = "mirrorcraft_tasks.zip"
EULA_URL = "https://aka.ms/MinecraftEULA"


class PrepareError(Exception):
    """Preparing saves failed for a reason the user can fix; the message says what."""


class PackEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    file: str
    sha256: str
    kind: str  # worldgen | tasks | suite
    recipes: tuple[str, ...] = ()
    """Recipe ids the pack defines (checked on the server before each episode)."""


class SaveEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    world: str
    rules: str
    biome: str
    seed: int
    folder: str
    preset: str
    datapacks: tuple[PackEntry, ...]
    warnings: tuple[str, ...] = ()


class SavesManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    schema_version: int = 1
    mirrorcraft_version: str
    minecraft_version: str
    jar: str
    jar_sha256: str
    saves: dict[str, SaveEntry]

    def entry(self, world: str, rules: str) -> SaveEntry:
        key = save_key(world, rules)
        if key not in self.saves:
            raise InfrastructureFault(
                f"no prepared save for {key}; run: mirrorcraft server prepare --jar JAR --out DIR "
                f"--world {world} --suite {rules}"
            )
        return self.saves[key]


def save_key(world: str, rules: str) -> str:
    return world if rules == "vanilla" else f"{world}@{rules}"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_manifest(folder: Path) -> SavesManifest:
    path = folder / MANIFEST
    try:
        return SavesManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PrepareError(f"{path} does not exist; run mirrorcraft server prepare first") from None
    except (OSError, ValidationError) as exc:
        raise PrepareError(f"{path} is not a saves manifest: {exc}") from None


def tasks_pack_zip() -> bytes | None:
    """The packaged task-advancement pack (layered after vanilla in every RuleSet), if there is one."""
    folder = Path(str(resources.files("mirrorcraft") / "data" / "packs" / "tasks"))
    if not (folder / "pack.mcmeta").exists():
        return None
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
    return deterministic_zip(files)


def _recipes_in(zip_bytes: bytes) -> tuple[str, ...]:
    import io
    import re
    import zipfile

    out = []
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as zf:
        for name in zf.namelist():
            m = re.match(r"data/([^/]+)/recipes/(.+)\.json$", name)
            if m:
                out.append(f"{m.group(1)}:{m.group(2)}")
    return tuple(sorted(out))


def suite_zip(name: str) -> tuple[str, bytes, tuple[str, ...]]:
    """(rule-set id, datapack zip, notes) for a suite id, a manifest file or a datapack zip/folder."""
    manifest = find_suite(name)
    path = Path(name)
    if manifest is None and path.suffix in (".yaml", ".yml") and path.exists():
        manifest = load_manifest_file(path)
    if manifest is not None:
        suite = compiled(manifest)
        return manifest.id, suite.zip_bytes(), suite.notes
    if path.is_dir():
        files = {
            p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*"))
            if p.is_file()
        }
        return path.name, deterministic_zip(files), ()
    if path.is_file() and path.suffix == ".zip":
        return path.stem, path.read_bytes(), ()
    raise PrepareError(
        f"unknown rule suite {name!r}: not a suite id (M01-M06), a manifest or a datapack"
    )


def server_suite_zip(name: str) -> tuple[str, bytes, tuple[str, ...]]:
    """``suite_zip`` in the form a stock 1.19 server loads (``datapack.server_form``)."""
    import io
    import zipfile

    sid, data, notes = suite_zip(name)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        files = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}
    try:
        form = server_form(files)
    except ServerFormError as exc:
        raise PrepareError(f"suite {sid}: {exc}") from None
    if not form.changed:
        return sid, data, notes
    kept = tuple(n for n in notes if n != EXTENSION_NOTE)
    return sid, deterministic_zip(form.files), (*kept, SERVER_FORM_NOTE)


def _check(report: ValidationReport, what: str) -> list[str]:
    if not report.ok:
        raise PrepareError(f"the {what} datapack fails validation:\n{report.render()}")
    return [f"{what}: {w.path}: {w.message}" for w in report.warnings]


def _write_eula(folder: Path, accept: bool) -> None:
    if not accept:
        raise PrepareError(
            f"the Minecraft server needs the Minecraft EULA accepted ({EULA_URL}); "
            "read it and pass --accept-eula to record your acceptance in each save's eula.txt"
        )
    (folder / "eula.txt").write_text(
        f"# Accepted by the user through mirrorcraft server prepare --accept-eula ({EULA_URL})\neula=true\n"
    )


PRESET_FALLBACK_RE = re.compile(r"Failed to parse level-type (\S+), defaulting to (\S+)")
"""What 1.19 logs when ``level-type`` names no world preset it loaded (it then makes a normal world)."""
LOCATED_RE = re.compile(
    r"The nearest (\S+) is at \[(-?\d+), (?:~|-?\d+), (-?\d+)\] \((\d+) blocks away\)"
)
"""1.19's answer to ``locate biome`` when the biome was found."""
NEAR_SPAWN = WORLD_BORDER // 2
"""The biome must be found this close to spawn: inside the world border around 0,0."""


def check_preset(world: str, preset: str, log_lines: Sequence[str]) -> None:
    """The server loaded the world preset named in ``level-type`` (no fallback in its log)."""
    for line in log_lines:
        m = PRESET_FALLBACK_RE.search(line)
        if m:
            raise PrepareError(
                f"{world}: the server did not load the world preset {preset} and generated a "
                f"{m.group(2)} world instead (log: {line.strip()[:200]})"
            )


def check_biome(world: str, biome_id: str, located: str) -> None:
    """``locate biome`` (run from spawn, as RCON commands are) found the biome near spawn."""
    m = LOCATED_RE.search(located)
    if m is None or m.group(1) != biome_id:
        raise PrepareError(
            f"{world}: the generated world has no {biome_id} near spawn "
            f"(locate biome answered: {located.strip()[:200] or '(nothing)'})"
        )
    if int(m.group(4)) > NEAR_SPAWN:
        raise PrepareError(
            f"{world}: the nearest {biome_id} is {m.group(4)} blocks from spawn "
            f"(more than {NEAR_SPAWN}); the world is not the intended one"
        )


def generate_world(
    folder: Path, settings: ServerSettings, world: str, preset: str, biome: str
) -> dict[str, str]:
    """Run the server once in ``folder`` to generate the world and check that it is the intended
    one (the preset resolved, the biome at spawn; either failing is a PrepareError), then run
    the setup and save. Returns command -> output."""
    biome_id = f"{preset.split(':', 1)[0]}:{biome}"
    with ServerProcess(folder, settings) as server:
        server.wait_ready()
        check_preset(world, preset, list(server.log))
        outputs = {"datapack list enabled": server.command("datapack list enabled")}
        outputs["locate"] = server.command(f"locate biome {biome_id}")
        check_biome(world, biome_id, outputs["locate"])
        for command in ("function mirrorcraft:setup", "save-all flush"):
            outputs[command] = server.command(command)
        return outputs


def prepare_saves(
    jar: Path,
    out: Path,
    *,
    worlds: Sequence[str] | None = None,
    suites: Sequence[str] = ("M01", "M02", "M03", "M04", "M05", "M06"),
    accept_eula: bool = False,
    settings: ServerSettings | None = None,
    generate: bool = True,
    log: Callable[[str], None] = print,
) -> SavesManifest:
    version: JarVersion = read_jar_version(jar)
    version.check_supported()
    settings = settings or ServerSettings(jar=jar.resolve())
    table = world_table()
    chosen = list(worlds) if worlds else world_ids()
    for w in chosen:
        if w not in table:
            raise PrepareError(f"unknown world {w!r} (known: {', '.join(table)})")
    out.mkdir(parents=True, exist_ok=True)
    previous = _previous_manifest(out, log)
    jar_sha256 = sha256(jar.read_bytes())
    tasks_zip = tasks_pack_zip()
    tasks_warnings = _check(validate_zip(tasks_zip), "tasks") if tasks_zip is not None else []
    suite_packs = [server_suite_zip(s) for s in suites]
    suite_warnings: dict[str, list[str]] = {}
    for sid, data, notes in suite_packs:
        suite_warnings[sid] = [f"suite {sid}: {n}" for n in notes] + _check(
            validate_zip(data), f"suite {sid}"
        )
    if previous is not None:
        # From here on the chosen worlds' folders are removed and rebuilt: saves.json must
        # not name them until they are whole again (an interrupted or failed prepare leaves
        # the other saves usable and these absent, never a half-built or wrong world).
        _write_manifest(out, previous.model_copy(update={"saves": _other_worlds(previous, chosen)}))
    saves: dict[str, SaveEntry] = {}
    for world in chosen:
        entry = table[world]
        pack = compile_biome_pack(biome_spec(entry.biome))
        worldgen_zip = pack.zip_bytes()
        warnings = _check(validate_zip(worldgen_zip), f"worldgen {entry.biome}") + tasks_warnings
        folder = out / world
        if folder.exists():
            shutil.rmtree(folder)
        (folder / "world" / "datapacks").mkdir(parents=True)
        _write_eula(folder, accept_eula)
        properties = base_properties(seed=entry.seed, preset=pack.preset_id)
        write_properties(folder / "server.properties", properties)
        (folder / "world" / "datapacks" / pack.file_name).write_bytes(worldgen_zip)
        packs: tuple[PackEntry, ...] = (
            PackEntry(file=pack.file_name, sha256=sha256(worldgen_zip), kind="worldgen"),
        )
        if tasks_zip is not None:
            (folder / "world" / "datapacks" / TASKS_PACK).write_bytes(tasks_zip)
            packs += (PackEntry(file=TASKS_PACK, sha256=sha256(tasks_zip), kind="tasks"),)
        if generate:
            log(
                f"{world}: generating the world with {version.id} (seed {entry.seed}, preset {pack.preset_id})"
            )
            outputs = generate_world(folder, settings, world, pack.preset_id, entry.biome)
            enabled = parse_datapack_list(outputs["datapack list enabled"])
            for p in packs:
                if f"file/{p.file}" not in enabled:
                    raise PrepareError(
                        f"{world}: the server did not enable {p.file} (enabled: {enabled})"
                    )
            if "Unknown function" in outputs["function mirrorcraft:setup"]:
                raise PrepareError(f"{world}: the worldgen pack's setup function did not load")
            if not (folder / "world" / "level.dat").exists():
                raise PrepareError(f"{world}: the server wrote no world/level.dat")
            # Ports and the RCON password are chosen afresh for every run; keep none in the save.
            write_properties(folder / "server.properties", properties)
        saves[world] = SaveEntry(
            world=world,
            rules="vanilla",
            biome=entry.biome,
            seed=entry.seed,
            folder=world,
            preset=pack.preset_id,
            datapacks=packs,
            warnings=tuple(warnings),
        )
        for sid, data, _notes in suite_packs:
            key = save_key(world, sid)
            mirror = out / key
            if mirror.exists():
                shutil.rmtree(mirror)
            shutil.copytree(
                folder, mirror, ignore=shutil.ignore_patterns("logs", "*.log", "session.lock")
            )
            name = f"mirrorcraft_suite_{sid}.zip"
            (mirror / "world" / "datapacks" / name).write_bytes(data)
            suite_entry = PackEntry(
                file=name, sha256=sha256(data), kind="suite", recipes=_recipes_in(data)
            )
            saves[key] = SaveEntry(
                world=world,
                rules=sid,
                biome=entry.biome,
                seed=entry.seed,
                folder=key,
                preset=pack.preset_id,
                datapacks=(*packs, suite_entry),
                warnings=tuple(warnings + suite_warnings[sid]),
            )
    kept: dict[str, SaveEntry] = {}
    if previous is not None:
        same_jar = (previous.jar_sha256, previous.minecraft_version) == (jar_sha256, version.id)
        others = _other_worlds(previous, chosen)
        if same_jar:
            kept = others
        elif others:
            log(
                f"saves.json listed {len(others)} save(s) of other worlds prepared with another "
                "jar; they are left out (prepare them again with this jar)"
            )
        stale = sorted(k for k, e in previous.saves.items() if e.world in chosen and k not in saves)
        if stale:
            log(
                f"left out: {', '.join(stale)} (copies of the world saves rebuilt now; "
                "prepare them again with --world and --suite)"
            )
    manifest = SavesManifest(
        mirrorcraft_version=__version__,
        minecraft_version=version.id,
        jar=str(jar.resolve()),
        jar_sha256=jar_sha256,
        saves={**kept, **saves},
    )
    _write_manifest(out, manifest)
    return manifest


def _previous_manifest(out: Path, log: Callable[[str], None]) -> SavesManifest | None:
    """The saves.json already in ``out`` (None when there is none or it cannot be read)."""
    if not (out / MANIFEST).exists():
        return None
    try:
        return load_manifest(out)
    except PrepareError as exc:
        log(f"{exc}; it is replaced")
        return None


def _other_worlds(manifest: SavesManifest, worlds: Sequence[str]) -> dict[str, SaveEntry]:
    return {k: e for k, e in manifest.saves.items() if e.world not in worlds}


def _write_manifest(out: Path, manifest: SavesManifest) -> None:
    """Write saves.json whole or not at all (a new file renamed over the old one)."""
    tmp = out / f"{MANIFEST}.tmp"
    tmp.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    tmp.replace(out / MANIFEST)
