"""A scripted stand-in for the Node bridge (tests and dry runs without Node or a game server).

``FakeBridge`` answers the protocol's methods the way the real bridge does, from a
small scripted state: an inventory, a position, nearby blocks, and per-skill result
functions. It has the ``BridgeClient`` interface that ``MineflayerEpisode`` uses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mirrorcraft.backends.mineflayer.bridge import BridgeError

ActHandler = Callable[["FakeBridge", dict[str, Any]], dict[str, Any]]


def result(
    skill: str,
    args: Mapping[str, Any],
    ok: bool = True,
    reason: str = "",
    message: str = "",
    **fields: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "skill": skill,
        "args": dict(args),
        "ok": ok,
        "reason": reason,
        "message": message or (f"{skill} done" if ok else f"{skill} failed"),
        "produced": {},
        "consumed": {},
        "inventory_delta": {},
        "details": {},
    }
    out.update(fields)
    return out


class FakeBridge:
    def __init__(
        self,
        *,
        level: int = 100,
        acts: Mapping[str, ActHandler] | None = None,
        version: str = "1.19.2",
    ):
        self.inventory: dict[str, int] = {}
        self.position = [0, 70, 0]
        self.level = level
        self.blocks: list[dict[str, Any]] = [
            {"block": "grass_block", "d2": 1},
            {"block": "oak_log", "d2": 25},
        ]
        self.acts = dict(acts or {})
        self.version = version
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.lost: str | None = None
        self.closed = False
        self.configured: dict[str, Any] | None = None
        self.broken_after: int | None = None
        self.dead: str | None = None
        """Set by ``die``: every later act answers ``died`` and observations say not alive."""
        self.die_at_act: int | None = None
        """The player dies during this act call (1-based), as a /kill mid-call would."""
        self.acts_seen = 0

    def die(self, why: str = "the player died") -> None:
        """The player dies (as the bridge reports a death event)."""
        self.dead = why

    def call(
        self, method: str, params: Mapping[str, Any] | None = None, timeout_s: float = 60.0
    ) -> Any:
        params = dict(params or {})
        self.calls.append((method, params))
        if self.broken_after is not None and len(self.calls) > self.broken_after:
            self.lost = "the bot lost the server: connection ended (socketClosed)"
            raise BridgeError(
                f"bridge {method!r} failed (disconnected): {self.lost}", "disconnected"
            )
        if method == "hello":
            return {"protocol": 1, "bridge": "fake"}
        if method == "configure":
            self.configured = params
            return {"skills": len(params.get("skills", {}))}
        if method == "connect":
            return {
                "version": self.version,
                "username": params.get("username"),
                "position": self.position,
                "game_mode": "survival",
            }
        if method == "observe":
            return self.observation()
        if method == "act":
            self.acts_seen += 1
            if self.acts_seen == self.die_at_act:
                self.die()
        if method == "act" and self.dead is not None:
            return result(
                params["skill"], params.get("args", {}), False, "died", f"{self.dead}; over"
            )
        if method == "act":
            handler = self.acts.get(params["skill"])
            if handler is None:
                return result(
                    params["skill"],
                    params.get("args", {}),
                    False,
                    "no_target_nearby",
                    "nothing here",
                )
            before = dict(self.inventory)
            out = handler(self, params.get("args", {}))
            out["inventory_delta"] = {
                k: self.inventory.get(k, 0) - before.get(k, 0)
                for k in sorted(set(before) | set(self.inventory))
                if self.inventory.get(k, 0) != before.get(k, 0)
            }
            return out
        raise BridgeError(f"bridge {method!r} failed (unknown_method)", "unknown_method")

    def observation(self) -> dict[str, Any]:
        return {
            "inventory": dict(sorted(self.inventory.items())),
            "enchanted_items": [],
            "equipped": {"hand": None, "head": None, "chest": None, "legs": None, "feet": None},
            "position": list(self.position),
            "dimension": "overworld",
            "health": 0 if self.dead else 20,
            "food": 20,
            "alive": self.dead is None,
            "experience_level": self.level,
            "blocks": list(self.blocks),
            "drops": [],
            "entities": [{"type": "cow", "d2": 40}],
        }

    def close(self) -> None:
        self.closed = True

    def kill(self) -> None:
        self.closed = True


def gain(bridge: FakeBridge, item: str, count: int = 1) -> None:
    bridge.inventory[item] = bridge.inventory.get(item, 0) + count
