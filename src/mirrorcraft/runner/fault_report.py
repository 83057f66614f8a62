"""What a run shows about its infrastructure faults: by kind as they happen, and a closing table.

A fault is never scored (DESIGN.md's taxonomy), so the user must see why episodes did
not finish without opening the database: the closing table groups this run's faults by
kind and by what failed (a model endpoint, the game server, a worker process), with
how many episodes each hit, the last message (credentials already redacted when it was
stored) and what to do about it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mirrorcraft.faults import Fault

ADVICE = {
    "connection": "check that the endpoint or server is reachable, then rerun the same command",
    "timeout": "it answered too slowly: rerun, or raise client.timeout_s or "
    "execution.episode_timeout_s in the spec",
    "server": "it answered with an error: rerun the same command; if it persists, check its logs",
    "config": "fix the model name, base URL, key or context window (or the agent, when the "
    "message names one), then rerun the same command",
    "worker": "a worker process died (out of memory?): rerun, or use fewer --workers",
}
"""What to do about each fault kind, in the user's words."""

MESSAGE_WIDTH = 100


def component_of(fault: Fault, endpoint: str | None, backend: str) -> str:
    """What failed: the model endpoint for endpoint faults, else the worker or the backend.
    An episode past its wall-clock limit may have been held up by its agent (a slow plugin)
    as much as by the backend: the component says both."""
    if fault.endpoint and endpoint:
        return endpoint
    if fault.kind == "worker":
        return "worker process"
    game = "Minecraft server (mineflayer)" if backend == "mineflayer" else "embedded simulator"
    return f"agent or {game}" if fault.kind == "timeout" else game


def kinds_note(kinds: Mapping[str, int]) -> str:
    """``2 connection, 1 timeout`` (most frequent first), for the progress line."""
    ordered = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{n} {kind}" for kind, n in ordered)


@dataclass
class FaultGroup:
    kind: str
    component: str
    count: int = 0
    episodes: set[str] = field(default_factory=set)
    last_message: str = ""


def group_faults(rows: Iterable[tuple[str, str, str, str]]) -> list[FaultGroup]:
    """(kind, component, message, episode id) rows -> one group per kind and component."""
    groups: dict[tuple[str, str], FaultGroup] = {}
    for kind, component, message, episode in rows:
        group = groups.setdefault((kind, component), FaultGroup(kind, component or "unknown"))
        group.count += 1
        group.episodes.add(episode)
        group.last_message = message
    return sorted(groups.values(), key=lambda g: (-g.count, g.kind, g.component))


def _clip(text: str, width: int = MESSAGE_WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def fault_table(groups: Sequence[FaultGroup]) -> str:
    """The closing table: kind, count, episodes, component, last message; then what to do."""
    if not groups:
        return ""
    head = ("Kind", "Faults", "Episodes", "Failed component")
    rows = [(g.kind, str(g.count), str(len(g.episodes)), g.component) for g in groups]
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head))]
    total = sum(g.count for g in groups)
    lines = [f"Infrastructure faults in this run ({total}; never scored)"]
    lines.append(
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + "  Last message"
    )
    lines.append("  ".join("-" * w for w in widths) + "  " + "-" * 12)
    for g, row in zip(groups, rows, strict=True):
        cells = "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
        lines.append(f"{cells}  {_clip(g.last_message)}")
    kinds = Counter(g.kind for g in groups)
    lines.append("What to do:")
    lines += [f"  {kind}: {ADVICE.get(kind, 'rerun the same command')}" for kind in kinds]
    return "\n".join(lines)
