"""Server orchestration without a vanilla jar: ``server prepare`` and per-episode servers run
against the fake server (a Python stand-in that answers RCON like 1.19), and the episode uses a
scripted bridge. Covers the pre-episode checks and every infrastructure fault they raise."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.backends.mineflayer import backend as backend_mod
from mirrorcraft.backends.mineflayer.backend import MineflayerOptions, run_problems, start_episode
from mirrorcraft.backends.mineflayer.fakes import FakeBridge, gain, result
from mirrorcraft.backends.mineflayer.minecraft import JarError, read_properties
from mirrorcraft.backends.mineflayer.preflight import check_player, check_server
from mirrorcraft.backends.mineflayer.rcon import RconError
from mirrorcraft.backends.mineflayer.saves import (
    PrepareError,
    SavesManifest,
    load_manifest,
    prepare_saves,
)
from mirrorcraft.backends.mineflayer.server import ServerProcess, ServerSettings
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.cli import main
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.faults import InfrastructureFault

FAKE = f"{shlex.quote(sys.executable)} -m mirrorcraft.backends.mineflayer.fake_server {{jar}}"


def start_diamond(options: MineflayerOptions, **extra: Any) -> Any:
    """``start_episode`` of the diamond task on plains-1 under vanilla rules, seed 1."""
    return start_episode(
        options,
        world="plains-1",
        rules="vanilla",
        task=get_task("diamond"),
        vanilla=vanilla_rules(),
        seed=1,
        **extra,
    )


def make_jar(path: Path, version: str = "1.19.2", data: int = 10) -> Path:
    doc = {
        "id": version,
        "name": version,
        "protocol_version": 760,
        "world_version": 3120,
        "pack_version": {"resource": 9, "data": data},
    }
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("version.json", json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, SavesManifest]:
    root = tmp_path_factory.mktemp("saves")
    jar = make_jar(root / "server.jar")
    manifest = prepare_saves(
        jar,
        root / "saves",
        worlds=["plains-1"],
        suites=("M01", "M02"),
        accept_eula=True,
        settings=ServerSettings(jar=jar, command=FAKE, start_timeout_s=60),
        log=lambda _line: None,
    )
    return root / "saves", manifest


def fresh_server(
    saves: Path, key: str, tmp: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> ServerProcess:
    folder = tmp / key
    shutil.copytree(saves / key, folder)
    manifest = load_manifest(saves)
    return ServerProcess(
        folder,
        ServerSettings(jar=Path(manifest.jar), command=FAKE, start_timeout_s=timeout),
        env=env,
    )


# -- prepare -------------------------------------------------------------------------------
def test_prepare_builds_vanilla_and_mirror_saves(prepared: tuple[Path, SavesManifest]) -> None:
    saves, manifest = prepared
    assert sorted(manifest.saves) == ["plains-1", "plains-1@M01", "plains-1@M02"]
    assert manifest.minecraft_version == "1.19.2"
    assert load_manifest(saves) == manifest
    props = read_properties(saves / "plains-1" / "server.properties")
    assert props["level-seed"] == "1101" and props["level-type"] == "mirrorcraft:plains"
    assert props["online-mode"] == "false" and props["enable-rcon"] == "true"
    assert props["spawn-protection"] == "0" and props["difficulty"] == "peaceful"
    assert "rcon.password" not in props and "server-port" not in props  # chosen per run
    assert (saves / "plains-1" / "eula.txt").read_text().strip().endswith("eula=true")
    # The world was generated with the worldgen pack present, from the world's seed and preset.
    created = json.loads((saves / "plains-1" / "world" / "fake_level.json").read_text())
    assert created["level-seed"] == "1101" and created["level-type"] == "mirrorcraft:plains"
    assert "mirrorcraft_worldgen_plains.zip" in created["datapacks_at_creation"]
    mirror = manifest.saves["plains-1@M02"]
    assert [p.kind for p in mirror.datapacks][-1] == "suite"
    assert (saves / "plains-1@M02" / "world" / "datapacks" / "mirrorcraft_suite_M02.zip").exists()
    assert not (saves / "plains-1" / "world" / "datapacks" / "mirrorcraft_suite_M02.zip").exists()
    assert "minecraft:book" in mirror.datapacks[-1].recipes
    # M01's cooking counts are installed in the server form (marker items swapped by a tick
    # function), which a stock 1.19 server loads; the save says so.
    m01 = manifest.saves["plains-1@M01"]
    assert any("tick function" in w for w in m01.warnings)
    assert not any("extension" in w for w in m01.warnings + mirror.warnings)
    with zipfile.ZipFile(
        saves / "plains-1@M01" / "world" / "datapacks" / "mirrorcraft_suite_M01.zip"
    ) as zf:
        smelting = json.loads(
            zf.read("data/minecraft/recipes/iron_ingot_from_smelting_raw_iron.json")
        )
        assert smelting["result"] == "minecraft:barrier"
        assert "data/mirrorcraft_cooking/functions/tick.mcfunction" in zf.namelist()


def test_prepare_refuses_clearly(tmp_path: Path) -> None:
    jar = make_jar(tmp_path / "server.jar")
    with pytest.raises(PrepareError, match="--accept-eula"):
        prepare_saves(
            jar,
            tmp_path / "a",
            worlds=["plains-1"],
            suites=(),
            settings=ServerSettings(jar=jar, command=FAKE),
        )
    with pytest.raises(JarError, match=r"Minecraft 1\.20\.1"):
        prepare_saves(
            make_jar(tmp_path / "new.jar", "1.20.1", 15), tmp_path / "b", accept_eula=True
        )
    (tmp_path / "junk.jar").write_text("not a zip")
    with pytest.raises(JarError, match="not a jar"):
        prepare_saves(tmp_path / "junk.jar", tmp_path / "c", accept_eula=True)
    with pytest.raises(PrepareError, match="unknown world 'moon-1'"):
        prepare_saves(jar, tmp_path / "d", worlds=["moon-1"], accept_eula=True)
    with pytest.raises(PrepareError, match="unknown rule suite"):
        prepare_saves(jar, tmp_path / "e", worlds=["plains-1"], suites=("M99",), accept_eula=True)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"FAKE_MC_IGNORE_PRESETS": "1"},
            "did not load the world preset mirrorcraft:plains and generated a minecraft:normal world",
        ),
        ({"FAKE_MC_BIOME_FAR": "3000"}, "mirrorcraft:plains is 3000 blocks from spawn"),
    ],
)
def test_prepare_refuses_a_world_that_is_not_the_intended_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    """The fake server falls back to a normal world (1.19's log line) or puts the biome far
    from spawn: prepare stops with a clear error, and writes no saves.json."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    jar = make_jar(tmp_path / "server.jar")
    with pytest.raises(PrepareError, match=message):
        prepare_saves(
            jar,
            tmp_path / "saves",
            worlds=["plains-1"],
            suites=(),
            accept_eula=True,
            settings=ServerSettings(jar=jar, command=FAKE, start_timeout_s=60),
            log=lambda _line: None,
        )
    assert not (tmp_path / "saves" / "saves.json").exists()


def test_locate_answers_are_read_as_1_19_words_them() -> None:
    from mirrorcraft.backends.mineflayer.saves import check_biome, check_preset

    check_biome(
        "w", "mirrorcraft:plains", "The nearest mirrorcraft:plains is at [0, 64, 0] (0 blocks away)"
    )
    check_biome(
        "w",
        "mirrorcraft:plains",
        "The nearest mirrorcraft:plains is at [8, ~, -8] (11 blocks away)",
    )
    for answer in (
        'Could not find a biome of type "mirrorcraft:plains" within reasonable distance',
        'There is no biome with type "mirrorcraft:plains"',
        "The nearest minecraft:plains is at [0, 64, 0] (0 blocks away)",
        "",
    ):
        with pytest.raises(PrepareError, match="no mirrorcraft:plains near spawn"):
            check_biome("w", "mirrorcraft:plains", answer)
    check_preset("w", "mirrorcraft:plains", ['[Server thread/INFO]: Preparing level "world"'])
    with pytest.raises(PrepareError, match="generated a minecraft:normal world"):
        check_preset(
            "w",
            "mirrorcraft:plains",
            [
                "[12:00:00] [main/WARN]: Failed to parse level-type mirrorcraft:plains, defaulting to minecraft:normal"
            ],
        )


def test_server_prepare_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jar = make_jar(tmp_path / "server.jar")
    code = main(
        [
            "server",
            "prepare",
            "--jar",
            str(jar),
            "--out",
            str(tmp_path / "s"),
            "--world",
            "taiga-1",
            "--suite",
            "M03",
            "--accept-eula",
            "--server-command",
            FAKE,
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "2 saves for Minecraft 1.19.2" in out
    assert "warning: suite M03" in out and "tick function" in out and "extension" not in out
    assert main(["server", "check", str(tmp_path / "s")]) == 0
    assert "taiga-1@M03: seed 2101, preset mirrorcraft:taiga" in capsys.readouterr().out
    assert main(["server", "prepare", "--jar", str(jar), "--out", str(tmp_path / "t")]) == 2
    assert "--accept-eula" in capsys.readouterr().err


# -- per-episode servers and the pre-episode checks -------------------------------------------
def test_a_fresh_server_passes_the_checks(
    prepared: tuple[Path, SavesManifest], tmp_path: Path
) -> None:
    saves, manifest = prepared
    entry = manifest.saves["plains-1@M02"]
    with fresh_server(saves, "plains-1@M02", tmp_path) as server:
        server.wait_ready()
        assert server.version == "1.19.2"
        props = read_properties(server.folder / "server.properties")
        assert int(props["rcon.port"]) == server.rcon_port and props["server-ip"] == "127.0.0.1"
        check_server(server, entry)
        check_player(server, entry, get_task("enchantment"), "agent")
    assert not server.alive()


@pytest.mark.parametrize(
    ("env", "key", "expected"),
    [
        (
            {"FAKE_MC_SKIP_DATAPACKS": "mirrorcraft_suite_M02.zip"},
            "plains-1@M02",
            "missing datapack.*mirrorcraft_suite_M02.zip",
        ),
        ({"FAKE_MC_VERSION": "1.18.2"}, "plains-1", "runs Minecraft 1.18.2"),
    ],
)
def test_server_checks_raise_infrastructure_faults(
    prepared: tuple[Path, SavesManifest],
    tmp_path: Path,
    env: dict[str, str],
    key: str,
    expected: str,
) -> None:
    saves, manifest = prepared
    with fresh_server(saves, key, tmp_path, env) as server:
        server.wait_ready()
        with pytest.raises(InfrastructureFault, match=expected):
            check_server(server, manifest.saves[key])


def test_player_checks_raise_infrastructure_faults(
    prepared: tuple[Path, SavesManifest], tmp_path: Path
) -> None:
    saves, manifest = prepared
    env = {"FAKE_MC_MISSING_ADVANCEMENTS": "story/iron_tools"}
    with fresh_server(saves, "plains-1", tmp_path, env) as server:
        server.wait_ready()
        with pytest.raises(
            InfrastructureFault, match="advancement minecraft:story/iron_tools is not available"
        ):
            check_player(server, manifest.saves["plains-1"], get_task("diamond"), "agent")
        with pytest.raises(InfrastructureFault, match="not on the server"):
            check_player(server, manifest.saves["plains-1"], get_task("diamond"), "nobody")
    # M01 in the server form: its raw-iron recipes load on a 1.19 server.
    m01 = manifest.saves["plains-1@M01"]
    with fresh_server(saves, "plains-1@M01", tmp_path / "m01") as server:
        server.wait_ready()
        check_server(server, m01)
        check_player(server, m01, get_task("iron_armor"), "agent")
    # A save holding the extension form (as prepared before the server form existed): the
    # server drops those recipes, and the check says why.
    folder = tmp_path / "old"
    shutil.copytree(saves / "plains-1@M01", folder / "plains-1@M01")
    from mirrorcraft.backends.mineflayer.saves import suite_zip

    old_zip = suite_zip("M01")[1]
    (folder / "plains-1@M01" / "world" / "datapacks" / "mirrorcraft_suite_M01.zip").write_bytes(
        old_zip
    )
    old = m01.model_copy(update={"warnings": ("suite M01: uses the MirrorCraft extension",)})
    with ServerProcess(
        folder / "plains-1@M01",
        ServerSettings(jar=Path(manifest.jar), command=FAKE, start_timeout_s=60),
    ) as server:
        server.wait_ready()
        with pytest.raises(InfrastructureFault, match=r"iron_ingot_from_.*not loaded.*cannot load"):
            check_player(server, old, get_task("iron_armor"), "agent")


def test_a_server_that_dies_or_never_starts_is_a_fault(
    prepared: tuple[Path, SavesManifest], tmp_path: Path
) -> None:
    saves, _ = prepared
    with fresh_server(saves, "plains-1", tmp_path / "a", {"FAKE_MC_DIE_AFTER": "1"}) as server:
        server.wait_ready()
        server.command("datapack list enabled")
        with pytest.raises(RconError):
            server.command("datapack list enabled")
        server.proc.wait(timeout=10)
        with pytest.raises(InfrastructureFault, match="not running"):
            server.command("list")
    with (
        fresh_server(
            saves, "plains-1", tmp_path / "b", {"FAKE_MC_NEVER_READY": "1"}, timeout=1.5
        ) as server,
        pytest.raises(InfrastructureFault, match=r"did not start within 1\.5 s"),
    ):
        server.wait_ready()
    assert not server.alive()


# -- whole episodes with a scripted bridge -----------------------------------------------------
def _mine_stone(bridge: FakeBridge, args: dict[str, Any]) -> dict[str, Any]:
    gain(bridge, "cobblestone")
    gain(bridge, "diamond")  # in the inventory, but no advancement was granted for it
    return result(
        "mine",
        args,
        produced={"cobblestone": 1, "diamond": 1},
        details={
            "blocks": ["stone"],
            "drops": {"cobblestone": 1, "diamond": 1},
            "path_drops": {},
            "requested": 1,
        },
    )


@pytest.fixture
def fake_bridge(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[FakeBridge]]:
    """Bridges made in this process; each one (in a worker process too) also adds a line to
    the file named by $FAKE_BRIDGE_LOG."""
    made: list[FakeBridge] = []
    log_path = tmp_path_factory.mktemp("bridges") / "bridges.log"
    monkeypatch.setenv("FAKE_BRIDGE_LOG", str(log_path))

    def factory(*_a: Any, **_k: Any) -> FakeBridge:
        bridge = FakeBridge(acts={"mine": _mine_stone})
        made.append(bridge)
        with log_path.open("a") as log:
            log.write("bridge\n")
        return bridge

    monkeypatch.setattr(backend_mod, "BridgeClient", factory)
    monkeypatch.setattr(
        "mirrorcraft.backends.mineflayer.bridge.bridge_problem", lambda *a, **k: None
    )
    yield made


def test_an_episode_reads_milestones_from_the_server_only(
    prepared: tuple[Path, SavesManifest], tmp_path: Path, fake_bridge: list[FakeBridge]
) -> None:
    saves, _ = prepared
    options = MineflayerOptions(saves=saves, command=FAKE, work_dir=tmp_path)
    task = get_task("diamond")
    episode = start_episode(
        options, world="plains-1", rules="M02", task=task, vanilla=vanilla_rules(), seed=3
    )
    try:
        bridge = fake_bridge[0]
        assert bridge.configured is not None and "mine" in bridge.configured["skills"]
        out = episode.step({"skill": "mine", "args": {"block": "stone"}})
        assert out.result.ok and out.result.produced == {"cobblestone": 1, "diamond": 1}
        assert (
            out.score == 0 and out.observation.inventory["diamond"] == 1
        )  # inventory is not a milestone
        rcon = episode.evaluator.source.rcon  # type: ignore[attr-defined]
        rcon.command("advancement grant agent only minecraft:story/mine_stone")
        out = episode.step(
            {"skill": "mine", "args": {"block": "stone", "count": 9}}
        )  # invalid: no bridge call
        assert out.result.reason == "invalid_args" and "between 1 and 4" in out.result.message
        assert out.score == 10 and out.new_milestones == ("story/mine_stone",)
        assert episode.evaluator.milestones.milestone_steps() == {"story/mine_stone": 2}
        assert out.observation.progress.completed_advancements == ("story/mine_stone",)
        assert [c for c, _ in bridge.calls].count("act") == 1
        assert episode.world_fingerprint
    finally:
        episode.close()
    assert bridge.closed
    assert list(tmp_path.iterdir()) == []  # the fresh copy is gone


def test_a_bridge_that_loses_the_server_is_a_fault(
    prepared: tuple[Path, SavesManifest], tmp_path: Path, fake_bridge: list[FakeBridge]
) -> None:
    saves, _ = prepared
    options = MineflayerOptions(saves=saves, command=FAKE, work_dir=tmp_path)
    episode = start_diamond(options)
    try:
        fake_bridge[0].broken_after = len(fake_bridge[0].calls)
        with pytest.raises(InfrastructureFault, match="disconnected"):
            episode.step({"skill": "mine", "args": {"block": "stone"}})
    finally:
        episode.close()


def test_run_problems_name_what_is_missing(
    prepared: tuple[Path, SavesManifest], tmp_path: Path
) -> None:
    saves, _ = prepared
    missing = run_problems(
        MineflayerOptions(saves=tmp_path / "none", node="no-such-node"), ["plains-1"], ["vanilla"]
    )
    assert any("'no-such-node'" in p for p in missing) and any(
        "saves.json does not exist" in p for p in missing
    )
    problems = run_problems(
        MineflayerOptions(saves=saves, command=FAKE), ["plains-1", "taiga-1"], ["vanilla", "M01"]
    )
    assert any("no prepared save for taiga-1" in p for p in problems)
    assert not any("rule set M01" in p for p in problems)  # prepared in the server form
    # A save prepared with the extension form (before the server form) is still refused.
    old = tmp_path / "old_saves"
    old.mkdir()
    doc = json.loads((saves / "saves.json").read_text())
    doc["saves"]["plains-1@M01"]["warnings"] = ["suite M01: a MirrorCraft extension"]
    (old / "saves.json").write_text(json.dumps(doc))
    refused = run_problems(MineflayerOptions(saves=old, command=FAKE), ["plains-1"], ["M01"])
    assert any("rule set M01" in p and "cannot load" in p for p in refused)


def test_run_with_the_mineflayer_backend_end_to_end(
    prepared: tuple[Path, SavesManifest],
    tmp_path: Path,
    fake_bridge: list[FakeBridge],
    capsys: pytest.CaptureFixture[str],
) -> None:
    saves, _ = prepared
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: mf\nworlds: [plains-1]\nrules: [vanilla, M02]\ntasks: [diamond]\nagents: [random]\nbudget: 2\n"
    )
    out = tmp_path / "run"
    code = main(
        [
            "run",
            str(spec),
            "--backend",
            "mineflayer",
            "--saves",
            str(saves),
            "--server-command",
            FAKE,
            "--out",
            str(out),
            "--no-report",
        ]
    )
    assert code == 0, capsys.readouterr().err
    import sqlite3

    with sqlite3.connect(out / "results.sqlite") as db:
        rows = db.execute("select count(*) from episodes").fetchone()
    # The episodes ran in a worker process (one bridge each).
    made = Path(os.environ["FAKE_BRIDGE_LOG"]).read_text().count("bridge")
    assert rows[0] == 2 and made == 2


def test_a_death_is_recorded_once_scored_and_never_rerun(
    prepared: tuple[Path, SavesManifest],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The player dies during the first call of every episode: one record each, termination
    death, no fault, no second attempt (one bridge per episode). Episodes run in worker
    processes, so each bridge made is counted as a line in a file."""
    log = tmp_path / "bridges.log"

    def factory(*_a: Any, **_k: Any) -> FakeBridge:
        bridge = FakeBridge(acts={"mine": _mine_stone})
        bridge.die_at_act = 1
        with log.open("a") as f:
            f.write("bridge\n")
        return bridge

    def made() -> int:
        return log.read_text().count("bridge") if log.exists() else 0

    monkeypatch.setattr(backend_mod, "BridgeClient", factory)
    monkeypatch.setattr(
        "mirrorcraft.backends.mineflayer.bridge.bridge_problem", lambda *a, **k: None
    )
    saves, _ = prepared
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: mf\nworlds: [plains-1]\nrules: [vanilla, M02]\ntasks: [diamond]\nagents: [random]\nbudget: 5\n"
    )
    out = tmp_path / "run"
    args = ["run", str(spec), "--backend", "mineflayer", "--saves", str(saves)]
    args += ["--server-command", FAKE, "--out", str(out), "--no-report"]
    assert main(args) == 0, capsys.readouterr().err
    import sqlite3

    with sqlite3.connect(out / "results.sqlite") as db:
        records = [json.loads(r[0]) for r in db.execute("select record from episodes")]
        faults = db.execute("select count(*) from faults").fetchone()[0]
    assert [r["termination"] for r in records] == ["death", "death"]
    assert all(r["actions_used"] == 1 and r["score"] == 0 for r in records)
    assert faults == 0 and made() == 2
    assert main(args) == 0  # resuming reruns nothing: a death is a finished episode
    assert made() == 2


def test_run_refuses_without_saves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: mf\nworlds: [plains-1]\nrules: [vanilla]\ntasks: [diamond]\nagents: [random]\nbudget: 2\n"
    )
    code = main(
        [
            "run",
            str(spec),
            "--backend",
            "mineflayer",
            "--saves",
            str(tmp_path / "nothing"),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert "cannot run on real servers" in capsys.readouterr().err
