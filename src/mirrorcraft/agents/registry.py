"""Agent configurations by name: the reference agents and the LLM configurations."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from mirrorcraft.agents.base import Agent
from mirrorcraft.agents.reference import REFERENCE_AGENTS, make_reference_agent
from mirrorcraft.rules.ruleset import RuleSet

LLM_AGENTS: dict[str, str] = {
    "direct": "mirrorcraft.agents.llm.direct:DirectAgent",
    "react": "mirrorcraft.agents.llm.react:ReActAgent",
    "reflexion": "mirrorcraft.agents.llm.reflexion:ReflexionAgent",
    "voyager": "mirrorcraft.agents.llm.voyager:VoyagerAgent",
    "xenon": "mirrorcraft.agents.llm.xenon:XenonAgent",
    "adam": "mirrorcraft.agents.llm.adam:AdamAgent",
}
"""Configuration name -> "module:class". ReAct with rules is ``react`` in the disclosed condition."""


class UnknownAgentError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def _available(name: str) -> bool:
    module, _, _cls = LLM_AGENTS[name].partition(":")
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def known_agents() -> tuple[str, ...]:
    return REFERENCE_AGENTS + tuple(n for n in LLM_AGENTS if _available(n))


def needs_model(name: str) -> bool:
    return name in LLM_AGENTS


def llm_agent_class(name: str) -> Any:
    module, _, cls = LLM_AGENTS[name].partition(":")
    return getattr(importlib.import_module(module), cls)


def make_agent(
    name: str,
    *,
    active: RuleSet,
    vanilla: RuleSet,
    model: str = "none",
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache_path: Path | None = None,
    cache_scope: str = "",
    client: Any = None,
    client_settings: dict[str, Any] | None = None,
) -> Agent:
    """Build a fresh agent. Only the oracle receives the active rules; LLM agents get a client."""
    if name in REFERENCE_AGENTS:
        agent: Agent = make_reference_agent(name, active, vanilla)
        return agent
    if name in LLM_AGENTS and _available(name):
        if client is None:
            from mirrorcraft.llm.factory import make_client

            client = make_client(
                model,
                base_url,
                api_key_env,
                cache_path=cache_path,
                cache_scope=cache_scope,
                **(client_settings or {}),
            )
        built: Agent = llm_agent_class(name)(name, client, vanilla)
        return built
    raise UnknownAgentError(f"unknown agent {name!r} (available: {', '.join(known_agents())})")
