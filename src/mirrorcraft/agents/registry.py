"""Agent configurations by name: the reference agents now, the LLM configurations as they land."""

from __future__ import annotations

from typing import Any

from mirrorcraft.agents.base import Agent
from mirrorcraft.agents.reference import REFERENCE_AGENTS, make_reference_agent
from mirrorcraft.rules.ruleset import RuleSet

LLM_AGENTS: tuple[str, ...] = ()


class UnknownAgentError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


def known_agents() -> tuple[str, ...]:
    return REFERENCE_AGENTS + LLM_AGENTS


def needs_model(name: str) -> bool:
    return name in LLM_AGENTS


def make_agent(
    name: str, *, active: RuleSet, vanilla: RuleSet, model: str = "none", **llm: Any
) -> Agent:
    """Build a fresh agent. Only the oracle receives the active rules."""
    if name in REFERENCE_AGENTS:
        agent: Agent = make_reference_agent(name, active, vanilla)
        return agent
    raise UnknownAgentError(f"unknown agent {name!r} (available: {', '.join(known_agents())})")
