"""Agent configurations by name: the reference agents and the LLM configurations."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from mirrorcraft.agents.base import Agent
from mirrorcraft.agents.reference import REFERENCE_AGENTS, make_reference_agent
from mirrorcraft.rules.ruleset import RuleSet

LLM_AGENTS: dict[str, str] = {
    "direct": "mirrorcraft.agents.llm.direct:DirectAgent",
    "react": "mirrorcraft.agents.llm.react:ReActAgent",
    "tools": "mirrorcraft.agents.llm.tool_calling:ToolsAgent",
    "reflexion": "mirrorcraft.agents.llm.reflexion:ReflexionAgent",
    "voyager": "mirrorcraft.agents.llm.voyager:VoyagerAgent",
    "xenon": "mirrorcraft.agents.llm.xenon:XenonAgent",
    "adam": "mirrorcraft.agents.llm.adam:AdamAgent",
    "mineevolve": "mirrorcraft.agents.mineevolve.agent:MineEvolveAgent",
    "deps": "mirrorcraft.agents.baselines.deps:DepsAgent",
    "jarvis1": "mirrorcraft.agents.baselines.jarvis1:Jarvis1Agent",
    "optimus1": "mirrorcraft.agents.baselines.optimus1:Optimus1Agent",
    "optimus2": "mirrorcraft.agents.baselines.optimus2:Optimus2Agent",
}
"""Configuration name -> "module:class". ReAct with rules is ``react`` in the disclosed condition;
``tools`` is ReAct with native tool calling (the skills offered as function tools).
``deps``, ``jarvis1``, ``optimus1`` and ``optimus2`` are the MineEvolve paper's baselines
(``agents/baselines/``)."""

MEMORY_AGENTS = ("mineevolve", "jarvis1", "optimus1")
"""Configurations whose memory can persist across episodes in a knowledge store."""

MOCK_MODEL = "mock-planner"
"""A model name served offline by the scripted mock (the adaptive planner speaking each
configuration's reply format): for smoke runs and tests, never a measurement of a model."""

_VARIANT = re.compile(r"^([a-z][a-z0-9-]*)\[([a-z0-9_]+)\]$")


def split_name(name: str) -> tuple[str, str | None]:
    """``mineevolve[no_curator]`` -> ("mineevolve", "no_curator"); plain names have no variant."""
    m = _VARIANT.match(name)
    return (m.group(1), m.group(2)) if m else (name, None)


def agent_variants(base: str) -> tuple[str, ...]:
    """The named variants (ablations, readings of the paper) a configuration offers."""
    if base == "voyager":
        from mirrorcraft.agents.llm.voyager import VARIANTS

        return tuple(VARIANTS)
    if base != "mineevolve":
        return ()
    from mirrorcraft.agents.mineevolve.config import default_config

    return tuple(default_config().variants)


def is_known_agent(name: str) -> bool:
    base, variant = split_name(name)
    if base not in known_agents():
        return False
    return variant is None or variant in agent_variants(base)


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
    return split_name(name)[0] in LLM_AGENTS


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
    options: dict[str, Any] | None = None,
    call_budget: int | None = None,
) -> Agent:
    """Build a fresh agent. Only the oracle receives the active rules; LLM agents get a client.

    ``name`` may carry a variant (``mineevolve[no_curator]``); ``options`` are
    configuration settings (only configurations that take options accept them).
    ``call_budget`` caps the model calls of each episode (see ``llm.budget``).
    """
    base, variant = split_name(name)
    if variant is not None and variant not in agent_variants(base):
        raise UnknownAgentError(f"unknown variant {variant!r} of agent {base!r}")
    if name in REFERENCE_AGENTS:
        agent: Agent = make_reference_agent(name, active, vanilla)
        return agent
    if base in LLM_AGENTS and _available(base):
        if client is None and model == MOCK_MODEL:
            from mirrorcraft.agents.mock_planner import PlannerPolicy
            from mirrorcraft.llm.mock import MockLLM

            client = MockLLM(PlannerPolicy(vanilla), model=MOCK_MODEL)
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
        if call_budget is not None:
            from mirrorcraft.llm.budget import BudgetedClient

            client = BudgetedClient(client, call_budget)
        opts = dict(options or {})
        if variant is not None:
            opts["variant"] = variant
        cls = llm_agent_class(base)
        built: Agent = (
            cls(name, client, vanilla, options=opts) if opts else cls(name, client, vanilla)
        )
        return built
    raise UnknownAgentError(f"unknown agent {name!r} (available: {', '.join(known_agents())})")
