"""A Source RCON client (the protocol Minecraft's ``enable-rcon`` speaks).

A packet is ``<int32 length><int32 request id><int32 type><body>\\0\\0``, little
endian; types: 3 login, 2 command, 0 response. Minecraft splits long responses
into several packets and never marks the last one, so after each command the
client sends a packet of an unknown type: the server answers it with "Unknown
request", in order, which ends the previous response. Any socket problem is an
``RconError``, an infrastructure fault (the episode is rerun).
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import struct
import threading
from types import TracebackType

from mirrorcraft.faults import InfrastructureFault

LOGIN, COMMAND, RESPONSE = 3, 2, 0
MARKER = 100
"""A packet type Minecraft does not know; its reply marks the end of a command's response."""
MAX_COMMAND_BYTES = 1446
MAX_PACKET = 4110


class RconError(InfrastructureFault):
    """The RCON connection failed: refused, wrong password, closed, or too slow."""

    kind = "connection"


def encode(request_id: int, kind: int, body: str) -> bytes:
    payload = struct.pack("<ii", request_id, kind) + body.encode("utf-8") + b"\x00\x00"
    return struct.pack("<i", len(payload)) + payload


def read_exact(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        got = sock.recv(n - len(chunks))
        if not got:
            raise ConnectionError("connection closed")
        chunks += got
    return bytes(chunks)


def read_packet(sock: socket.socket) -> tuple[int, int, str]:
    (length,) = struct.unpack("<i", read_exact(sock, 4))
    if not 10 <= length <= MAX_PACKET:
        raise ConnectionError(f"bad RCON packet length {length}")
    data = read_exact(sock, length)
    request_id, kind = struct.unpack("<ii", data[:8])
    return request_id, kind, data[8:-2].decode("utf-8", errors="replace")


class RconClient:
    """One authenticated RCON connection; ``command`` is thread-safe (calls are serialised)."""

    def __init__(self, host: str, port: int, password: str, timeout_s: float = 10.0):
        self.host, self.port = host, port
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
            got_id, _kind, _body = read_packet(self._sock)
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
        with self._lock:
            request_id, marker_id = next(self._ids), next(self._ids)
            try:
                self._sock.sendall(
                    encode(request_id, COMMAND, text) + encode(marker_id, MARKER, "")
                )
                parts: list[str] = []
                while True:
                    got_id, _kind, body = read_packet(self._sock)
                    if got_id == marker_id:
                        return "".join(parts)
                    if got_id == request_id:
                        parts.append(body)
            except (OSError, ConnectionError, struct.error) as exc:
                self.close()
                raise RconError(f"RCON command {text.split(' ', 1)[0]!r} failed: {exc}") from None

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
