"""The Python side of the Node bridge: start ``node bridge/src/main.js``, speak its line-delimited
JSON protocol, and turn every transport problem into an ``InfrastructureFault``.

Requests carry an integer id; the reader thread matches responses to waiting calls.
A dead bridge process, a lost server connection, a timeout or a malformed reply is
a ``BridgeError`` (an ``InfrastructureFault``: the episode is rerun). Structured
errors from the bridge keep their code (``BridgeError.code``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from mirrorcraft.faults import FaultKind, InfrastructureFault

PROTOCOL = 1
ENTRY = Path("src") / "main.js"


CODE_KINDS: dict[str, FaultKind] = {
    # The server or the bridge did not answer in time (a wait, a window, a click, the spawn).
    "timeout": "timeout",
    # The bot lost the server (kicked, connection ended or refused); Python's own code for a
    # bridge process that exited or cannot be written to.
    "disconnected": "connection",
    "exited": "connection",
    # The bridge is another version than this package (a method it does not know), or it
    # refused a setting (the player name, the protocol, the body bounds): a rerun of the same
    # episode cannot help.
    "unknown_method": "config",
    "invalid_params": "config",
    # Python's own: Node or the bridge's packages missing, or a bridge of another protocol.
    "unavailable": "config",
    "protocol": "config",
    # The bridge answered with a failure: a window of the wrong type (`unsupported`), an
    # unexpected error inside it (`internal`), a line or a call order it could not take
    # (`bad_json`, `bad_request`, `not_connected`, `busy`), or no code at all.
    "unsupported": "server",
    "internal": "server",
    "bad_json": "server",
    "bad_request": "server",
    "not_connected": "server",
    "busy": "server",
}
"""Each bridge error code as an infrastructure fault kind (an unknown code is ``server``).

None of them is the agent's: a skill call the game refuses (no target, a missing item, a
refused trade, a failed placement) comes back as a result with ``ok: false`` and a reason
from ``body/results.py``, which the agent sees and which is scored; a bridge error is never
shown to the agent and the episode is rerun. ``docs/real_server.md`` has the table."""


class BridgeError(InfrastructureFault):
    """The bridge failed: it died, lost the server, timed out, or answered with an error."""

    kind = "connection"

    def __init__(self, message: str, code: str = "bridge"):
        super().__init__(message, kind=CODE_KINDS.get(code, "server"))
        self.code = code


class BridgeUnavailable(BridgeError):
    """Node or the bridge's npm packages are missing (install them: ``npm ci --prefix bridge``)."""

    def __init__(self, message: str):
        super().__init__(message, "unavailable")


def find_bridge_dir() -> Path:
    """``$MIRRORCRAFT_BRIDGE_DIR``, else the ``bridge/`` folder of the source checkout."""
    env = os.environ.get("MIRRORCRAFT_BRIDGE_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "bridge" / "package.json").exists():
            return parent / "bridge"
    raise BridgeUnavailable(
        "cannot find the bridge folder: set MIRRORCRAFT_BRIDGE_DIR to the repository's bridge/ folder"
    )


def bridge_problem(bridge_dir: Path | None = None, node: str = "node") -> str | None:
    """Why the bridge cannot run here (None when it can): node missing or npm packages not installed."""
    if shutil.which(node) is None:
        return f"{node!r} (Node.js 20) is not on PATH"
    try:
        folder = bridge_dir or find_bridge_dir()
    except BridgeUnavailable as exc:
        return str(exc)
    for package in ("mineflayer", "mineflayer-pathfinder", "minecraft-data", "vec3"):
        if not (folder / "node_modules" / package / "package.json").exists():
            return f"the bridge's npm packages are not installed ({package} missing): run npm ci --prefix {folder}"
    return None


class BridgeClient:
    """One bridge process. Thread-safe ``call``; use as a context manager or call ``close``."""

    def __init__(
        self,
        bridge_dir: Path | None = None,
        *,
        node: str = "node",
        start_timeout_s: float = 30.0,
        env: Mapping[str, str] | None = None,
    ):
        self.bridge_dir = bridge_dir or find_bridge_dir()
        problem = bridge_problem(self.bridge_dir, node)
        if problem:
            raise BridgeUnavailable(problem)
        self._lock = threading.Lock()
        self._next_id = 1
        self._waiting: dict[int, tuple[threading.Event, list[Any]]] = {}
        self.events: deque[dict[str, Any]] = deque(maxlen=200)
        self.stderr: deque[str] = deque(maxlen=200)
        self.orphans: deque[dict[str, Any]] = deque(maxlen=200)
        """Responses that matched no waiting call (id null: the bridge rejected a line)."""
        self.lost: str | None = None
        self.died: str | None = None
        """Why the player died, once the bridge reported it (an outcome, not a fault)."""
        self._ready = threading.Event()
        self.info: dict[str, Any] = {}
        try:
            self.proc = subprocess.Popen(
                [node, str(self.bridge_dir / ENTRY)],
                cwd=self.bridge_dir,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **(env or {})},
                start_new_session=True,
            )
        except OSError as exc:
            raise BridgeUnavailable(f"cannot start the bridge with {node!r}: {exc}") from None
        threading.Thread(target=self._read_stdout, name="bridge-out", daemon=True).start()
        err_reader = threading.Thread(target=self._read_stderr, name="bridge-err", daemon=True)
        err_reader.start()
        started = self._ready.wait(start_timeout_s)
        if not started or not self.info:
            if started:  # its output ended: let its last words (stderr) arrive
                err_reader.join(timeout=5)
            tail = "\n".join(list(self.stderr)[-10:])
            self.close()
            if started:
                raise BridgeError(f"the bridge exited before it was ready:\n{tail}", "exited")
            raise BridgeError(
                f"the bridge did not start within {start_timeout_s:g} s:\n{tail}", "timeout"
            )
        if self.info.get("protocol") != PROTOCOL:
            self.close()
            raise BridgeError(
                f"the bridge speaks protocol {self.info.get('protocol')}, expected {PROTOCOL}",
                "protocol",
            )

    # -- reader threads ------------------------------------------------------------------
    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        try:
            for raw in self.proc.stdout:
                self._line(raw)
        except (OSError, ValueError) as exc:  # the stream closed under us
            self.lost = self.lost or f"reading the bridge's output failed: {exc}"
        finally:
            # However the reader ends, no call may wait out its timeout on a reader gone.
            self.lost = self.lost or f"the bridge process exited (code {self.proc.poll()})"
            with self._lock:
                waiting, self._waiting = self._waiting, {}
            for event, _box in waiting.values():
                event.set()
            self._ready.set()

    def _line(self, raw: bytes) -> None:
        """One stdout line: a response, an event, or noise (kept in the stderr tail)."""
        try:
            msg = json.loads(raw)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested absurdly deep
            self.stderr.append(f"(non-protocol stdout) {raw[:200]!r}")
            return
        if not isinstance(msg, dict):
            self.stderr.append(f"(non-protocol stdout) {raw[:200]!r}")
            return
        if "event" in msg:
            self._event(msg)
            return
        rid = msg.get("id")
        with self._lock:
            slot = self._waiting.pop(rid, None) if type(rid) is int else None
        if slot is None:
            self.orphans.append(msg)
            return
        slot[1].append(msg)
        slot[0].set()

    def _event(self, msg: dict[str, Any]) -> None:
        self.events.append(msg)
        raw = msg.get("data")
        data: dict[str, Any] = raw if isinstance(raw, dict) else {}
        if msg["event"] == "ready":
            self.info = dict(data)
            self._ready.set()
        elif msg["event"] == "disconnected":
            self.lost = f"the bot lost the server: {data.get('reason')}"
        elif msg["event"] == "death":
            self.died = str(data.get("reason") or "the player died")

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            self.stderr.append(raw.decode("utf-8", errors="replace").rstrip())

    # -- calls -------------------------------------------------------------------------
    def call(
        self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 60.0
    ) -> Any:
        if self.proc.poll() is not None:
            raise BridgeError(
                f"the bridge is not running (exit code {self.proc.returncode})", "exited"
            )
        event = threading.Event()
        box: list[Any] = []
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            self._waiting[rid] = (event, box)
        line = json.dumps({"id": rid, "method": method, "params": dict(params or {})}) + "\n"
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line.encode())
            self.proc.stdin.flush()
        except (OSError, ValueError) as exc:
            with self._lock:
                self._waiting.pop(rid, None)
            raise BridgeError(f"cannot write to the bridge: {exc}", "exited") from None
        if not event.wait(timeout_s):
            with self._lock:
                self._waiting.pop(rid, None)
            raise BridgeError(
                f"the bridge did not answer {method!r} within {timeout_s:g} s", "timeout"
            )
        if not box:
            raise BridgeError(
                f"{self.lost or 'the bridge exited'} (during {method!r}); {self.stderr_tail()}",
                "exited",
            )
        msg = box[0]
        if msg.get("ok") is True:
            return msg.get("result")
        err = msg.get("error") if isinstance(msg.get("error"), dict) else {}
        code = str(err.get("code", "bridge"))
        raise BridgeError(f"bridge {method!r} failed ({code}): {err.get('message', msg)}", code)

    def send_raw(self, line: str) -> None:
        """Write a raw line (tests use it to check the bridge survives bad input)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def stderr_tail(self, n: int = 5) -> str:
        tail = [line for line in list(self.stderr)[-n:] if line.strip()]
        return "bridge stderr: " + (" | ".join(tail) if tail else "(empty)")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self, timeout_s: float = 5.0) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(BridgeError):
                self.call("shutdown", timeout_s=timeout_s)
            deadline = time.monotonic() + timeout_s
            while self.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=timeout_s)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def kill(self) -> None:
        """End the bridge process now, without the ``shutdown`` exchange (a call in flight
        fails at once with a ``BridgeError``)."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.kill()

    def __enter__(self) -> BridgeClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
