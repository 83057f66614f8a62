"""Checks before an episode on a real server (the paper's section 3.7 controls): the game
version, that exactly the prepared datapacks are loaded, that the task's advancements and the
suite's recipes exist, and the player's starting conditions. Any failure is an infrastructure
fault: the episode is rerun under the same id, never scored."""

from __future__ import annotations

from pathlib import Path

from mirrorcraft.backends.mineflayer.advancements import RconAdvancements
from mirrorcraft.backends.mineflayer.minecraft import check_version_line, parse_datapack_list
from mirrorcraft.backends.mineflayer.saves import SaveEntry, sha256
from mirrorcraft.backends.mineflayer.server import ServerProcess
from mirrorcraft.evaluator.tasks import Task
from mirrorcraft.faults import InfrastructureFault


def check_files(folder: Path, entry: SaveEntry) -> None:
    """The fresh copy holds the prepared datapacks, byte for byte."""
    for pack in entry.datapacks:
        path = folder / "world" / "datapacks" / pack.file
        if not path.exists():
            raise InfrastructureFault(
                f"missing datapack {pack.file} in the save copy for {entry.folder}"
            )
        if sha256(path.read_bytes()) != pack.sha256:
            raise InfrastructureFault(
                f"datapack {pack.file} in {entry.folder} differs from the prepared one"
            )


def check_server(server: ServerProcess, entry: SaveEntry) -> None:
    check_version_line(server.version)
    enabled = parse_datapack_list(server.command("datapack list enabled"))
    missing = [p.file for p in entry.datapacks if f"file/{p.file}" not in enabled]
    if missing:
        raise InfrastructureFault(
            f"missing datapack(s) on the server: {', '.join(missing)} (enabled: {', '.join(enabled)})"
        )
    expected = {f"file/{p.file}" for p in entry.datapacks}
    extra = [p for p in enabled if p.startswith("file/") and p not in expected]
    if extra:
        raise InfrastructureFault(f"unexpected datapack(s) on the server: {', '.join(extra)}")


def check_player(server: ServerProcess, entry: SaveEntry, task: Task, player: str) -> None:
    RconAdvancements(server.rcon, player).check_available([m.advancement for m in task.milestones])
    for pack in entry.datapacks:
        for recipe in pack.recipes:
            out = server.command(f"recipe take {player} {recipe}")
            if "Unknown recipe" in out:
                hint = ""
                if any("extension" in w for w in entry.warnings):
                    hint = " (this suite uses cooking results with a count, which a vanilla 1.19 server cannot load)"
                raise InfrastructureFault(
                    f"recipe {recipe} from {pack.file} is not loaded on the server{hint}"
                )
    out = server.command(f"execute as {player} run function mirrorcraft:player_setup")
    if "Unknown function" in out or "No entity was found" in out:
        raise InfrastructureFault(f"the player setup did not run: {out[:200]}")
