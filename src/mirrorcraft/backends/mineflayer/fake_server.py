"""A stand-in for a Minecraft 1.19 server jar, for tests without a vanilla jar.

Run in a server folder as ``python -m mirrorcraft.backends.mineflayer.fake_server JAR``.
It reads server.properties and eula.txt like the real server, prints the same log
lines the orchestration waits for, creates a world folder on first start, and
answers the RCON commands MirrorCraft uses (datapack list, advancement revoke/grant,
execute if entity ... advancements, recipe take, function, locate biome, save-all, stop)
the way 1.19 words them. It loads recipes from the enabled datapacks with vanilla's rule
that a cooking recipe whose result is not an item id fails to load, and world presets:
``level-type`` resolves when a loaded pack has that ``worldgen/world_preset`` (else the
server logs 1.19's fallback warning and "generates" a normal world), and ``locate biome``
finds the preset's fixed overworld biome at spawn. It speaks no
game protocol: bots cannot join it. Faults can be injected through environment
variables (``FAKE_MC_*``, see ``_Settings``). A test double, not a server.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

from mirrorcraft.backends.mineflayer.advancements import offline_uuid
from mirrorcraft.backends.mineflayer.minecraft import read_properties
from mirrorcraft.backends.mineflayer.rcon_server import RconServer


class _Settings:
    def __init__(self) -> None:
        env = os.environ
        self.version = env.get("FAKE_MC_VERSION")
        self.players = [p for p in env.get("FAKE_MC_PLAYERS", "agent").split(",") if p]
        self.skip_packs = set(filter(None, env.get("FAKE_MC_SKIP_DATAPACKS", "").split(",")))
        self.missing_advancements = set(
            filter(None, env.get("FAKE_MC_MISSING_ADVANCEMENTS", "").split(","))
        )
        self.die_after = int(env.get("FAKE_MC_DIE_AFTER", "0") or 0)
        self.never_ready = env.get("FAKE_MC_NEVER_READY") == "1"
        self.ignore_presets = env.get("FAKE_MC_IGNORE_PRESETS") == "1"
        """Act as if no pack's world preset had loaded (the level-type falls back)."""
        self.biome_far = int(env.get("FAKE_MC_BIOME_FAR", "0") or 0)
        """Report the preset's biome this many blocks from spawn (0: at spawn)."""
        self.outlive_stdin = env.get("FAKE_MC_OUTLIVE_STDIN") == "1"
        """Keep running when stdin closes, as a vanilla server does (it stops on ``stop`` only)."""


def _vanilla_sets() -> tuple[set[str], set[str]]:
    from mirrorcraft.rules.ruleset import vanilla_ruleset

    rules = vanilla_ruleset()
    advancements = {a if ":" in a else f"minecraft:{a}" for a in rules.advancements}
    return advancements, set(rules.recipes)


def _pack_files(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        return {
            p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()
        }
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}


class FakeServer:
    def __init__(self, folder: Path, jar: Path, settings: _Settings):
        self.folder, self.settings = folder, settings
        self.props = read_properties(folder / "server.properties")
        self.version = settings.version or self._jar_version(jar)
        self.world = folder / self.props.get("level-name", "world")
        self.granted: dict[str, set[str]] = {p: set() for p in settings.players}
        self.commands = 0
        self.advancements, self.recipes = _vanilla_sets()
        self.advancements -= {f"minecraft:{a}" for a in settings.missing_advancements}
        self.functions: dict[str, int] = {}
        self.packs: list[str] = []
        self.presets: dict[str, str | None] = {}
        """world preset id -> the overworld's fixed biome (None when not a fixed source)."""
        self.biomes: set[str] = set()
        self.overworld_biome: str | None = None

    @staticmethod
    def _jar_version(jar: Path) -> str:
        try:
            with zipfile.ZipFile(jar) as zf:
                return str(json.loads(zf.read("version.json"))["id"])
        except (OSError, KeyError, zipfile.BadZipFile, json.JSONDecodeError):
            return "unknown"

    def load_world(self) -> None:
        self.world.mkdir(parents=True, exist_ok=True)
        datapacks = self.world / "datapacks"
        found = sorted(p for p in datapacks.iterdir()) if datapacks.exists() else []
        meta = self.world / "fake_level.json"
        if not meta.exists():
            meta.write_text(
                json.dumps(
                    {
                        "level-seed": self.props.get("level-seed", ""),
                        "level-type": self.props.get("level-type", ""),
                        "datapacks_at_creation": [p.name for p in found],
                        "version": self.version,
                    },
                    sort_keys=True,
                )
            )
            (self.world / "level.dat").write_bytes(b"fake level.dat")
        for path in found:
            if path.name in self.settings.skip_packs:
                print(f"[Server thread/ERROR]: Failed to load data pack {path.name}", flush=True)
                continue
            self.packs.append(f"file/{path.name}")
            for name, data in _pack_files(path).items():
                self._load_file(name, data)
        self._resolve_preset()

    def _resolve_preset(self) -> None:
        level_type = self.props.get("level-type", "default")
        if level_type in self.presets and not self.settings.ignore_presets:
            self.overworld_biome = self.presets[level_type]
            return
        print(
            f"[Server thread/WARN]: Failed to parse level-type {level_type}, defaulting to minecraft:normal",
            flush=True,
        )

    def _load_file(self, name: str, data: bytes) -> None:
        w = re.match(r"data/([^/]+)/worldgen/(world_preset|biome)/(.+)\.json$", name)
        if w:
            ns, kind, path = w.groups()
            if kind == "biome":
                self.biomes.add(f"{ns}:{path}")
                return
            doc = json.loads(data)
            source = doc["dimensions"]["minecraft:overworld"]["generator"].get("biome_source", {})
            fixed = source.get("biome") if source.get("type") == "minecraft:fixed" else None
            self.presets[f"{ns}:{path}"] = fixed
            return
        m = re.match(r"data/([^/]+)/(recipes|functions)/(.+)\.(json|mcfunction)$", name)
        if not m:
            return
        ns, kind, path, _ext = m.groups()
        loc = f"{ns}:{path}"
        if kind == "functions":
            lines = [
                ln for ln in data.decode().splitlines() if ln.strip() and not ln.startswith("#")
            ]
            self.functions[loc] = len(lines)
            return
        doc = json.loads(data)
        cooking = str(doc.get("type", "")).endswith(
            ("smelting", "blasting", "smoking", "campfire_cooking")
        )
        if cooking and not isinstance(doc.get("result"), str):
            print(f"[Server thread/ERROR]: Parsing error loading recipe {loc}", flush=True)
            self.recipes.discard(loc)  # the datapack file replaced vanilla's, and did not parse
            return
        self.recipes.add(loc)

    # -- RCON ------------------------------------------------------------------------
    def handle(self, command: str) -> str:
        self.commands += 1
        if self.settings.die_after and self.commands > self.settings.die_after:
            os._exit(3)
        words = command.split()
        if command in ("datapack list enabled", "datapack list"):
            shown = ["[vanilla (built-in)]", *(f"[{p} (world)]" for p in self.packs)]
            return f"There are {len(shown)} data packs enabled: {', '.join(shown)}"
        if words[:1] == ["advancement"] and len(words) == 5 and words[3] == "only":
            return self._advancement(words[1], words[2], words[4])
        m = re.fullmatch(
            r"execute if entity @a\[name=(\w+),advancements=\{([^=}]+)=true\}\]", command
        )
        if m:
            player, adv = m.groups()
            return (
                "Test passed, count: 1" if adv in self.granted.get(player, set()) else "Test failed"
            )
        if words[:2] == ["recipe", "take"] and len(words) == 4:
            loc = words[3] if ":" in words[3] else f"minecraft:{words[3]}"
            if loc not in self.recipes:
                return f"Unknown recipe: {loc}"
            return f"Couldn't take recipes from {words[2]}: they have none to take"
        m = re.fullmatch(r"(?:execute as (\w+) run )?function (\S+)", command)
        if m:
            loc = m.group(2)
            if loc not in self.functions:
                return f"Unknown function {loc}"
            return f"Executed {self.functions[loc]} commands from function '{loc}'"
        if words[:2] == ["locate", "biome"] and len(words) == 3:
            return self._locate(words[2])
        if command == "save-all flush":
            self._save()
            return "Saving the game (this may take a moment!)Saved the game"
        if command == "stop":
            threading.Timer(0.05, lambda: os._exit(0)).start()
            return "Stopping the server"
        return f"Unknown or incomplete command, see below for error{command}<--[HERE]"

    def _locate(self, biome: str) -> str:
        if biome not in self.biomes and not biome.startswith("minecraft:"):
            return f'There is no biome with type "{biome}"'
        if biome != self.overworld_biome:
            return f'Could not find a biome of type "{biome}" within reasonable distance'
        far = self.settings.biome_far
        return f"The nearest {biome} is at [{far}, 64, 0] ({far} blocks away)"

    def _advancement(self, action: str, player: str, adv: str) -> str:
        adv = adv if ":" in adv else f"minecraft:{adv}"
        if player not in self.granted:
            return "No player was found"
        if adv not in self.advancements:
            return f"Unknown advancement: {adv}"
        have = self.granted[player]
        if action == "grant":
            have.add(adv)
            return f"Granted the advancement [{adv}] to {player}"
        if adv not in have:
            return f"Couldn't revoke advancement [{adv}] from {player} as they don't have it"
        have.discard(adv)
        return f"Revoked the advancement [{adv}] from {player}"

    def _save(self) -> None:
        folder = self.world / "advancements"
        folder.mkdir(parents=True, exist_ok=True)
        for player, advs in self.granted.items():
            doc: dict[str, Any] = {
                a: {"criteria": {"fake": "2026-01-01 00:00:00 +0000"}, "done": True}
                for a in sorted(advs)
            }
            doc["DataVersion"] = 3120
            (folder / f"{offline_uuid(player)}.json").write_text(json.dumps(doc, indent=2))


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: fake_server JAR [nogui]", file=sys.stderr)
        return 2
    folder = Path.cwd()
    eula = folder / "eula.txt"
    if not eula.exists() or "eula=true" not in eula.read_text():
        print("[main/WARN]: Failed to load eula.txt", flush=True)
        print(
            "[main/INFO]: You need to agree to the EULA in order to run the server. Go to eula.txt for more info.",
            flush=True,
        )
        return 0
    server = FakeServer(folder, Path(argv[0]), _Settings())
    print(f"[Server thread/INFO]: Starting minecraft server version {server.version}", flush=True)
    print('[Server thread/INFO]: Preparing level "world"', flush=True)
    server.load_world()
    if server.settings.never_ready:
        time.sleep(3600)
    props = server.props
    rcon_port = int(props.get("rcon.port", "25575"))
    rcon: RconServer | None = None
    print('[Server thread/INFO]: Done (0.042s)! For help, type "help"', flush=True)
    try:
        rcon = RconServer(props.get("rcon.password", ""), server.handle, port=rcon_port)
        print(f"[Server thread/INFO]: RCON running on 127.0.0.1:{rcon.port}", flush=True)
    except OSError:  # as 1.19: a warning, and the server runs on without RCON
        print(
            f"[RCON Listener #1/WARN]: Unable to initialise RCON on 127.0.0.1:{rcon_port}",
            flush=True,
        )
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    else:
        while server.settings.outlive_stdin:  # until RCON's stop or a signal ends the process
            time.sleep(3600)
    if rcon is not None:
        rcon.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
