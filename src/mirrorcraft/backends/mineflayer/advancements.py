"""Milestones on a real server: advancement state as the server knows it, never the bot's inventory.

Two readers: ``RconAdvancements`` asks the running server, through RCON, whether
the player has each advancement (``execute if entity @a[name=..,advancements={..}]``),
and ``read_advancement_file`` reads the save's ``advancements/<uuid>.json`` (written
on ``save-all``). ``offline_uuid`` gives the player's uuid in offline mode.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from mirrorcraft.backends.mineflayer.rcon import RconClient
from mirrorcraft.faults import InfrastructureFault

PLAYER_RE = re.compile(r"^[A-Za-z0-9_]{3,16}$")
ADVANCEMENT_RE = re.compile(r"^(?:[a-z0-9_.-]+:)?[a-z0-9_./-]+$")


class AdvancementSource(Protocol):
    def completed(self, advancements: Iterable[str]) -> set[str]:
        """Which of these advancements (ids like ``story/mine_stone``) the player has now."""
        ...


def offline_uuid(name: str) -> str:
    """The uuid an offline-mode server gives a player: name-based (v3) from ``OfflinePlayer:<name>``."""
    digest = hashlib.md5(f"OfflinePlayer:{name}".encode()).digest()
    return str(uuid.UUID(bytes=digest, version=3))


def full_advancement(adv: str) -> str:
    if not ADVANCEMENT_RE.match(adv):
        raise ValueError(f"not an advancement id: {adv!r}")
    return adv if ":" in adv else f"minecraft:{adv}"


def bare_advancement(adv: str) -> str:
    return adv.removeprefix("minecraft:")


def check_player_name(name: str) -> str:
    if not PLAYER_RE.match(name):
        raise ValueError(f"player names are 3-16 letters, digits or '_', got {name!r}")
    return name


class RconAdvancements:
    """Reads the player's advancements from the running server."""

    def __init__(self, rcon: RconClient, player: str):
        self.rcon = rcon
        self.player = check_player_name(player)

    def has(self, advancement: str) -> bool:
        adv = full_advancement(advancement)
        out = self.rcon.command(
            f"execute if entity @a[name={self.player},advancements={{{adv}=true}}]"
        )
        if out.startswith("Test passed"):
            return True
        if out.startswith("Test failed"):
            return False
        raise InfrastructureFault(
            f"the server gave an unexpected answer about {adv}: {out[:200]!r}"
        )

    def completed(self, advancements: Iterable[str]) -> set[str]:
        return {a for a in advancements if self.has(a)}

    def check_available(self, advancements: Iterable[str]) -> None:
        """Every advancement must exist on the server (its datapacks loaded them).

        Revoking an advancement the fresh player does not have changes nothing and
        fails with "Unknown advancement" only when the server has no such advancement.
        """
        for advancement in advancements:
            adv = full_advancement(advancement)
            out = self.rcon.command(f"advancement revoke {self.player} only {adv}")
            if "Unknown advancement" in out or "nknown" in out.split(" ", 1)[0]:
                raise InfrastructureFault(
                    f"advancement {adv} is not available on the server: {out[:200]}"
                )
            if "No player was found" in out:
                raise InfrastructureFault(f"the player {self.player} is not on the server")


def read_advancement_file(path: Path) -> set[str]:
    """Completed advancements (bare ids for the minecraft namespace) in a save's advancement file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return set()
    except (OSError, ValueError, RecursionError) as exc:  # unreadable, not UTF-8, not JSON
        raise InfrastructureFault(f"cannot read the advancement file {path}: {exc}") from None
    if not isinstance(doc, dict):
        raise InfrastructureFault(f"the advancement file {path} is not a JSON object")
    return {
        bare_advancement(k)
        for k, v in doc.items()
        if isinstance(v, dict) and v.get("done") is True and not k.startswith("minecraft:recipes/")
    }


class FileAdvancements:
    """Reads the save's advancement file after asking the server to save (``save-all flush``)."""

    def __init__(self, rcon: RconClient, world_dir: Path, player: str):
        self.rcon = rcon
        self.path = world_dir / "advancements" / f"{offline_uuid(check_player_name(player))}.json"

    def completed(self, advancements: Iterable[str]) -> set[str]:
        self.rcon.command("save-all flush")
        done = read_advancement_file(self.path)
        return {a for a in advancements if bare_advancement(a) in done}
