"""A Source RCON client (the protocol Minecraft's ``enable-rcon`` speaks).

A packet is ``<int32 length><int32 request id><int32 type><body>\\0\\0``, little
endian; types: 3 login, 2 command, 0 response. Minecraft splits long responses
into several packets and never marks the last one, so after each command the
client sends a packet of an unknown type: the server answers it with "Unknown
request", in order, which ends the previous response. Any socket problem is an
``RconError``, an infrastructure fault (the episode is rerun).

Two limits bound a command: ``timeout_s`` for each read (a server that goes silent), and
``command_timeout_s`` for the whole answer, so a server that trickles bytes or never ends
a multi-packet answer fails the command (a ``timeout`` fault naming RCON and the command)
instead of holding it forever; an answer past ``MAX_ANSWER_BYTES`` fails the same way.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import struct
import threading
import time
from types import TracebackType

from mirrorcraft.faults import InfrastructureFault

LOGIN, COMMAND, RESPONSE = 3, 2, 0
MARKER = 100
"""A packet type Minecraft does not know; its reply marks the end of a command's response."""
MAX_COMMAND_BYTES = 1446
MAX_PACKET = 4110
MAX_ANSWER_BYTES = 8 << 20
"""No Minecraft command answers with more; a longer answer is a broken or hostile server."""


class RconError(InfrastructureFault):
    """The RCON connection failed: refused, wrong password, closed, or too slow."""

    kind = "connection"


def encode(request_id: int, kind: int, body: str) -> bytes:
    payload = struct.pack("<ii", request_id, kind) + body.encode("utf-8") + b"\x00\x00"
    return struct.pack("<i", len(payload)) + payload


class AnswerTimeout(Exception):
    """The whole answer did not arrive before its deadline (bytes may still be trickling in)."""


def read_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    """``n`` bytes; with ``deadline`` (``time.monotonic``), ``AnswerTimeout`` once it passes,
    however steadily bytes arrive (each read also keeps the socket's own timeout)."""
    chunks = bytearray()
    io_timeout = sock.gettimeout()
    while len(chunks) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AnswerTimeout
            sock.settimeout(left if io_timeout is None else min(left, io_timeout))
        try:
            got = sock.recv(n - len(chunks))
        except TimeoutError:
            if deadline is not None and time.monotonic() >= deadline:
                raise AnswerTimeout from None
            raise
        finally:
            if deadline is not None:
                sock.settimeout(io_timeout)
        if not got:
            raise ConnectionError("connection closed")
        chunks += got
    return bytes(chunks)


def read_packet(sock: socket.socket, deadline: float | None = None) -> tuple[int, int, str]:
    (length,) = struct.unpack("<i", read_exact(sock, 4, deadline))
    if not 10 <= length <= MAX_PACKET:
        raise ConnectionError(f"bad RCON packet length {length}")
    data = read_exact(sock, length, deadline)
    request_id, kind = struct.unpack("<ii", data[:8])
    return request_id, kind, data[8:-2].decode("utf-8", errors="replace")


class RconClient:
    """One authenticated RCON connection; ``command`` is thread-safe (calls are serialised).

    ``timeout_s`` bounds each read, ``command_timeout_s`` the login's and each command's whole
    answer."""

    def __init__(
        self,
        host: str,
        port: int,
        password: str,
        timeout_s: float = 10.0,
        command_timeout_s: float = 60.0,
    ):
        self.host, self.port = host, port
        self.command_timeout_s = command_timeout_s
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        try:
            self._sock = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as exc:
            raise RconError(f"cannot connect to RCON at {host}:{port}: {exc}") from None
        self._sock.settimeout(timeout_s)
        try:
            request_id = next(self._ids)
            self._sock.sendall(encode(request_id, LOGIN, password))
            got_id, _kind, _body = read_packet(
                self._sock, time.monotonic() + self.command_timeout_s
            )
        except AnswerTimeout:
            self.close()
            raise RconError(
                f"RCON login at {host}:{port} got no complete answer within "
                f"{self.command_timeout_s:g} s",
                kind="timeout",
            ) from None
        except (OSError, ConnectionError, struct.error) as exc:
            self.close()
            raise RconError(f"RCON login at {host}:{port} failed: {exc}") from None
        if got_id == -1:
            self.close()
            raise RconError(f"RCON at {host}:{port} refused the password")
        if got_id != request_id:
            self.close()
            raise RconError(f"RCON at {host}:{port} answered the login with id {got_id}")

    def command(self, text: str) -> str:
        """Run a server command (without the leading slash) and return its output."""
        if len(text.encode("utf-8")) > MAX_COMMAND_BYTES:
            raise ValueError(f"an RCON command may have at most {MAX_COMMAND_BYTES} bytes")
        shown = text if len(text) <= 80 else text[:77] + "..."
        with self._lock:
            request_id, marker_id = next(self._ids), next(self._ids)
            deadline = time.monotonic() + self.command_timeout_s
            try:
                self._sock.sendall(
                    encode(request_id, COMMAND, text) + encode(marker_id, MARKER, "")
                )
                parts: list[str] = []
                size = 0
                while True:
                    got_id, _kind, body = read_packet(self._sock, deadline)
                    if got_id == marker_id:
                        return "".join(parts)
                    if got_id == request_id:
                        parts.append(body)
                        size += len(body)
                        if size > MAX_ANSWER_BYTES:
                            raise ConnectionError(
                                f"the answer passed {MAX_ANSWER_BYTES} bytes without ending"
                            )
            except AnswerTimeout:
                self.close()
                raise RconError(
                    f"RCON command {shown!r} got no complete answer within "
                    f"{self.command_timeout_s:g} s (the server at {self.host}:{self.port} "
                    "answers too slowly or never ends its answer)",
                    kind="timeout",
                ) from None
            except (OSError, ConnectionError, struct.error) as exc:
                self.close()
                raise RconError(f"RCON command {shown!r} failed: {exc}") from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()

    def __enter__(self) -> RconClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
