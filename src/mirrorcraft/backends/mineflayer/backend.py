"""Starting an episode on a real server: a fresh copy of the prepared save, a server on free
loopback ports, the pre-episode checks, the bridge and its bot. ``close`` stops everything."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mirrorcraft.backends.mineflayer.advancements import (
    AdvancementSource,
    FileAdvancements,
    RconAdvancements,
)
from mirrorcraft.backends.mineflayer.bridge import BridgeClient
from mirrorcraft.backends.mineflayer.convert import bridge_config
from mirrorcraft.backends.mineflayer.episode import MineflayerEpisode
from mirrorcraft.backends.mineflayer.minecraft import SUPPORTED_VERSIONS
from mirrorcraft.backends.mineflayer.preflight import check_files, check_player, check_server
from mirrorcraft.backends.mineflayer.saves import load_manifest
from mirrorcraft.backends.mineflayer.server import DEFAULT_COMMAND, ServerProcess, ServerSettings
from mirrorcraft.backends.rulesets import resolve_rules
from mirrorcraft.body.config import BodyConfig, default_body_config
from mirrorcraft.evaluator.tasks import Task
from mirrorcraft.faults import InfrastructureFault
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.world.registry import biome_spec


@dataclass(frozen=True)
class MineflayerOptions:
    saves: Path
    """The folder ``mirrorcraft server prepare --out`` wrote (with saves.json)."""
    jar: Path | None = None
    """The server jar; default: the one the saves were prepared with."""
    command: str = DEFAULT_COMMAND
    node: str = "node"
    bridge_dir: Path | None = None
    player: str = "agent"
    work_dir: Path | None = None
    """Where fresh save copies go (default: the system temp folder); removed after each episode."""
    milestones: str = "rcon"
    """rcon (ask the server after every action) or file (the save's advancements/<uuid>.json)."""
    start_timeout_s: float = 300.0
    rcon_command_timeout_s: float = 60.0
    """The most one RCON command's whole answer may take (milestone checks, pre-episode checks)."""

    def to_dict(self) -> dict[str, object]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, raw: dict[str, object]) -> MineflayerOptions:
        paths = {"saves", "jar", "bridge_dir", "work_dir"}
        kwargs = {k: (Path(str(v)) if k in paths and v is not None else v) for k, v in raw.items()}
        return cls(**kwargs)  # type: ignore[arg-type]


class StartHandle:
    """What one ``start_episode`` call has started so far, so that another thread can stop it.

    The runner starts an episode in a thread; when the episode is stopped meanwhile (its time
    limit, Ctrl-C, a worker told to stop), that thread runs on, and whatever it starts would
    outlive the run: the server and the bridge run in sessions of their own. ``cancel`` kills
    the server and the bridge at once (the start then ends with an ``InfrastructureFault``
    within moments instead of waiting out its time limits) and closes an episode the start
    already handed back.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cancelled = False
        self._parts: list[Any] = []
        self._episode: MineflayerEpisode | None = None

    def adopt(self, part: Any) -> None:
        """Track a server, bridge or finished episode; one adopted after ``cancel`` is stopped."""
        with self._lock:
            if isinstance(part, MineflayerEpisode):
                self._episode = part
            else:
                self._parts.append(part)
            cancelled = self.cancelled
        if cancelled:
            raise InfrastructureFault("the episode was stopped while its server was starting")

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            parts, episode = list(self._parts), self._episode
        for part in parts:
            with contextlib.suppress(Exception):
                part.kill()
        if episode is not None:
            episode.close()


def _copy_fault(options: MineflayerOptions, save: Path, exc: OSError) -> InfrastructureFault:
    """A fault that says where the episode's copy of a save could not be made, and why (a full
    disk, a folder not writable), instead of an internal error blamed on the worker."""
    where = options.work_dir or Path(tempfile.gettempdir())
    why = exc.strerror or str(exc) or type(exc).__name__
    return InfrastructureFault(
        f"could not copy the save {save} for the episode into {where}: {why}; free space "
        "there, or point TMPDIR at a writable folder with room for a world",
        kind="config" if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else "server",
    )


def start_episode(
    options: MineflayerOptions,
    *,
    world: str,
    rules: str,
    task: Task,
    vanilla: RuleSet,
    seed: int,
    config: BodyConfig | None = None,
    active: RuleSet | None = None,
    handle: StartHandle | None = None,
) -> MineflayerEpisode:
    """A running episode of ``task`` on a fresh copy of the save for ``world`` and ``rules``.

    ``active`` is the episode's rule set (default: resolved from ``rules``); the bridge takes
    its harvest tags, as the server takes them from the suite's datapack. ``handle`` lets
    another thread stop the start (``StartHandle.cancel``).
    """
    manifest = load_manifest(options.saves)
    entry = manifest.entry(world, rules)
    config = config or default_body_config()
    handle = handle or StartHandle()
    tmp: Path | None = None
    server: ServerProcess | None = None
    bridge: BridgeClient | None = None

    def cleanup() -> None:
        # The server first and at once: its copy is thrown away, so nothing needs saving, and
        # a worker being stopped gets a few seconds before it is killed, which a graceful
        # stop (or a bridge that no longer answers) can outlast. Then the copy, then the
        # bridge (which also ends by itself when the process holding its stdin does).
        if server is not None:
            with contextlib.suppress(Exception):
                server.kill()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if bridge is not None:
            with contextlib.suppress(Exception):
                bridge.close()

    try:
        source_folder = options.saves / entry.folder
        try:
            tmp = Path(tempfile.mkdtemp(prefix="mirrorcraft-episode-", dir=options.work_dir))
        except OSError as exc:
            raise _copy_fault(options, source_folder, exc) from None
        folder = tmp / "server"
        if not (source_folder / "server.properties").is_file():
            raise InfrastructureFault(
                f"the prepared save {source_folder} is missing or incomplete (saves.json names "
                f"it); run: mirrorcraft server prepare --jar JAR --out {options.saves} "
                f"--world {world}" + ("" if rules == "vanilla" else f" --suite {rules}"),
                kind="config",
            )
        try:
            shutil.copytree(source_folder, folder)
        except OSError as exc:
            raise _copy_fault(options, source_folder, exc) from None
        check_files(folder, entry)
        jar = options.jar or Path(manifest.jar)
        server = ServerProcess(
            folder,
            ServerSettings(
                jar=jar,
                command=options.command,
                start_timeout_s=options.start_timeout_s,
                rcon_command_timeout_s=options.rcon_command_timeout_s,
            ),
        )
        handle.adopt(server)
        server.wait_ready()
        check_server(server, entry)
        bridge = BridgeClient(options.bridge_dir, node=options.node)
        handle.adopt(bridge)
        bridge.call("hello", {"protocol": 1})
        if active is None:
            active = resolve_rules(rules)
        bridge.call("configure", bridge_config(config, vanilla, active=active))
        info = bridge.call(
            "connect",
            {"host": "127.0.0.1", "port": server.port, "username": options.player},
            timeout_s=120,
        )
        if not isinstance(info, dict) or info.get("version") not in SUPPORTED_VERSIONS:
            raise InfrastructureFault(
                f"the bot joined a server speaking {info.get('version') if isinstance(info, dict) else info!r}"
            )
        check_player(server, entry, task, options.player)
        source: AdvancementSource
        if options.milestones == "file":
            source = FileAdvancements(server.rcon, folder / "world", options.player)
        else:
            source = RconAdvancements(server.rcon, options.player)
        running_server, running_bridge = server, bridge

        def health() -> None:
            if not running_server.alive():
                raise InfrastructureFault(
                    f"the server died during the episode; log tail:\n{running_server.tail()}"
                )
            if running_bridge.lost:
                raise InfrastructureFault(running_bridge.lost)

        episode = MineflayerEpisode(
            bridge,
            source,
            task,
            vanilla,
            biome=entry.biome,
            mirror=rules != "vanilla",
            seed=seed,
            config=config,
            health_check=health,
            on_close=cleanup,
        )
        episode.world_dir = folder / "world"
        start = episode.observe()
        level = biome_spec(entry.biome).runtime.experience_level
        if start.experience_level != level or not start.alive:
            raise InfrastructureFault(
                f"spawn conditions not met: level {start.experience_level} (expected {level}), alive={start.alive}"
            )
        episode.world_fingerprint = hashlib.sha256(
            (
                manifest.jar_sha256 + "".join(p.sha256 for p in entry.datapacks) + str(entry.seed)
            ).encode()
        ).hexdigest()[:16]
        handle.adopt(episode)
        return episode
    except BaseException:
        cleanup()
        raise


def run_problems(options: MineflayerOptions, worlds: list[str], rules: list[str]) -> list[str]:
    """What stops an experiment from running on real servers (empty when it can run)."""
    from mirrorcraft.backends.mineflayer.bridge import bridge_problem
    from mirrorcraft.backends.mineflayer.saves import PrepareError, save_key

    problems: list[str] = []
    problem = bridge_problem(options.bridge_dir, options.node)
    if problem:
        problems.append(problem)
    try:
        manifest = load_manifest(options.saves)
    except PrepareError as exc:
        return [*problems, str(exc)]
    jar = options.jar or Path(manifest.jar)
    if not jar.exists():
        problems.append(f"the server jar {jar} does not exist (pass --jar)")
    for world in worlds:
        for rule in rules:
            key = save_key(world, rule)
            entry = manifest.saves.get(key)
            if entry is None:
                problems.append(f"no prepared save for {key} in {options.saves}")
                continue
            if not (options.saves / entry.folder / "server.properties").is_file():
                problems.append(
                    f"the prepared save {options.saves / entry.folder} is missing or incomplete "
                    f"(saves.json names it); prepare it again (--world {world}"
                    + ("" if rule == "vanilla" else f" --suite {rule}")
                    + ")"
                )
            if any("extension" in w for w in entry.warnings):
                problems.append(
                    f"rule set {rule}: its cooking results with a count are a MirrorCraft extension "
                    "that a vanilla 1.19 server cannot load; leave it out of real-server runs"
                )
    return sorted(set(problems))
