"""The Node bridge: its own unit tests, bad input, and a live bot on a flying-squid 1.19 server.

flying-squid (npm) supports connecting, seeing, moving, digging and picking up, so the
same action script runs through the embedded backend and the bridge and the results
and observations must have the same schema (keys, types, reason codes). Crafting
windows, smelting, mob loot and advancements are not there: those paths are tested
against scripted windows (bridge/test/*.test.js) and the fake server. Every test here
is skipped, with the reason, when Node or ``bridge/node_modules`` is missing
(install: ``npm ci --prefix bridge``).
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.backends.mineflayer.advancements import RconAdvancements
from mirrorcraft.backends.mineflayer.bridge import (
    BridgeClient,
    BridgeError,
    bridge_problem,
    find_bridge_dir,
)
from mirrorcraft.backends.mineflayer.convert import bridge_config
from mirrorcraft.backends.mineflayer.episode import MineflayerEpisode
from mirrorcraft.backends.mineflayer.rcon import RconClient
from mirrorcraft.backends.mineflayer.rcon_server import RconServer
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.config import default_body_config
from mirrorcraft.body.results import REASONS
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.faults import InfrastructureFault
from tests.simtools import episode as sim_episode

PROBLEM = bridge_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"bridge not runnable: {PROBLEM}")


def _squid_problem() -> str | None:
    if PROBLEM is not None:
        return PROBLEM
    if not (find_bridge_dir() / "node_modules" / "flying-squid" / "package.json").exists():
        return "flying-squid (a devDependency) is not installed: run npm ci --prefix bridge"
    return None


needs_squid = pytest.mark.skipif(
    _squid_problem() is not None, reason=f"no test server: {_squid_problem()}"
)

SCRIPT: list[dict[str, Any]] = [
    {"skill": "mine", "args": {"block": "dirt", "count": 1}},
    {"skill": "mine", "args": {"block": "log"}},
    {"skill": "mine", "args": {"block": "stone"}},
    {"skill": "mine", "args": {"block": "obsidian"}},
    {"skill": "explore", "args": {"target": "coal_ore"}},
    {"skill": "prepare_access", "args": {"target": "dirt"}},
    {"skill": "collect", "args": {"item": "diamond"}},
    {"skill": "place", "args": {"block": "dirt"}},
    {"skill": "equip", "args": {"item": "dirt"}},
    {"skill": "equip", "args": {"item": "iron_pickaxe"}},
    {"skill": "explore", "args": {"target": "sunshine"}},
    {"skill": "mine", "args": {"block": "stone", "count": 7}},
    {"skill": "wait", "args": {"ticks": 2}},
]


# The result details of a successful call, per skill, as the embedded body writes them.
_OK_DETAILS = {
    "mine": [{"blocks", "drops", "path_drops", "requested"}],
    "prepare_access": [{"distance"}, {"cleared"}],
    "explore": [{"found", "distance", "regions_visited"}],
    "craft_grid": [{"result"}],
    "smelt": [{"processed", "fuel"}],
    "enchant": [{"enchantments", "levels_spent"}],
    "place": [{"position"}],
    "equip": [{"slot"}],
    "collect": [set()],
    "ascend": [{"climbed"}],
    "attack": [{"killed"}],
    "trade": [set()],
    "wait": [set()],
}
# Every call also says how many game ticks it took (the server's, or the simulator's clock).
OK_DETAILS = {k: [keys | {"ticks"} for keys in v] for k, v in _OK_DETAILS.items()}


class Squid:
    """The controllable flying-squid server of ``bridge/test/squid_server.js``."""

    def __init__(self) -> None:
        folder = find_bridge_dir()
        self.proc = subprocess.Popen(
            ["node", "test/squid_server.js", "0"],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        self.port = 0
        self.answers: queue.Queue[str] = queue.Queue()
        deadline = time.monotonic() + 60
        for raw in self.proc.stdout:
            m = re.search(rb"READY (\d+)", raw)
            if m:
                self.port = int(m.group(1))
                break
            if time.monotonic() > deadline:
                break
        if not self.port:
            self.stop()
            pytest.fail("flying-squid did not start")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.answers.put(raw.decode(errors="replace").strip())

    def command(self, line: str) -> dict[str, Any]:
        """Send a control line (see squid_server.js) and return its answer."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        answer = self.answers.get(timeout=30)
        assert answer.startswith("OK "), f"{line!r}: {answer}"
        out: dict[str, Any] = json.loads(answer[3:])
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def squid() -> Iterator[Squid]:
    server = Squid()
    yield server
    server.stop()


def connected_bridge(port: int, limits: dict[str, float] | None = None) -> BridgeClient:
    bridge = BridgeClient()
    bridge.call("hello", {"protocol": 1})
    bridge.call("configure", bridge_config(default_body_config(), vanilla_rules(), limits))
    info = bridge.call("connect", {"port": port, "username": "agent"}, timeout_s=90)
    assert info["version"] == "1.19.2" and info["game_mode"] == "survival"
    return bridge


MAPS = frozenset(
    {
        "produced",
        "consumed",
        "inventory_delta",
        "drops",
        "path_drops",
        "result",
        "fuel",
        "inventory",
        "enchantments",
        "fuel_used",
    }
)
"""Fields that map item ids to numbers: their keys are contents, not schema."""


def shape(value: Any, key: str = "") -> Any:
    """The schema of a JSON value: keys and types, not contents (lists by their first element)."""
    numbers = isinstance(value, dict) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value.values()
    )
    if key in MAPS and numbers:
        return "map<id,number>"
    if isinstance(value, dict):
        return {k: shape(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def same_schema(a: Any, b: Any, where: str = "", key: str = "") -> list[str]:
    sa, sb = shape(a, key), shape(b, key)
    if isinstance(sa, dict) and isinstance(sb, dict):
        if set(sa) != set(sb):
            return [f"{where}: keys {sorted(sa)} != {sorted(sb)}"]
        return [p for k in sa for p in same_schema(a[k], b[k], f"{where}.{k}", k)]
    if isinstance(sa, list) and isinstance(sb, list):
        if sa and sb:
            return same_schema(a[0], b[0], f"{where}[0]")
        return []
    if sa != sb and "NoneType" not in (sa, sb):
        return [f"{where}: {sa} != {sb}"]
    return []


def test_the_bridge_unit_tests_pass() -> None:
    folder = find_bridge_dir()
    script = json.loads((folder / "package.json").read_text())["scripts"]["test"]
    tests = [word for word in script.split() if word.endswith(".test.js")]
    assert len(tests) >= 4
    out = subprocess.run(
        ["node", "--test", *tests], cwd=folder, capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]


def test_bad_input_gets_structured_errors_and_the_bridge_keeps_serving() -> None:
    with BridgeClient() as bridge:
        assert bridge.info["mineflayer"] == "4.25.0"
        bridge.send_raw("{this is not json")
        bridge.send_raw('{"id": "seven", "method": "ping"}')
        bridge.send_raw('{"id": 900, "method": "act", "params": "nope"}')
        assert bridge.call("ping") == {"pong": True}
        codes = [m["error"]["code"] for m in bridge.orphans]
        assert codes == ["bad_json", "bad_request", "invalid_params"]
        with pytest.raises(BridgeError) as err:
            bridge.call("observe")
        assert err.value.code == "not_connected" and isinstance(err.value, InfrastructureFault)
        with pytest.raises(BridgeError, match="unknown method"):
            bridge.call("fly")
        with pytest.raises(BridgeError, match="protocol 99"):
            bridge.call("hello", {"protocol": 99})
        bridge.call("configure", bridge_config(default_body_config(), vanilla_rules()))
        with pytest.raises(BridgeError) as err:
            bridge.call("connect", {"port": 1, "username": "agent"}, timeout_s=30)
        assert err.value.code == "disconnected"
        assert bridge.call("ping") == {"pong": True}


@needs_squid
def test_the_same_script_gives_the_same_schema_on_both_backends(squid: Squid) -> None:
    rcon_server = RconServer("pw", lambda _cmd: "Test failed")
    bridge = connected_bridge(squid.port)
    try:
        source = RconAdvancements(RconClient("127.0.0.1", rcon_server.port, "pw"), "agent")
        task = get_task("diamond").with_budget(len(SCRIPT) + 5)
        real = MineflayerEpisode(
            bridge, source, task, vanilla_rules(), biome="plains", mirror=False
        )
        sim = sim_episode("plains-1", task="diamond", budget=len(SCRIPT) + 5)
        first_real, first_sim = real.observe(), sim.observe()
        assert same_schema(first_real.to_json(), first_sim.to_json()) == []
        assert {n.id for n in first_real.nearby_blocks} >= {"dirt", "grass_block"}
        seen_reasons: set[str] = set()
        picked = 0
        for action in SCRIPT:
            a, b = real.step(action), sim.step(action)
            if action is SCRIPT[0]:
                picked = a.observation.inventory.get("dirt", 0)
            ra, rb = a.result.to_json(), b.result.to_json()
            assert set(ra) == set(rb), action
            assert ra["skill"] == rb["skill"] and ra["args"] == rb["args"], action
            assert a.result.reason in ("", *REASONS), action
            if a.result.ok:
                assert set(ra["details"]) in OK_DETAILS[ra["skill"]], (action, ra)
                assert isinstance(ra["details"]["ticks"], int), (action, ra)
                assert isinstance(rb["details"]["ticks"], int), (action, rb)
            if a.result.ok and b.result.ok and set(ra["details"]) == set(rb["details"]):
                assert same_schema(ra, rb) == [], (action, ra, rb)
            for field in ("produced", "consumed", "inventory_delta"):
                assert all(isinstance(v, int) for v in ra[field].values()), (action, ra)
            seen_reasons.add(a.result.reason)
            oa, ob = a.observation.to_json(), b.observation.to_json()
            assert (oa.pop("last_result") is None) == (
                ob.pop("last_result") is None
            )  # compared above
            assert same_schema(oa, ob) == [], action
        final = real.observe()
        # It dug dirt and picked it up (flying-squid sometimes counts a pickup twice), then
        # placed one (clearing a way may pick up more).
        assert picked >= 1 and final.inventory.get("dirt", 0) >= picked - 1
        assert {"needs_tool", "invalid_args", "not_searchable", "missing_item"} <= seen_reasons
        assert real.evaluator.score() == 0  # no advancement granted by the (fake) server
        assert rcon_server.commands and all(
            c.startswith("execute if entity @a[name=agent") for c in rcon_server.commands
        )
    finally:
        bridge.close()
        rcon_server.close()


@needs_squid
def test_a_server_dying_mid_call_is_an_infrastructure_fault(squid: Squid) -> None:
    bridge = connected_bridge(squid.port)
    try:
        episode = MineflayerEpisode(
            bridge,
            _NoAdvancements(),
            get_task("diamond"),
            vanilla_rules(),
            biome="plains",
            mirror=False,
        )
        killer = threading.Timer(1.5, squid.stop)
        killer.start()
        with pytest.raises(InfrastructureFault, match="lost"):
            episode.step({"skill": "wait", "args": {"ticks": 1200}})
        killer.join()
        with pytest.raises(BridgeError) as err:
            bridge.call("observe")
        assert err.value.code == "disconnected"
    finally:
        bridge.close()


@needs_squid
def test_a_kick_mid_call_is_an_infrastructure_fault_not_a_death(squid: Squid) -> None:
    bridge = connected_bridge(squid.port)
    try:
        episode = _episode(bridge)
        kicker = threading.Timer(1.5, lambda: squid.command("kick agent maintenance"))
        kicker.start()
        with pytest.raises(InfrastructureFault, match="kicked"):
            episode.step({"skill": "wait", "args": {"ticks": 1200}})
        kicker.join()
        assert bridge.died is None and bridge.lost and "maintenance" in bridge.lost
    finally:
        bridge.close()


@needs_squid
def test_a_dead_bridge_process_is_an_infrastructure_fault(squid: Squid) -> None:
    bridge = connected_bridge(squid.port)
    threading.Timer(1.0, bridge.proc.kill).start()
    with pytest.raises(BridgeError) as err:
        bridge.call("act", {"skill": "wait", "args": {"ticks": 1200}}, timeout_s=60)
    assert err.value.code == "exited"
    bridge.close()


class _NoAdvancements:
    def completed(self, advancements: Any) -> set[str]:
        return set()


def test_the_bridge_folder_is_found() -> None:
    assert (find_bridge_dir() / "package.json").exists()
    assert Path(find_bridge_dir(), "src", "main.js").exists()


# -- the controllable server: deaths, lag, refusals, a slow clock, edited tags ---------------------
def _episode(bridge: BridgeClient, task: str = "diamond") -> MineflayerEpisode:
    return MineflayerEpisode(
        bridge, _NoAdvancements(), get_task(task), vanilla_rules(), biome="plains", mirror=False
    )


class _Script:
    """An agent that plays a fixed list of actions, then stops."""

    name = "script"
    cross_episode_memory = False

    def __init__(self, actions: list[dict[str, Any]]):
        self.actions = list(actions)

    def start(self, ctx: Any) -> None:
        return None

    async def act(self, obs: Any) -> Any:
        from mirrorcraft.agents.base import Decision

        return Decision(self.actions.pop(0)) if self.actions else None

    def finish(self, obs: Any) -> None:
        return None


@needs_squid
def test_a_death_mid_call_ends_the_episode_as_death(squid: Squid) -> None:
    import asyncio

    from mirrorcraft.runner.episode import EpisodeSpec, run_episode
    from mirrorcraft.world.registry import load_world

    bridge = connected_bridge(squid.port)
    try:
        episode = _episode(bridge)
        spec = EpisodeSpec("d1", "x", "plains-1", "vanilla", episode.task, "s", "", "hidden", 0, 1)
        agent = _Script([{"skill": "wait", "args": {"ticks": 1200}}] * 3)
        killer = threading.Timer(2.0, lambda: squid.command("kill agent"))
        killer.start()
        record, steps = asyncio.run(
            run_episode(
                spec,
                agent,  # type: ignore[arg-type]
                load_world("plains-1"),
                vanilla_rules(),
                vanilla_rules(),
                backend_episode=episode,
            )
        )
        killer.join()
        # The 1200-tick wait (a minute) ended with the death, not at the act timeout.
        assert record.termination == "death" and len(steps) == 1 and record.actions_used == 1
        assert steps[0].result["reason"] == "died"
        assert bridge.died and bridge.lost is None
        after = episode.observe()  # still a well-formed observation, of a dead player
        assert not after.alive and after.health == 0
        assert len(agent.actions) == 2
        again = bridge.call("act", {"skill": "wait", "args": {"ticks": 5}})
        assert again["reason"] == "died"
    finally:
        bridge.close()


@needs_squid
def test_a_refused_dig_mines_nothing(squid: Squid) -> None:
    bridge = connected_bridge(squid.port)
    try:
        episode = _episode(bridge)
        squid.command("setblock 1 5 -1 dirt")
        episode.step({"skill": "wait", "args": {"ticks": 10}})  # the bot sees the new block
        assert ("dirt", 1.4) in [(b.id, b.distance) for b in episode.observe().nearby_blocks]
        squid.command("refuse_digs on")
        out = episode.step({"skill": "mine", "args": {"block": "dirt"}})
        assert out.result.reason == "no_effect" and "sent the block back" in out.result.message
        assert out.result.produced == {} and out.observation.inventory == {}
        assert squid.command("block 1 5 -1") == {"name": "dirt"}
        squid.command("refuse_digs off")
        out = episode.step({"skill": "mine", "args": {"block": "dirt"}})
        assert out.result.ok and out.result.details["blocks"] == ["dirt"]
        if not out.result.details["drops"].get("dirt", 0):
            # Under heavy load flying-squid can spawn the drop after the bridge's bounded wait;
            # the dig itself was confirmed, and the dirt still reaches the inventory.
            out = episode.step({"skill": "wait", "args": {"ticks": 40}})
            assert out.observation.inventory.get("dirt", 0) >= 1, out.result.to_json()
    finally:
        bridge.close()


@needs_squid
def test_a_lagged_dig_leaves_no_phantom_items(squid: Squid) -> None:
    # Short ceilings: a bounded wait gives up after 1.5 s of a silent server.
    limits = {"min_ceiling_ms": 1500, "slow_server_factor": 1.5}
    bridge = connected_bridge(squid.port, limits=limits)
    try:
        episode = _episode(bridge)
        squid.command("setblock 1 5 -1 dirt")
        episode.step({"skill": "wait", "args": {"ticks": 10}})  # the bot sees the new block
        squid.command("spike_after_dig 3000")
        out = episode.step({"skill": "mine", "args": {"block": "dirt"}})
        # The client saw its own prediction at once; the server's answer came 3 s late.
        assert out.result.reason == "no_effect" and "did not confirm" in out.result.message
        assert out.result.produced == {} and "blocks" not in out.result.details
        time.sleep(3.5)  # the spike passes: the late block update and the drop arrive
        assert squid.command("block 1 5 -1") == {"name": "air"}  # the server did break it, late
        out = episode.step({"skill": "mine", "args": {"block": "log"}})
        assert out.result.ok, out.result.message
        # The late dirt may have been picked up on the way (flying-squid picks up what the player
        # stands near): it is in the inventory, but no later action is credited with it.
        assert "dirt" not in out.result.produced, out.result.to_json()
        assert set(out.result.details["drops"]) == {"oak_log"}
    finally:
        bridge.close()


@needs_squid
def test_a_slow_server_stretches_waits_in_game_ticks(squid: Squid) -> None:
    squid.command("tps 10")  # half speed: a tick every 100 ms
    bridge = connected_bridge(squid.port)
    try:
        episode = _episode(bridge)
        episode.step({"skill": "wait", "args": {"ticks": 20}})  # the clock learns the pace
        before = squid.command("ticks")["ticks"]
        out = episode.step({"skill": "wait", "args": {"ticks": 30}})
        after = squid.command("ticks")["ticks"]
        assert out.result.ok
        # Counting the client's own 50 ms ticks would have ended after about 15 server ticks.
        assert after - before >= 30, (before, after)
    finally:
        bridge.close()


@needs_squid
def test_the_bridge_harvests_by_the_active_rules_tags(squid: Squid, tmp_path: Path) -> None:
    from mirrorcraft.rules.ruleset import RuleSet

    # A custom suite: stone needs a diamond pickaxe.
    pack = tmp_path / "needs_diamond"
    tags = pack / "data" / "minecraft" / "tags" / "blocks"
    tags.mkdir(parents=True)
    (pack / "pack.mcmeta").write_text('{"pack": {"pack_format": 10, "description": "t"}}')
    (tags / "needs_diamond_tool.json").write_text('{"values": ["minecraft:stone"]}')
    edited = RuleSet.load([pack], name="needs_diamond")
    assert not edited.can_harvest("stone", "wooden_pickaxe")
    results = {}
    for name, active in (("vanilla", vanilla_rules()), ("edited", edited)):
        bridge = BridgeClient()
        try:
            bridge.call("hello", {"protocol": 1})
            config = bridge_config(default_body_config(), vanilla_rules(), active=active)
            bridge.call("configure", config)
            user = f"agent{name[:3]}"
            bridge.call("connect", {"port": squid.port, "username": user}, timeout_s=90)
            squid.command(f"give {user} wooden_pickaxe 1")
            bridge.call("act", {"skill": "wait", "args": {"ticks": 5}}, timeout_s=60)
            results[name] = bridge.call(
                "act", {"skill": "mine", "args": {"block": "stone"}}, timeout_s=120
            )
        finally:
            bridge.close()
    assert results["vanilla"]["ok"], results["vanilla"]
    assert results["edited"]["reason"] == "needs_tool", results["edited"]
