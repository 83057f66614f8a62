"""The offline ``mock-planner`` model: the scripted planner policy with every reply writer loaded.

Importing this module registers the reply contracts of every configuration (the
LLM configurations, MineEvolve and the MineEvolve paper's baselines), so a
``PlannerPolicy`` made here answers any call an agent makes.
"""

from __future__ import annotations

from mirrorcraft.agents.baselines import mock_replies as _baseline_replies  # noqa: F401
from mirrorcraft.agents.llm import scripted as _llm_replies  # noqa: F401
from mirrorcraft.agents.mineevolve import mock_replies as _mineevolve_replies  # noqa: F401
from mirrorcraft.agents.mock_policy import WRITERS, PlannerPolicy
from mirrorcraft.rules.ruleset import RuleSet

__all__ = ["WRITERS", "PlannerPolicy", "planner_policy"]


def planner_policy(vanilla: RuleSet) -> PlannerPolicy:
    """A fresh policy (one per agent: it follows one episode at a time)."""
    return PlannerPolicy(vanilla)
