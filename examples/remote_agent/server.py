#!/usr/bin/env python3
"""A remote MirrorCraft agent in plain Python (standard library only): copy it and change
``choose``.

It speaks the remote agent protocol (docs/remote_agent.md): the runner POSTs JSON to
/reset when an episode starts, to /act for every action, and to /close at the end; /act is
answered with one action. The policy is the greedy one of examples/my_agent, read from the
observation JSON.

    python3 examples/remote_agent/server.py --port 8765
    mirrorcraft run examples/remote_experiment.yaml          # its agent is http://127.0.0.1:8765

or in one line that starts the server, runs the command after ``--`` and stops the server
(``{url}`` in the command becomes the server's URL):

    python3 examples/remote_agent/server.py --port 8765 -- mirrorcraft run examples/remote_experiment.yaml
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROTOCOL = "mirrorcraft-remote-agent/1"
EXPLORE = ["iron_ore", "coal_ore"]


def skill(name: str, **args: Any) -> dict[str, Any]:
    return {"skill": name, "args": args}


def count(inventory: dict[str, int], suffix: str) -> int:
    return sum(n for item, n in inventory.items() if item.endswith(suffix))


def choose(obs: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """The greedy policy: the first rule that applies gives the action."""
    inv = obs["inventory"]
    near = {b["block"] for b in obs["nearby_blocks"]}
    table = any(f["block"] == "crafting_table" for f in obs["facilities"])
    log = next((i for i in sorted(inv) if i.endswith("_log")), None)
    plank = next((i for i in sorted(inv) if i.endswith("_planks")), None)
    sticks, stone = inv.get("stick", 0), inv.get("cobblestone", 0)
    pickaxe = count(inv, "_pickaxe") > 0

    def row3(m: str) -> list[list[str | None]]:
        return [[m, m, m], [None, "stick", None], [None, "stick", None]]

    if obs["nearby_drops"]:
        return skill("collect", item=obs["nearby_drops"][0]["item"])
    if not pickaxe and count(inv, "_log") + count(inv, "_planks") // 4 < 3 and not table:
        if any(b.endswith("_log") for b in near):
            return skill("mine", block="log")
        return skill("explore", target="log")
    if log and count(inv, "_planks") < 4:
        return skill("craft_grid", station="inventory", grid=[[log]])
    if not table and "crafting_table" not in inv and plank and inv[plank] >= 4:
        return skill("craft_grid", station="inventory", grid=[[plank, plank], [plank, plank]])
    if not table and "crafting_table" in inv:
        return skill("place", block="crafting_table")
    if sticks < 2 and plank and inv[plank] >= 2:
        return skill("craft_grid", station="inventory", grid=[[plank], [plank]])
    if not pickaxe and table and plank and inv[plank] >= 3 and sticks >= 2:
        return skill("craft_grid", station="crafting_table", grid=row3(plank))
    if pickaxe and "stone_pickaxe" not in inv and stone >= 3 and sticks >= 2 and table:
        return skill("craft_grid", station="crafting_table", grid=row3("cobblestone"))
    if pickaxe and stone < 3:
        return skill("mine", block="stone", count=3)
    target = rng.choice(EXPLORE)
    return skill("mine", block=target) if target in near else skill("explore", target=target)


class Agent:
    """Per-episode state, keyed by the episode token the runner sends."""

    def __init__(self) -> None:
        self.episodes: dict[str, random.Random] = {}
        self.lock = threading.Lock()

    def reset(self, msg: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.episodes[msg["episode"]] = random.Random(msg["seed"])
        return {"protocol": PROTOCOL, "agent": {"name": "example-python", "version": "1"}}

    def act(self, msg: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            rng = self.episodes.setdefault(msg["episode"], random.Random(0))
        action = choose(msg["observation"], rng)
        return {"action": action, "thought": f"greedy: {action['skill']}"}

    def close(self, msg: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.episodes.pop(msg["episode"], None)
        return {}


def handler_for(agent: Agent) -> type[BaseHTTPRequestHandler]:
    routes = {"/reset": agent.reset, "/act": agent.act, "/close": agent.close}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep connections open between calls
        disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms stalls)

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            route = routes.get(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if route is None:
                return self.answer(404, {"error": f"no route {self.path}"})
            try:
                reply = route(json.loads(body))
            except (ValueError, KeyError, TypeError) as exc:
                return self.answer(400, {"error": f"bad request: {exc}"})
            self.answer(200, reply)

        def answer(self, status: int, doc: dict[str, Any]) -> None:
            data = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


def main() -> int:
    parser = argparse.ArgumentParser(description="An example remote MirrorCraft agent.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0: any free port")
    parser.add_argument(
        "command", nargs=argparse.REMAINDER, help="after --: run this, then stop the server"
    )
    args = parser.parse_args()
    try:
        server = ThreadingHTTPServer((args.host, args.port), handler_for(Agent()))
    except OSError as exc:
        print(
            f"server.py: cannot listen on {args.host}:{args.port}: {exc.strerror}"
            " (is another server there? pass another --port, or 0 for any free one)",
            file=sys.stderr,
        )
        return 2
    server.daemon_threads = True
    url = f"http://{args.host}:{server.server_address[1]}"
    command = [a.replace("{url}", url) for a in args.command]
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print(f"remote agent listening on {url}", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        return 0
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        return subprocess.run(command).returncode
    finally:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
