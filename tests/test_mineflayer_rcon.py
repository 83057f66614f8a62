"""The Source RCON client against the tiny RCON server: login, long (split) answers, errors."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from mirrorcraft.backends.mineflayer.rcon import RconClient, RconError, encode, read_packet
from mirrorcraft.backends.mineflayer.rcon_server import RconServer
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
