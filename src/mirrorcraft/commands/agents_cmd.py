"""``mirrorcraft agents list``: the packaged agents and the installed ones, with their origin."""

from __future__ import annotations

import argparse
import json
from typing import Any

from mirrorcraft import __version__


def add_parser(sub: Any) -> None:
    p = sub.add_parser("agents", help="list the agents a run can use (packaged and installed)")
    inner = p.add_subparsers(dest="agents_command", metavar="ACTION")
    ls = inner.add_parser("list", help="packaged agents and installed plugin agents")
    ls.add_argument("--json", action="store_true", help="print the list as JSON")
    ls.set_defaults(handler=list_agents)
    p.set_defaults(handler=lambda args: _usage(p))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def rows() -> list[dict[str, Any]]:
    """One row per agent: name, kind, origin, and variants or a problem where there is one."""
    from mirrorcraft.agents.plugins import PluginError, entry_points, resolve
    from mirrorcraft.agents.reference import REFERENCE_AGENTS
    from mirrorcraft.agents.registry import LLM_AGENTS, agent_variants, keeps_memory, known_agents

    packaged = set(known_agents())
    out: list[dict[str, Any]] = []
    for name in known_agents():
        kind = "reference" if name in REFERENCE_AGENTS else "llm"
        row: dict[str, Any] = {
            "name": name,
            "kind": kind,
            "origin": f"built-in (mirrorcraft {__version__})",
        }
        if name in LLM_AGENTS and (variants := agent_variants(name)):
            row["variants"] = list(variants)
        row["memory"] = keeps_memory(name)
        out.append(row)
    for name, ep in sorted(entry_points().items()):
        row = {"name": name, "kind": "entry point", "origin": ep.value}
        if name in packaged:
            row["problem"] = "shadowed by the packaged agent of the same name"
        else:
            try:
                origin = resolve(name).origin
            except PluginError as exc:
                row["problem"] = str(exc)
            else:
                row["origin"] = f"{origin.ref} ({origin.package} {origin.version})".strip()
                row["memory"] = keeps_memory(name)
        out.append(row)
    return out


def list_agents(args: argparse.Namespace) -> int:
    found = rows()
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    width = max(len(r["name"]) for r in found)
    kinds = max(len(r["kind"]) for r in found)
    for r in found:
        line = f"{r['name']:<{width}}  {r['kind']:<{kinds}}  {r['origin']}"
        if r.get("memory"):
            line += "; keeps memory across episodes"
        if r.get("variants"):
            line += f"; variants: {', '.join(r['variants'])}"
        if r.get("problem"):
            line += f"  [{r['problem']}]"
        print(line)
    print(
        "\nAlso accepted wherever an agent is named: an import path module:Class (the module "
        "installed or on PYTHONPATH), and the http:// URL of an agent in another process "
        "(docs/agent_api.md, docs/remote_agent.md). Agents that keep memory across episodes "
        "learn in accumulation specs (docs/mineevolve.md)."
    )
    return 0
