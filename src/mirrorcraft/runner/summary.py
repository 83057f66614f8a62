"""The headline table printed at the end of a run: SR and mean Score per agent and rule set."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from mirrorcraft.runner.records import EpisodeRecord


def headline(records: Iterable[EpisodeRecord]) -> str:
    cells: dict[tuple[str, str], list[EpisodeRecord]] = defaultdict(list)
    agents: list[str] = []
    rules: list[str] = []
    for r in records:
        agent = r.agent + (" (rules disclosed)" if r.disclosure == "disclosed" else "")
        cells[(agent, r.rules)].append(r)
        if agent not in agents:
            agents.append(agent)
        if r.rules not in rules:
            rules.append(r.rules)
    if not cells:
        return "no finished episodes"
    rules.sort(key=lambda x: (x != "vanilla", x))
    width = max(len(a) for a in agents) + 2
    head = "SR % / mean Score".ljust(width) + "".join(f"{x:>14}" for x in rules)
    lines = [head, "-" * len(head)]
    for agent in sorted(agents):
        row = agent.ljust(width)
        for rule in rules:
            eps = cells.get((agent, rule), [])
            if not eps:
                row += f"{'-':>14}"
                continue
            sr = 100.0 * sum(e.success for e in eps) / len(eps)
            sc = sum(e.score for e in eps) / len(eps)
            row += f"{sr:>7.1f} /{sc:>5.1f}"
        lines.append(row)
    n = sum(len(v) for v in cells.values())
    lines.append(
        f"({n} episodes; the oracle is given the active rules and is a control, not a benchmark condition)"
    )
    return "\n".join(lines)
