"""Optimus-1's hybrid memory as text: a knowledge graph of item dependencies and an experience pool.

**Knowledge graph** (Optimus-1's hierarchical directed knowledge graph). An edge
says how an item was obtained, learned only from action results the agent saw:
``craft`` (the grid's consumed items and counts, the station), ``smelt`` (the
input and the station), ``mine`` (the block, and the tools owned at the time) or
``kill`` (the creature). Edges are stored per (item, how, what from), so a new
way of obtaining an item adds an edge and the same one only counts another
sighting. Depth ("level") of an item is 0 for anything mined or dropped and
1 + the deepest input otherwise: the hierarchy the planner reads.

**Experience pool** (Optimus-1's abstracted multimodal experience pool). After
every episode, success or not, one summary: the task, the outcome, the
subgoals completed, failure types with counts, the last failure and the actions
used. Retrieval prefers the same task, then overlapping routes, and shows a
success and a failure when both exist, within the shared top-K and token budget.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from mirrorcraft.agents.baselines.memory import RecordMemory
from mirrorcraft.agents.llm.worldview import norm
from mirrorcraft.body.results import ActionResult

MAX_DEPTH = 16


def edge_key(output: str, via: str, source: str) -> str:
    return f"edge:{output}:{via}:{source}"[:200]


def learn_edges(
    action: Mapping[str, Any],
    result: ActionResult,
    inventory: Mapping[str, int],
    tools: Iterable[str],
) -> list[tuple[str, dict[str, Any]]]:
    """Edges an action result shows (empty when it failed or produced nothing)."""
    if not result.ok:
        return []
    produced = {k: v for k, v in result.produced.items() if v > 0}
    if not produced:
        return []
    skill = str(action.get("skill", ""))
    args = action.get("args", {}) or {}
    consumed = {k: v for k, v in result.consumed.items() if v > 0}
    out: list[tuple[str, dict[str, Any]]] = []
    for item, count in sorted(produced.items()):
        if skill == "craft_grid":
            station = str(args.get("station", "inventory"))
            inputs = dict(sorted(consumed.items()))
            source = ",".join(f"{k}x{v}" for k, v in inputs.items()) + f"@{station}"
            edge = {"via": "craft", "inputs": inputs, "station": station}
        elif skill == "smelt":
            station = str(args.get("station", "furnace"))
            raw = norm(str(args.get("input", "")))
            inputs = {raw: consumed.get(raw, 1)} if raw else {}
            source = f"{raw}@{station}"
            edge = {"via": "smelt", "inputs": inputs, "station": station}
        elif skill == "mine":
            block = str(result.details.get("block") or norm(str(args.get("block", ""))))
            owned = sorted(t for t in tools if inventory.get(t, 0) > 0)
            source = block
            edge = {"via": "mine", "block": block, "tools_owned": owned}
        elif skill == "attack":
            mob = norm(str(args.get("target", "")))
            source = mob
            edge = {"via": "kill", "creature": mob}
        else:
            continue
        out.append(
            (
                edge_key(item, str(edge["via"]), source),
                {"kind": "edge", "output": item, "yield": count, **edge},
            )
        )
    return out


def add_edges(memory: RecordMemory, edges: Iterable[tuple[str, dict[str, Any]]]) -> int:
    """Write edges; returns how many were new (a known edge only counts another sighting)."""
    new = 0
    for key, edge in edges:
        known = memory.records.get(key)
        if known is None:
            memory.put(key, {**edge, "seen": 1})
            new += 1
        else:
            memory.put(key, {**known, "seen": int(known.get("seen", 1)) + 1})
    return new


def edges_by_output(memory: RecordMemory) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for _key, edge in memory.of_kind("edge"):
        out.setdefault(str(edge["output"]), []).append(edge)
    for edges in out.values():
        edges.sort(key=lambda e: (-int(e.get("seen", 1)), str(e.get("via"))))
    return out


def levels(graph: Mapping[str, list[dict[str, Any]]]) -> dict[str, int]:
    """Depth of every known item: 0 when mined or dropped, else 1 + its deepest input."""
    memo: dict[str, int] = {}

    def depth(item: str, trail: frozenset[str]) -> int:
        if item in memo:
            return memo[item]
        best: int | None = None
        for e in graph.get(item, []):
            if e["via"] in ("mine", "kill"):
                d = 0
            else:
                ins = [i for i in e.get("inputs", {}) if i not in trail]
                if len(trail) > MAX_DEPTH:
                    d = 0
                else:
                    d = 1 + max((depth(i, trail | {item}) for i in ins), default=0)
            best = d if best is None else min(best, d)
        memo[item] = 0 if best is None else best
        return memo[item]

    for item in graph:
        depth(item, frozenset())
    return memo


def goal_subgraph(
    memory: RecordMemory, goals: Iterable[str], limit: int, route: Iterable[str] = ()
) -> list[tuple[str, int, list[dict[str, Any]]]]:
    """(item, level, edges) reachable backwards from the goal items, nearest the goal first.

    Known items of the task's expected ``route`` follow, deepest first, so a goal the graph
    has never seen made still shows what is known about the way to it.
    """
    graph = edges_by_output(memory)
    depth = levels(graph)
    seen: set[str] = set()
    order: list[str] = []
    known_route = sorted((i for i in route if i in graph), key=lambda i: (-depth.get(i, 0), i))
    queue = deque([*(norm(g) for g in goals), *known_route])
    while queue and len(order) < limit:
        item = queue.popleft()
        if item in seen:
            continue
        seen.add(item)
        order.append(item)
        for e in graph.get(item, [])[:2]:
            queue.extend(i for i in e.get("inputs", {}) if i not in seen)
            if e.get("station") not in (None, "inventory") and e["station"] not in seen:
                queue.append(str(e["station"]))
    return [(item, depth.get(item, 0), graph.get(item, [])) for item in order]


def render_graph(nodes: list[tuple[str, int, list[dict[str, Any]]]]) -> str:
    lines = []
    for item, level, edges in nodes:
        if not edges:
            lines.append(f"- {item}: no known source yet")
            continue
        ways = []
        for e in edges[:2]:
            if e["via"] == "craft":
                ins = ", ".join(f"{k} x{v}" for k, v in e["inputs"].items())
                ways.append(f"craft from {ins} at {e['station']} (gives {e['yield']})")
            elif e["via"] == "smelt":
                ins = ", ".join(e["inputs"])
                ways.append(f"smelt {ins} in {e['station']} (gives {e['yield']})")
            elif e["via"] == "mine":
                tools = ", ".join(e.get("tools_owned", [])) or "no tools"
                ways.append(f"mine {e['block']} (owning {tools})")
            else:
                ways.append(f"defeat {e['creature']}")
        lines.append(f"- {item} (level {level}): " + " | ".join(ways))
    return "\n".join(lines) or "empty (nothing observed yet)"
