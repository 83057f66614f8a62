"""Failure paths of the real-server backend without a jar: episodes stopped while their server
starts or while a call hangs leave no server behind, and ``server prepare`` run again or
interrupted never leaves ``saves.json`` naming a save that is not the one it describes.

The fake server runs with ``FAKE_MC_OUTLIVE_STDIN=1`` where it matters: like a vanilla server
it then keeps running when the process holding its stdin dies, so a server nobody killed
would be left running (in a session of its own) after the run."""

from __future__ import annotations

import errno
import shlex
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.backends.mineflayer import backend as backend_mod
from mirrorcraft.backends.mineflayer.backend import (
    MineflayerOptions,
    StartHandle,
    run_problems,
)
from mirrorcraft.backends.mineflayer.fakes import FakeBridge, result
from mirrorcraft.backends.mineflayer.saves import PrepareError, load_manifest, prepare_saves
from mirrorcraft.backends.mineflayer.server import ServerProcess, ServerSettings
from mirrorcraft.cli import main
from mirrorcraft.faults import InfrastructureFault
from tests.test_mineflayer_orchestration import FAKE, make_jar, start_diamond


@pytest.fixture(scope="module")
def saves(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("saves")
    jar = make_jar(root / "server.jar")
    prepare_saves(
        jar,
        root / "saves",
        worlds=["plains-1"],
        suites=(),
        accept_eula=True,
        settings=ServerSettings(jar=jar, command=FAKE, start_timeout_s=60),
        log=lambda _line: None,
    )
    return root / "saves"


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie nobody reaped has ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _pid_recording_command(pids: Path) -> str:
    """The fake server, started through a shell that first writes the server's pid to ``pids``."""
    inner = f"echo $$ >> {shlex.quote(str(pids))}; exec {FAKE}"
    return f"sh -c {shlex.quote(inner)}"


@pytest.fixture
def scripted_bridges(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[FakeBridge]]:
    made: list[FakeBridge] = []

    def factory(*_a: Any, **_k: Any) -> FakeBridge:
        bridge = FakeBridge()
        made.append(bridge)
        return bridge

    monkeypatch.setattr(backend_mod, "BridgeClient", factory)
    monkeypatch.setattr(
        "mirrorcraft.backends.mineflayer.bridge.bridge_problem", lambda *a, **k: None
    )
    yield made


# -- episodes stopped mid-way leave nothing running ------------------------------------------
def test_cancelling_a_start_kills_the_server_it_started(
    saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted_bridges: Any
) -> None:
    """The runner starts an episode in a thread; when the episode is stopped meanwhile, the
    handle kills the half-started server at once and the start ends with a fault."""
    monkeypatch.setenv("FAKE_MC_NEVER_READY", "1")  # a server that is still starting
    started: list[ServerProcess] = []

    class Recorded(ServerProcess):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            started.append(self)

    monkeypatch.setattr(backend_mod, "ServerProcess", Recorded)
    handle = StartHandle()
    outcome: list[BaseException] = []

    def start() -> None:
        try:
            start_diamond(
                MineflayerOptions(saves=saves, command=FAKE, work_dir=tmp_path), handle=handle
            )
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started, "the server never started"
    handle.cancel()
    thread.join(timeout=120)  # without the kill, the start waits out its 300 s limit
    assert not thread.is_alive()
    assert outcome and isinstance(outcome[0], InfrastructureFault)
    assert not started[0].alive()
    assert list(tmp_path.iterdir()) == []  # the fresh copy is gone
    with pytest.raises(InfrastructureFault, match="stopped while its server was starting"):
        handle.adopt(object())  # anything started after the cancel is refused


def test_closing_an_episode_kills_its_server_before_the_bridge(
    saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy is thrown away, so the server is killed at once (no graceful stop that could
    outlast a stopped worker's grace), and before a bridge that may no longer answer."""
    monkeypatch.setenv("FAKE_MC_OUTLIVE_STDIN", "1")
    seen: dict[str, bool] = {}
    servers: list[ServerProcess] = []

    class Recorded(ServerProcess):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            servers.append(self)

    class Hung(FakeBridge):
        def close(self) -> None:
            seen["server alive"] = servers[0].alive()
            seen["copy there"] = any(tmp_path.iterdir())
            super().close()

    monkeypatch.setattr(backend_mod, "ServerProcess", Recorded)
    monkeypatch.setattr(backend_mod, "BridgeClient", lambda *a, **k: Hung())
    episode = start_diamond(MineflayerOptions(saves=saves, command=FAKE, work_dir=tmp_path))
    episode.close()
    assert seen == {"server alive": False, "copy there": False}


@pytest.mark.parametrize("where", ["starting", "mid-call"])
def test_an_episode_past_its_time_limit_leaves_no_server_running(
    saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """``mirrorcraft run``: the episode outlives its limit while the server starts, or while
    a bridge call hangs and the bridge then takes long to close; the worker is stopped (and
    killed 3 s later). The server must not outlive it, nor the save copy stay on disk."""
    monkeypatch.setenv("FAKE_MC_OUTLIVE_STDIN", "1")
    if where == "starting":
        monkeypatch.setenv("FAKE_MC_NEVER_READY", "1")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()

    def hang(_bridge: FakeBridge, args: dict[str, Any]) -> dict[str, Any]:
        time.sleep(600)
        return result("mine", args)

    class SlowToClose(FakeBridge):
        def close(self) -> None:
            time.sleep(30)  # a bridge that no longer answers ``shutdown``
            super().close()

    monkeypatch.setattr(
        backend_mod, "BridgeClient", lambda *a, **k: SlowToClose(acts={"mine": hang})
    )
    monkeypatch.setattr(
        "mirrorcraft.backends.mineflayer.bridge.bridge_problem", lambda *a, **k: None
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: mf\nworlds: [plains-1]\nrules: [vanilla]\ntasks: [diamond]\nagents: [oracle]\n"
        "budget: 3\nexecution: {episode_timeout_s: 8, max_attempts: 1}\n"
    )
    pids = tmp_path / "pids"
    out = tmp_path / "run"
    args = ["run", str(spec), "--backend", "mineflayer", "--saves", str(saves)]
    args += ["--server-command", _pid_recording_command(pids), "--out", str(out), "--no-report"]
    assert main(args) == 1  # the episode is left for a rerun
    with sqlite3.connect(out / "results.sqlite") as db:
        kinds = [r[0] for r in db.execute("select kind from faults")]
        statuses = [r[0] for r in db.execute("select status from episodes")]
    assert kinds == ["timeout"] and "ok" not in statuses  # never scored
    started = [int(p) for p in pids.read_text().split()]
    assert started and not [p for p in started if _running(p)]
    assert list((tmp_path / "tmp").iterdir()) == []


# -- the episode's copy of the save cannot be made -----------------------------------------
def test_a_save_that_cannot_be_copied_is_a_fault_that_says_where_and_why(
    saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk or a temporary folder that is not a writable folder: the episode's copy of
    the save cannot be made. That is named (the save, the folder, the system's reason), not
    an internal error blamed on the worker, and nothing is left behind."""

    def start(options: MineflayerOptions) -> InfrastructureFault:
        with pytest.raises(InfrastructureFault) as caught:
            start_diamond(options)
        return caught.value

    not_a_folder = tmp_path / "tmp-is-a-file"
    not_a_folder.write_text("")
    fault = start(MineflayerOptions(saves=saves, command=FAKE, work_dir=not_a_folder))
    assert f"could not copy the save {saves / 'plains-1'} for the episode into {not_a_folder}" in (
        str(fault)
    )
    assert fault.kind == "server" and "TMPDIR" in str(fault)

    work = tmp_path / "work"
    work.mkdir()

    def full_disk(src: Path, dst: Path) -> None:
        Path(dst).mkdir(parents=True)
        (Path(dst) / "half-copied").write_text("x")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(backend_mod.shutil, "copytree", full_disk)
    fault = start(MineflayerOptions(saves=saves, command=FAKE, work_dir=work))
    assert "No space left on device" in str(fault) and f"into {work}:" in str(fault)
    assert list(work.iterdir()) == []  # the half-made copy is gone


# -- saves that are missing or half-built --------------------------------------------------
def test_a_save_folder_that_is_gone_is_named_before_and_during_a_run(
    saves: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], scripted_bridges: Any
) -> None:
    """saves.json names a save whose folder is gone (deleted, or a prepare interrupted after it
    removed the folder): the run refuses before any episode, saying which save to prepare;
    an episode started anyway gets a config fault that says so, not an internal error."""
    broken = tmp_path / "saves"
    shutil.copytree(saves, broken)
    shutil.rmtree(broken / "plains-1")
    options = MineflayerOptions(saves=broken, command=FAKE, work_dir=tmp_path)
    problems = run_problems(options, ["plains-1"], ["vanilla"])
    assert problems == [
        f"the prepared save {broken / 'plains-1'} is missing or incomplete (saves.json names "
        "it); prepare it again (--world plains-1)"
    ]
    with pytest.raises(InfrastructureFault, match="missing or incomplete") as caught:
        start_diamond(options)
    assert caught.value.kind == "config"
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: mf\nworlds: [plains-1]\nrules: [vanilla]\ntasks: [diamond]\nagents: [random]\nbudget: 2\n"
    )
    args = ["run", str(spec), "--backend", "mineflayer", "--saves", str(broken)]
    args += ["--server-command", FAKE, "--out", str(tmp_path / "run"), "--no-report"]
    assert main(args) == 2
    assert "prepare it again (--world plains-1)" in capsys.readouterr().err
    assert main(["server", "check", str(broken)]) == 1  # it used to list the save as fine
    assert "save folder plains-1 is missing or incomplete" in capsys.readouterr().out
    assert main(["server", "check", str(saves)]) == 0


def _prepare(jar: Path, out: Path, world: str, suites: tuple[str, ...] = ()) -> list[str]:
    said: list[str] = []
    prepare_saves(
        jar,
        out,
        worlds=[world],
        suites=suites,
        accept_eula=True,
        settings=ServerSettings(jar=jar, command=FAKE, start_timeout_s=60),
        log=said.append,
    )
    return said


def test_preparing_again_keeps_the_other_saves_and_a_failed_world_leaves_the_manifest(
    saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``server prepare --world taiga-1`` on a saves folder holding plains-1 adds taiga-1 (it
    used to rewrite saves.json with taiga-1 alone); preparing plains-1 again and failing
    (the world is not the intended one) leaves saves.json without plains-1, instead of
    naming the folder that now holds the failed world."""
    out = tmp_path / "saves"
    shutil.copytree(saves, out)
    jar = Path(load_manifest(out).jar)
    _prepare(jar, out, "taiga-1", ("M02",))
    assert sorted(load_manifest(out).saves) == ["plains-1", "taiga-1", "taiga-1@M02"]
    monkeypatch.setenv("FAKE_MC_BIOME_FAR", "3000")
    with pytest.raises(PrepareError, match="3000 blocks from spawn"):
        _prepare(jar, out, "plains-1")
    assert sorted(load_manifest(out).saves) == ["taiga-1", "taiga-1@M02"]
    assert not (out / "saves.json.tmp").exists()
    monkeypatch.delenv("FAKE_MC_BIOME_FAR")
    # Rebuilding taiga-1 without its suite: the old copy of the old save is left out, said so.
    said = _prepare(jar, out, "taiga-1")
    assert sorted(load_manifest(out).saves) == ["taiga-1"]
    assert any("left out: taiga-1@M02" in line for line in said)
    # Another jar: saves of other worlds made with the old one are left out, said so.
    _prepare(jar, out, "plains-1")
    other = make_jar(tmp_path / "other.jar", "1.19.1")
    said = _prepare(other, out, "plains-1")
    assert sorted(load_manifest(out).saves) == ["plains-1"]
    assert load_manifest(out).minecraft_version == "1.19.1"
    assert any("1 save(s) of other worlds prepared with another jar" in line for line in said)
    # An unreadable saves.json is replaced, said so.
    (out / "saves.json").write_text("{not json")
    said = _prepare(other, out, "taiga-1")
    assert sorted(load_manifest(out).saves) == ["taiga-1"]
    assert any("is not a saves manifest" in line for line in said)


def test_an_rcon_port_taken_before_the_server_binds_it_says_so_at_once(
    saves: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ports are chosen free, then bound by the server a moment later; another program (another
    worker's server) can take one in between. 1.19 then warns "Unable to initialise RCON" and
    runs on without it: the start used to retry RCON until ``rcon_timeout_s`` ran out and then
    said only "connection refused". Now it fails on the server's own line, naming the ports."""
    from mirrorcraft.backends.mineflayer import server as server_mod

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    ports = iter([server_mod.free_port(), taken.getsockname()[1]])
    monkeypatch.setattr(server_mod, "free_port", lambda host="127.0.0.1": next(ports))
    folder = tmp_path / "server"
    shutil.copytree(saves / "plains-1", folder)
    settings = ServerSettings(
        jar=Path(load_manifest(saves).jar), command=FAKE, start_timeout_s=60, rcon_timeout_s=5
    )
    server = ServerProcess(folder, settings)
    try:
        with pytest.raises(InfrastructureFault) as err:
            server.wait_ready()
    finally:
        server.kill()
        taken.close()
    message = str(err.value)
    assert "Unable to initialise RCON" in message
    assert f"RCON port {server.rcon_port} was taken" in message
