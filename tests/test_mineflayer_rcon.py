"""The Source RCON client against the tiny RCON server: login, long (split) answers, errors."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mirrorcraft.backends.mineflayer.backend import MineflayerOptions
from mirrorcraft.backends.mineflayer.rcon import RconClient, RconError, encode, read_packet
from mirrorcraft.backends.mineflayer.rcon_server import RconServer
from mirrorcraft.backends.mineflayer.server import ServerSettings
from mirrorcraft.faults import InfrastructureFault


@pytest.fixture
def server() -> Iterator[RconServer]:
    def handle(command: str) -> str:
        if command == "long":
            return "".join(chr(ord("a") + i % 26) for i in range(10_000))
        return f"echo:{command}"

    srv = RconServer("secret", handle)
    yield srv
    srv.close()


def test_commands_round_trip_and_long_answers_are_joined(server: RconServer) -> None:
    with RconClient("127.0.0.1", server.port, "secret") as rcon:
        assert rcon.command("datapack list enabled") == "echo:datapack list enabled"
        long = rcon.command("long")
        assert len(long) == 10_000 and long[:3] == "abc" and long[-1] == "p"
        assert rcon.command("après") == "echo:après"
    assert server.commands == ["datapack list enabled", "long", "après"]


def test_a_wrong_password_is_an_infrastructure_fault(server: RconServer) -> None:
    with pytest.raises(RconError, match="refused the password") as err:
        RconClient("127.0.0.1", server.port, "nope")
    assert isinstance(err.value, InfrastructureFault)


def test_a_closed_port_and_a_dead_server_are_faults(server: RconServer) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RconError, match="cannot connect"):
        RconClient("127.0.0.1", port, "secret", timeout_s=2)
    rcon = RconClient("127.0.0.1", server.port, "secret")
    server.close()
    with pytest.raises(RconError, match="failed"):
        rcon.command("list")


def test_oversized_commands_are_refused_before_sending(server: RconServer) -> None:
    with RconClient("127.0.0.1", server.port, "secret") as rcon, pytest.raises(ValueError):
        rcon.command("x" * 2000)


def test_packet_framing() -> None:
    a, b = socket.socketpair()
    with a, b:
        a.sendall(encode(7, 2, "time query daytime"))
        assert read_packet(b) == (7, 2, "time query daytime")
        a.sendall(b"\x02\x00\x00\x00xx")
        with pytest.raises(ConnectionError, match="bad RCON packet length"):
            read_packet(b)


class _StallingRcon:
    """An RCON server that logs in properly, then answers every command endlessly: ``trickle``
    sends a valid answer one byte at a time, ``endless`` sends answer packets and never the
    reply that ends them. It gives up (closes) after ``give_up_s``, so a client without a
    total deadline fails late with a closed connection instead of hanging the test."""

    def __init__(self, mode: str, give_up_s: float = 8.0):
        self.mode, self.give_up_s = mode, give_up_s
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self._listener.accept()
        with conn:
            rid, _kind, _body = read_packet(conn)
            conn.sendall(encode(rid, 2, ""))
            rid, _kind, _body = read_packet(conn)
            end = time.monotonic() + self.give_up_s
            packet = encode(rid, 0, "x" * 50)
            try:
                while time.monotonic() < end and not self._stop.is_set():
                    if self.mode == "trickle":
                        for byte in packet:
                            conn.sendall(bytes([byte]))
                            time.sleep(0.02)
                    else:
                        conn.sendall(packet)
                        time.sleep(0.005)
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self._listener.close()


@pytest.mark.parametrize("mode", ["trickle", "endless"])
def test_a_command_whose_answer_never_ends_fails_at_its_deadline(mode: str) -> None:
    stalling = _StallingRcon(mode)
    try:
        rcon = RconClient("127.0.0.1", stalling.port, "pw", timeout_s=5, command_timeout_s=0.5)
        with pytest.raises(RconError) as err:
            rcon.command("execute if entity @a[name=agent]")
    finally:
        stalling.close()
    assert err.value.kind == "timeout"
    message = str(err.value)
    assert "RCON command 'execute if entity @a[name=agent]'" in message
    assert "no complete answer within 0.5 s" in message


def test_the_command_deadline_is_a_server_setting() -> None:
    settings = ServerSettings(jar=Path("server.jar"), rcon_command_timeout_s=7.5)
    assert settings.rcon_command_timeout_s == 7.5
    options = MineflayerOptions(saves=Path("servers"), rcon_command_timeout_s=12.0)
    assert MineflayerOptions.from_dict(options.to_dict()).rcon_command_timeout_s == 12.0
