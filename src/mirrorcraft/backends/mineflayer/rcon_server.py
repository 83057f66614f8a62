"""A tiny RCON server for tests and the fake Minecraft server (not for production use).

It speaks the same framing as Minecraft: login (answers -1 to a wrong password),
commands answered through ``handler(command) -> str`` and split into 4096-byte
packets like Minecraft does, and "Unknown request <hex>" for unknown packet types.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable

from mirrorcraft.backends.mineflayer.rcon import COMMAND, LOGIN, RESPONSE, encode, read_packet

CHUNK = 4096


class RconServer:
    def __init__(
        self,
        password: str,
        handler: Callable[[str], str],
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.password = password
        self.handler = handler
        self.commands: list[str] = []
        self._listener = socket.create_server((host, port))
        self.host, self.port = self._listener.getsockname()[:2]
        self._closed = threading.Event()
        self._clients: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="rcon-accept", daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _addr = self._listener.accept()
            except OSError:
                return
            self._clients.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        authed = False
        try:
            while True:
                request_id, kind, body = read_packet(conn)
                if kind == LOGIN:
                    authed = body == self.password
                    conn.sendall(encode(request_id if authed else -1, COMMAND, ""))
                elif kind == COMMAND and authed:
                    self.commands.append(body)
                    try:
                        out = self.handler(body)
                    except Exception as exc:  # a broken fake answers like a server error
                        out = f"An unexpected error occurred: {exc}"
                    chunks = [out[i : i + CHUNK] for i in range(0, len(out), CHUNK)] or [""]
                    conn.sendall(b"".join(encode(request_id, RESPONSE, c) for c in chunks))
                elif authed:
                    conn.sendall(encode(request_id, RESPONSE, f"Unknown request {kind:x}"))
                else:
                    conn.sendall(encode(-1, COMMAND, ""))
        except (OSError, ConnectionError, struct.error):
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        for conn in self._clients:
            try:
                conn.shutdown(socket.SHUT_RDWR)
                conn.close()
            except OSError:
                pass
