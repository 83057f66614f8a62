"""One Minecraft server process on loopback: start from a save folder, wait until it is ready,
talk to it through RCON, stop it. Used by ``server prepare`` (to generate saves) and by the
mineflayer backend (one server per episode, from a fresh copy of the save)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from mirrorcraft.backends.mineflayer.minecraft import (
    DONE_RE,
    FAILED_RE,
    STARTING_RE,
    base_properties,
    read_properties,
    write_properties,
)
from mirrorcraft.backends.mineflayer.rcon import RconClient, RconError
from mirrorcraft.faults import InfrastructureFault

DEFAULT_COMMAND = "java -Xms1G -Xmx2G -jar {jar} nogui"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class ServerSettings:
    jar: Path
    command: str = DEFAULT_COMMAND
    """Command line to start the server in its folder; ``{jar}`` is replaced by the jar path."""
    start_timeout_s: float = 300.0
    stop_timeout_s: float = 60.0
    rcon_timeout_s: float = 30.0
    """How long RCON may take to become reachable once the server says it is done."""
    rcon_command_timeout_s: float = 60.0
    """The most one RCON command's whole answer may take (a trickling server fails it)."""

    def argv(self) -> list[str]:
        return [part.replace("{jar}", str(self.jar)) for part in shlex.split(self.command)]


class ServerProcess:
    """A running server in ``folder``; use as a context manager (stopping is always attempted)."""

    def __init__(
        self, folder: Path, settings: ServerSettings, *, env: dict[str, str] | None = None
    ):
        self.folder = folder
        self.settings = settings
        self.port = free_port()
        self.rcon_port = free_port()
        while self.rcon_port == self.port:
            self.rcon_port = free_port()
        self.password = secrets.token_urlsafe(18)
        self.version: str | None = None
        self.log: deque[str] = deque(maxlen=400)
        self._ready = threading.Event()
        self._failed: str | None = None
        self._rcon: RconClient | None = None
        self._env = env
        self._configure()
        try:
            self.proc = subprocess.Popen(
                settings.argv(),
                cwd=folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        except OSError as exc:
            raise InfrastructureFault(
                f"cannot start the server ({settings.argv()[0]}): {exc}"
            ) from None
        self._reader = threading.Thread(target=self._read, name="mc-server-log", daemon=True)
        self._reader.start()

    def _configure(self) -> None:
        path = self.folder / "server.properties"
        values: dict[str, object] = dict(read_properties(path)) if path.exists() else {}
        if not values:
            values = base_properties(seed=0, preset="minecraft:normal")
        values.update(
            {
                "server-ip": "127.0.0.1",
                "server-port": self.port,
                "query.port": self.port,
                "enable-rcon": True,
                "rcon.port": self.rcon_port,
                "rcon.password": self.password,
                "online-mode": False,
            }
        )
        write_properties(path, values)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", errors="replace").rstrip()
            self.log.append(line)
            m = STARTING_RE.search(line)
            if m:
                self.version = m.group(1)
            if DONE_RE.search(line):
                self._ready.set()
            if FAILED_RE.search(line) and self._failed is None:
                self._failed = line
        self._ready.set()  # wake a waiter when the process ends

    # -- lifecycle ---------------------------------------------------------------------
    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, n: int = 15) -> str:
        return "\n".join(list(self.log)[-n:])

    def wait_ready(self) -> None:
        """Until the server prints "Done" and RCON answers; an InfrastructureFault otherwise."""
        if not self._ready.wait(self.settings.start_timeout_s):
            raise InfrastructureFault(
                f"the server did not start within {self.settings.start_timeout_s:g} s; log tail:\n{self.tail()}"
            )
        if not self.alive():
            self._raise_failed()
            raise InfrastructureFault(
                f"the server exited while starting (code {self.proc.returncode}); log tail:\n{self.tail()}"
            )
        self._raise_failed()
        deadline = time.monotonic() + self.settings.rcon_timeout_s
        while True:
            # 1.19 sets RCON up after its "Done" line: a port it could not bind shows up here.
            self._raise_failed()
            try:
                self._rcon = RconClient(
                    "127.0.0.1",
                    self.rcon_port,
                    self.password,
                    command_timeout_s=self.settings.rcon_command_timeout_s,
                )
                return
            except RconError as exc:
                if time.monotonic() > deadline or not self.alive():
                    raise InfrastructureFault(f"RCON never became reachable: {exc}") from None
                time.sleep(0.2)

    def _raise_failed(self) -> None:
        if self._failed is None:
            return
        hint = ""
        if "BIND" in self._failed or "RCON" in self._failed:
            hint = (
                f" (port {self.port} or RCON port {self.rcon_port} was taken after it was chosen, "
                "by another program or server; a rerun chooses new ports)"
            )
        raise InfrastructureFault(
            f"the server reported a failure: {self._failed}{hint}; log tail:\n{self.tail()}"
        )

    @property
    def rcon(self) -> RconClient:
        if self._rcon is None:
            raise InfrastructureFault("the server is not ready (no RCON connection)")
        return self._rcon

    def command(self, text: str) -> str:
        if not self.alive():
            raise InfrastructureFault(
                f"the server is not running (exit code {self.proc.returncode})"
            )
        return self.rcon.command(text)

    def stop(self) -> None:
        """``stop`` through RCON, then SIGTERM, then SIGKILL; never raises."""
        graceful = 5.0  # a server that is not answering RCON gets a short grace period
        if self.alive() and self._rcon is not None:
            with contextlib.suppress(RconError):
                self._rcon.command("stop")
                graceful = self.settings.stop_timeout_s
        if self._rcon is not None:
            self._rcon.close()
            self._rcon = None
        if self.alive() and self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.write(b"stop\n")
                self.proc.stdin.flush()
        for sig, wait in (
            (None, graceful),
            (signal.SIGTERM, 10.0),
            (signal.SIGKILL, 10.0),
        ):
            if sig is not None and self.alive():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self._reader.join(timeout=5)

    def kill(self) -> None:
        """SIGKILL the server's process group now and reap it; never raises. For a server whose
        save is thrown away (an episode's fresh copy): nothing needs saving, and a stop that
        waits on the game could outlast the grace a stopped worker gets (the server, in a
        session of its own, would then outlive it). Safe to call from two threads at once."""
        rcon, self._rcon = self._rcon, None
        if rcon is not None:
            rcon.close()
        if self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10.0)
        self._reader.join(timeout=5)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
