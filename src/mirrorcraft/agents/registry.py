"""Agent configurations by name: the reference agents, the LLM configurations, and users' own
agents (an import path ``module:Class``, an installed ``mirrorcraft.agents`` entry point, or
an ``http://`` URL of a remote agent; see ``agents/plugins.py``)."""

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


def is_builtin(name: str) -> bool:
    base, variant = split_name(name)
    if base not in known_agents():
        return False
    return variant is None or variant in agent_variants(base)


def is_known_agent(name: str) -> bool:
    """A packaged configuration (with a known variant), or a user agent that can be found."""
    if is_builtin(name):
        return True
    from mirrorcraft.agents.plugins import is_plugin

    return is_plugin(name)


def agent_problem(name: str) -> str | None:
    """Why ``name`` cannot be run (None when it can): an unknown name, or a user agent that
    cannot be imported (the import error in one line)."""
    if is_builtin(name):
        return None
    from mirrorcraft.agents.plugins import PluginError, is_import_path, is_remote, resolve

    base, variant = split_name(name)
    if variant is not None and base in known_agents():
        return f"unknown variant {variant!r} of agent {base!r}"
    try:
        resolve(name)
    except PluginError as exc:
        if is_import_path(name) or is_remote(name):
            return str(exc)
        return (
            f"unknown agent {name!r} (packaged: {', '.join(known_agents())}; or an import path "
            "module:Class, an installed entry point, or an http:// URL; "
            "'mirrorcraft agents list' shows them)"
        )
    return None


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
    """Whether the agent calls a model through the harness (an LLM configuration, or a user
    agent with ``uses_model = True``)."""
    if split_name(name)[0] in LLM_AGENTS:
        return True
    if name in REFERENCE_AGENTS:
        return False
    from mirrorcraft.agents.plugins import uses_model

    return uses_model(name)


def keeps_memory(name: str) -> bool:
    """Whether the agent's memory can persist across episodes in a knowledge store: the
    packaged memory configurations, and user agents that declare ``cross_episode_memory``
    and implement ``load_knowledge`` and ``knowledge_delta`` (``agents/memory.py``)."""
    if split_name(name)[0] in MEMORY_AGENTS:
        return True
    if is_builtin(name):
        return False
    from mirrorcraft.agents.plugins import memory_problem

    return memory_problem(name) is None


def runs_in_event_loop(name: str) -> bool:
    """Agents that wait on the network (models, remote agents) share one event loop; the rest
    run in worker processes."""
    if needs_model(name):
        return True
    if name in REFERENCE_AGENTS:
        return False
    from mirrorcraft.agents.plugins import runs_in_event_loop as waits

    return waits(name)


def takes_options(name: str) -> bool:
    """Whether a packaged configuration accepts ``options`` (reference agents take none)."""
    base = split_name(name)[0]
    if base not in LLM_AGENTS:
        return False
    import inspect

    return "options" in inspect.signature(llm_agent_class(base).__init__).parameters


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
    label: str | None = None,
) -> Agent:
    """Build a fresh agent. Only the oracle receives the active rules; LLM agents get a client.

    ``name`` may carry a variant (``mineevolve[no_curator]``); ``options`` are
    configuration settings (only configurations that take options accept them).
    ``call_budget`` caps the model calls of each episode (see ``llm.budget``).
    A user agent (import path, entry point or URL) is recorded under ``label`` when given.
    """
    base, variant = split_name(name)
    if variant is not None and base in LLM_AGENTS and variant not in agent_variants(base):
        raise UnknownAgentError(f"unknown variant {variant!r} of agent {base!r}")
    if name in REFERENCE_AGENTS:
        agent: Agent = make_reference_agent(name, active, vanilla)
        return agent

    def model_client() -> Any:
        made = client
        if made is None and model == MOCK_MODEL:
            from mirrorcraft.agents.mock_planner import PlannerPolicy
            from mirrorcraft.llm.mock import MockLLM

            made = MockLLM(PlannerPolicy(vanilla), model=MOCK_MODEL)
        if made is None:
            from mirrorcraft.llm.factory import make_client

            made = make_client(
                model,
                base_url,
                api_key_env,
                cache_path=cache_path,
                cache_scope=cache_scope,
                **(client_settings or {}),
            )
        if call_budget is not None:
            from mirrorcraft.llm.budget import BudgetedClient

            made = BudgetedClient(made, call_budget)
        return made

    if base not in LLM_AGENTS:
        from mirrorcraft.agents.plugins import PluginError, build_plugin, is_plugin, is_remote

        if is_remote(name):
            from mirrorcraft.agents.remote.agent import RemoteAgent

            return RemoteAgent(label or name, name, vanilla, options=options)
        if is_plugin(name):
            try:
                return build_plugin(
                    name,
                    label or name,
                    options,
                    model_client() if needs_model(name) else None,
                    in_episode=True,
                )
            except PluginError as exc:
                raise UnknownAgentError(str(exc)) from None
    if base in LLM_AGENTS and _available(base):
        client = model_client()
        opts = dict(options or {})
        if variant is not None:
            opts["variant"] = variant
        cls = llm_agent_class(base)
        built: Agent = (
            cls(name, client, vanilla, options=opts) if opts else cls(name, client, vanilla)
        )
        return built
    raise UnknownAgentError(f"unknown agent {name!r} (available: {', '.join(known_agents())})")
