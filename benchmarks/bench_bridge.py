"""Seconds per semantic action: the Mineflayer bridge against flying-squid, next to the embedded backend.

Run: .venv/bin/python benchmarks/bench_bridge.py [--rounds 3]
Needs Node 20 and the bridge's npm packages (npm ci --prefix bridge). The same action
script (dig, walk, look, place, equip, wait, and calls that fail fast) runs through both
backends; each step includes the observation after it. flying-squid digs in real time,
so the bridge figure is dominated by walking and digging, as on a real server; it is a
lower bound for a vanilla server, which also simulates mobs, fluids and lighting.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from typing import Any

from mirrorcraft.backends.mineflayer.bridge import BridgeClient, bridge_problem, find_bridge_dir
from mirrorcraft.backends.mineflayer.convert import bridge_config
from mirrorcraft.backends.mineflayer.episode import MineflayerEpisode
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.config import default_body_config
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.world.registry import load_world

SCRIPT: list[dict[str, Any]] = [
    {"skill": "mine", "args": {"block": "dirt", "count": 1}},
    {"skill": "mine", "args": {"block": "log", "count": 1}},
    {"skill": "explore", "args": {"target": "coal_ore"}},
    {"skill": "prepare_access", "args": {"target": "stone"}},
    {"skill": "place", "args": {"block": "dirt"}},
    {"skill": "equip", "args": {"item": "oak_log"}},
    {"skill": "mine", "args": {"block": "stone"}},
    {"skill": "collect", "args": {"item": "diamond"}},
    {"skill": "wait", "args": {"ticks": 20}},
]


class _NoAdvancements:
    def completed(self, advancements: Any) -> set[str]:
        return set()


def start_squid() -> tuple[subprocess.Popen[bytes], int]:
    proc = subprocess.Popen(
        ["node", "test/squid_server.js", "0"],
        cwd=find_bridge_dir(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    for raw in proc.stdout:
        m = re.search(rb"READY (\d+)", raw)
        if m:
            return proc, int(m.group(1))
    raise SystemExit("flying-squid did not start")


def bridge_round(port: int) -> tuple[list[tuple[str, float, str]], float]:
    started = time.perf_counter()
    bridge = BridgeClient()
    try:
        bridge.call("configure", bridge_config(default_body_config(), vanilla_rules()))
        bridge.call("connect", {"port": port, "username": "bench"}, timeout_s=90)
        setup = time.perf_counter() - started
        task = get_task("diamond").with_budget(100)
        ep = MineflayerEpisode(
            bridge, _NoAdvancements(), task, vanilla_rules(), biome="plains", mirror=False
        )
        out = []
        for action in SCRIPT:
            t = time.perf_counter()
            step = ep.step(action)
            out.append((action["skill"], time.perf_counter() - t, step.result.reason or "ok"))
        return out, setup
    finally:
        bridge.close()


def sim_round() -> list[tuple[str, float, str]]:
    task = get_task("diamond").with_budget(100)
    ep = SimEpisode(load_world("plains-1"), vanilla_rules(), vanilla_rules(), task, seed=0)
    out = []
    for action in SCRIPT:
        t = time.perf_counter()
        step = ep.step(action)
        out.append((action["skill"], time.perf_counter() - t, step.result.reason or "ok"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh bot (and server) per round")
    args = parser.parse_args()
    problem = bridge_problem()
    if problem:
        print(f"cannot run the bridge: {problem}")
        return 2
    sims = [sim_round() for _ in range(max(args.rounds, 1) * 10)]
    bridges: list[list[tuple[str, float, str]]] = []
    setups: list[float] = []
    for _ in range(max(args.rounds, 1)):
        proc, port = start_squid()
        try:
            steps, setup = bridge_round(port)
            bridges.append(steps)
            setups.append(setup)
        finally:
            proc.kill()
            proc.wait()
    print(
        f"{'action':<16}{'bridge s/action':>16}{'embedded s/action':>19}   outcome (bridge / embedded)"
    )
    for i, action in enumerate(SCRIPT):
        b = statistics.median(r[i][1] for r in bridges)
        s = statistics.median(r[i][1] for r in sims)
        print(f"{action['skill']:<16}{b:>16.3f}{s:>19.5f}   {bridges[-1][i][2]} / {sims[-1][i][2]}")
    b_all = statistics.mean(t for r in bridges for _, t, _ in r)
    s_all = statistics.mean(t for r in sims for _, t, _ in r)
    print(
        f"{'mean':<16}{b_all:>16.3f}{s_all:>19.5f}   ({len(SCRIPT)} actions x {len(bridges)} rounds vs x {len(sims)})"
    )
    print(
        f"bridge start + connect + spawn: {statistics.median(setups):.2f} s (median); ratio bridge/embedded: {b_all / s_all:,.0f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
