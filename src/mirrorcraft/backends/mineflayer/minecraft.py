"""Facts about a Minecraft Java server the orchestration needs: the jar's version, the
server.properties file, and what the server prints while it starts."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mirrorcraft.faults import InfrastructureFault

SUPPORTED_VERSIONS = ("1.19", "1.19.1", "1.19.2")
"""The worldgen packs are written for 1.19.0-1.19.2 (pack_format 10, ``precipitation``)."""
DATA_PACK_FORMAT = 10

STARTING_RE = re.compile(r"Starting minecraft server version (\S+)")
DONE_RE = re.compile(r'Done \([0-9.,]+s\)! For help, type "help"')
RCON_RE = re.compile(r"RCON running on ")
FAILED_RE = re.compile(
    r"(Failed to start the minecraft server|Exception in server tick loop|Errors in currently selected data packs|Failed to load datapacks"
    # A port taken between choosing it and the server binding it (another worker's server):
    # 1.19 stops for the game port, and runs on without RCON for the RCON port.
    r"|FAILED TO BIND TO PORT|Unable to initialise RCON)"
)


class JarError(Exception):
    """The given file is not a usable 1.19 server jar (message says why)."""


@dataclass(frozen=True)
class JarVersion:
    id: str
    name: str
    protocol: int | None
    data_pack_format: int | None
    world_version: int | None

    def check_supported(self) -> None:
        if self.id not in SUPPORTED_VERSIONS:
            raise JarError(
                f"the jar is Minecraft {self.id}; MirrorCraft's packs are for "
                f"{', '.join(SUPPORTED_VERSIONS)} (pack_format {DATA_PACK_FORMAT})"
            )
        if self.data_pack_format not in (None, DATA_PACK_FORMAT):
            raise JarError(
                f"the jar reads data pack format {self.data_pack_format}, not {DATA_PACK_FORMAT}"
            )


def read_jar_version(jar: Path) -> JarVersion:
    """``version.json`` at the root of a 1.18+ server jar (the bundler)."""
    try:
        with zipfile.ZipFile(jar) as zf:
            doc = json.loads(zf.read("version.json"))
    except FileNotFoundError:
        raise JarError(f"{jar}: no such file") from None
    except zipfile.BadZipFile:
        raise JarError(f"{jar}: not a jar (zip) file") from None
    except KeyError:
        raise JarError(f"{jar}: has no version.json; is it a Minecraft 1.18+ server jar?") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise JarError(f"{jar}: cannot read version.json ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
        raise JarError(f"{jar}: version.json has no version id")
    pack = doc.get("pack_version")
    data_format = (
        pack.get("data") if isinstance(pack, dict) else pack if isinstance(pack, int) else None
    )
    protocol = doc.get("protocol_version")
    world = doc.get("world_version")
    return JarVersion(
        id=doc["id"],
        name=str(doc.get("name", doc["id"])),
        protocol=protocol if isinstance(protocol, int) else None,
        data_pack_format=data_format if isinstance(data_format, int) else None,
        world_version=world if isinstance(world, int) else None,
    )


def _escape(value: str) -> str:
    out = value.replace("\\", "\\\\").replace(":", "\\:").replace("=", "\\=")
    return out.replace("\n", "\\n")


def write_properties(path: Path, values: Mapping[str, object]) -> None:
    """A server.properties file (Java properties syntax, keys sorted for stable bytes)."""
    lines = ["#Minecraft server properties (written by MirrorCraft)"]
    for key in sorted(values):
        value = values[key]
        text = str(value).lower() if isinstance(value, bool) else str(value)
        lines.append(f"{key}={_escape(text)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_properties(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        m = re.match(r"((?:[^=:\\]|\\.)*)[=:](.*)", line)
        if not m:
            continue
        key, value = m.group(1).strip(), m.group(2).strip()
        out[_unescape(key)] = _unescape(value)
    return out


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


def base_properties(*, seed: int, preset: str) -> dict[str, object]:
    """The fixed server settings of every MirrorCraft save (ports and password are set per run)."""
    return {
        "allow-flight": False,
        "allow-nether": False,
        "broadcast-console-to-ops": False,
        "broadcast-rcon-to-ops": False,
        "difficulty": "peaceful",
        "enable-command-block": False,
        "enable-rcon": True,
        "enable-status": True,
        "enforce-secure-profile": False,
        "enforce-whitelist": False,
        "gamemode": "survival",
        "generate-structures": False,
        "hardcore": False,
        "level-name": "world",
        "level-seed": seed,
        "level-type": preset,
        "max-players": 2,
        "max-tick-time": -1,
        "motd": "MirrorCraft",
        "online-mode": False,
        "pvp": False,
        "server-ip": "127.0.0.1",
        "simulation-distance": 6,
        "spawn-animals": True,
        "spawn-monsters": False,
        "spawn-npcs": False,
        "spawn-protection": 0,
        "sync-chunk-writes": False,
        "view-distance": 6,
        "white-list": False,
    }


def parse_datapack_list(text: str) -> list[str]:
    """Pack ids in the output of ``datapack list [enabled]`` (e.g. ``vanilla``, ``file/x.zip``).

    1.19 prints ``There are 2 data packs enabled: [vanilla (built-in)], [file/x.zip (world)]``.
    """
    enabled = text.split("available", 1)[0] if "enabled" in text else text
    return [m.group(1) for m in re.finditer(r"\[([^\]\s(]+)", enabled)]


def check_version_line(version: str | None) -> None:
    if version is None:
        raise InfrastructureFault("the server never printed its version")
    if version not in SUPPORTED_VERSIONS:
        raise InfrastructureFault(
            f"the server runs Minecraft {version}; expected one of {', '.join(SUPPORTED_VERSIONS)}"
        )
