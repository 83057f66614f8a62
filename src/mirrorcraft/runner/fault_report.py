"""What a run shows about its infrastructure faults: by kind as they happen, and a closing table.

A fault is never scored (DESIGN.md's taxonomy), so the user must see why episodes did
not finish without opening the database: the closing table groups this run's faults by
kind and by what failed (a model endpoint, the game server, a worker process), with
how many episodes each hit, the last message (credentials already redacted when it was
stored) and what to do about it.
"""

from __future__ import annotations

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
    "worker": "a worker process died: rerun the same command",
}
"""What to do about each fault kind, in the user's words (``advice`` refines some by message)."""

INTERNAL_ERROR = "internal error: "
"""How a worker fault for a Python exception in the harness begins (``runner.executor``)."""


MODEL_CALL = "model "
"""How the message of a model call that failed for good begins (``llm.base.LLMUnavailable``:
"model 'name' at host ...")."""


def advice(kind: str, message: str, component: str = "") -> str:
    """What to do about a fault: by kind, and for a timeout or a worker fault by what the
    message says happened (an exception is not memory; a killed process may be). A model
    call's timeout names the endpoint (``component``) and the setting that limits one call."""
    if kind == "timeout" and message.startswith(MODEL_CALL):
        endpoint = f"the model endpoint {component}" if component else "the model endpoint"
        return (
            f"{endpoint} gave no complete answer within one call's time limit (that model's "
            "client.timeout_s in the spec, 60 s unless set; the message says the limit and "
            "how many attempts were made): raise it for that model if it needs longer, or "
            "check the endpoint's load, then rerun the same command"
        )
    if kind == "timeout" and message.startswith("the episode ran past its "):
        return (
            "the episode ran past its wall-clock limit (its agent stuck, or a backend or "
            "endpoint too slow for it): raise execution.episode_timeout_s if it needs longer; "
            "each rerun retries it until execution.max_timeouts over all runs"
        )
    if kind == "server" and "malformed_response" in message:
        return (
            "it answered 2xx with a body that is not a chat completion (a web page, a proxy's "
            "error page, another API): check that base_url is the API's root (most servers' "
            "ends in /v1) and that it serves the OpenAI chat API, then rerun the same command"
        )
    if kind == "server" and "last error: rate_limit" in message:
        return (
            "it kept refusing calls as too many (HTTP 429, its Retry-After waits and the "
            "client's retries spent): your account's rate or quota at that provider, not a "
            "fault of its server; send fewer calls at once (run --concurrency, that model's "
            "client.concurrency), wait for the quota to reset or raise client.max_retries, "
            "then rerun the same command"
        )
    if kind != "worker":
        return ADVICE.get(kind, "rerun the same command")
    if message.startswith(INTERNAL_ERROR):
        lines = message[len(INTERNAL_ERROR) :].strip().splitlines() or ["an exception"]
        return (
            f"a Python exception, not a dead process ({_clip(lines[0], 80)}): fix what it "
            "names (the agent, a rules pack, a world, a setting; or report it with the "
            "faults table's message if it is in mirrorcraft), then rerun the same command"
        )
    if "SIGKILL" in message:
        return (
            "a worker process was killed (out of memory, or killed by hand?): rerun, or "
            "use fewer --workers"
        )
    return (
        "a worker process died (its message says how: a crash in native code, an exit): "
        "rerun the same command; each rerun retries it until execution.max_worker_faults "
        "over all runs"
    )


MESSAGE_WIDTH = 100


def component_of(fault: Fault, endpoint: str | None, backend: str) -> str:
    """What failed: the model endpoint for endpoint faults, else the worker or the backend.
    An episode past its wall-clock limit may have been held up by its agent (a slow plugin)
    as much as by the backend: the component says both."""
    if fault.endpoint and endpoint:
        return endpoint
    if fault.kind == "worker":
        return "harness or agent" if fault.message.startswith(INTERNAL_ERROR) else "worker process"
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
    todo = dict.fromkeys((g.kind, advice(g.kind, g.last_message, g.component)) for g in groups)
    lines.append("What to do:")
    lines += [f"  {kind}: {what}" for kind, what in todo]
    return "\n".join(lines)
