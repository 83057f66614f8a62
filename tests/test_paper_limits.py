"""Every configuration limit of appendix D and section 4.1, against the paper's value.

Each row names the constant the code uses and the test that exercises the limit in play
(so the table cannot drift from the behaviour); ``docs/agents.md`` lists the same rows.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.llm.base import Sampling

TESTS = Path(__file__).parent

LIMITS = [
    # (what the paper says, module, constant, paper value, behaviour test "file::name")
    (
        "ReAct keeps the 16 most recent transitions",
        "mirrorcraft.agents.llm.react",
        "TRACE_LENGTH",
        16,
        "test_llm_agents_core.py::test_react_keeps_at_most_16_recent_steps_and_never_sees_the_sheet_when_hidden",
    ),
    (
        "Reflexion: up to three temporary lessons",
        "mirrorcraft.agents.llm.reflexion",
        "MAX_LESSONS",
        3,
        "test_llm_agents_core.py::test_reflexion_limits_lessons_reviews_and_retention",
    ),
    (
        "Reflexion: at most six reviews per episode",
        "mirrorcraft.agents.llm.reflexion",
        "MAX_REVIEWS",
        6,
        "test_llm_agents_core.py::test_reflexion_limits_lessons_reviews_and_retention",
    ),
    (
        "Reflexion: a retention window of 16 actions per lesson",
        "mirrorcraft.agents.llm.reflexion",
        "LESSON_TTL",
        16,
        "test_llm_agents_core.py::test_reflexion_limits_lessons_reviews_and_retention",
    ),
    (
        "Voyager: a procedure library of at most 16 entries",
        "mirrorcraft.agents.llm.voyager_library",
        "LIBRARY_SIZE",
        16,
        "test_llm_agents_voyager.py::test_library_capacity_eviction_and_retrieval_limit",
    ),
    (
        "Voyager: programs of four skills",
        "mirrorcraft.agents.llm.voyager_library",
        "MAX_PROGRAM_ACTIONS",
        4,
        "test_llm_agents_voyager.py::test_overlong_or_unparseable_programs_get_one_json_repair_round",
    ),
    (
        "Voyager: retrieves up to five procedures",
        "mirrorcraft.agents.llm.voyager_library",
        "RETRIEVE_LIMIT",
        5,
        "test_llm_agents_voyager.py::test_library_capacity_eviction_and_retrieval_limit",
    ),
    (
        "Voyager: at most four repairs (per episode by default)",
        "mirrorcraft.agents.llm.voyager",
        "MAX_REPAIRS",
        4,
        "test_llm_agents_voyager.py::test_the_repair_allowance_is_per_episode_unless_the_subgoal_reading_is_chosen",
    ),
    (
        "XENON: dependency graph capacity 32",
        "mirrorcraft.agents.llm.xenon_graph",
        "GRAPH_CAPACITY",
        32,
        "test_llm_agents_xenon.py::test_graph_prior_is_capped_acyclic_and_evicts_deterministically",
    ),
    (
        "XENON: memory of observed effects, capacity 32",
        "mirrorcraft.agents.llm.xenon_graph",
        "MEMORY_CAPACITY",
        32,
        "test_llm_agents_xenon.py::test_memory_capacity_eviction_and_retrieval",
    ),
    (
        "XENON: retrieves up to three entries",
        "mirrorcraft.agents.llm.xenon_graph",
        "RETRIEVE_LIMIT",
        3,
        "test_llm_agents_xenon.py::test_memory_capacity_eviction_and_retrieval",
    ),
    (
        "XENON: replans from the updated frontier after two failures",
        "mirrorcraft.agents.llm.xenon",
        "FAILURES_BEFORE_REPLAN",
        2,
        "test_llm_agents_xenon.py::test_two_failures_on_one_subgoal_replan_from_the_updated_frontier",
    ),
    (
        "ADAM: a causal graph of at most 48 nodes",
        "mirrorcraft.agents.llm.adam_causal",
        "NODE_CAPACITY",
        48,
        "test_llm_agents_adam.py::test_graph_never_exceeds_48_nodes_and_keeps_learned_edges",
    ),
    (
        "ADAM: a transition memory of at most 32 entries",
        "mirrorcraft.agents.llm.adam_causal",
        "MEMORY_CAPACITY",
        32,
        "test_llm_agents_adam.py::test_adam_plays_m05_within_its_graph_and_memory_limits",
    ),
    (
        "ADAM: at most two probes",
        "mirrorcraft.agents.llm.adam",
        "MAX_PROBES",
        2,
        "test_llm_agents_adam.py::test_at_most_two_probes_only_when_blocked_and_each_costs_one_action",
    ),
    (
        "ADAM: probing disabled during the final 12 actions",
        "mirrorcraft.agents.llm.adam",
        "PROBE_FREE_TAIL",
        12,
        "test_llm_agents_adam.py::test_no_probe_in_the_final_twelve_actions",
    ),
]


def _defined_tests(filename: str) -> set[str]:
    tree = ast.parse((TESTS / filename).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize(
    ("what", "module", "constant", "paper", "behaviour"), LIMITS, ids=[row[0] for row in LIMITS]
)
def test_limit_matches_the_paper(
    what: str, module: str, constant: str, paper: int, behaviour: str
) -> None:
    assert getattr(importlib.import_module(module), constant) == paper, what
    filename, _, name = behaviour.partition("::")
    assert name in _defined_tests(filename), f"{what}: behaviour test {behaviour} is missing"


def test_adam_learns_from_two_comparable_samples() -> None:
    """ "It learns from two comparable samples": fewer leave an edge a hypothesis."""
    assert "test_a_relation_is_learned_only_from_two_comparable_samples" in _defined_tests(
        "test_llm_agents_adam.py"
    )
    source = Path(importlib.import_module("mirrorcraft.agents.llm.adam_causal").__file__ or "")
    assert "support >= 2" in source.read_text(encoding="utf-8")


def test_sampling_and_budgets_of_section_4_1() -> None:
    """Temperature 0.7, at most 2,048 tokens; 50 actions for Iron Armor and Diamond, 75 for
    Enchantment."""
    assert Sampling() == Sampling(temperature=0.7, max_tokens=2048)
    assert {t: get_task(t).budget for t in ("iron_armor", "diamond", "enchantment")} == {
        "iron_armor": 50,
        "diamond": 50,
        "enchantment": 75,
    }


def test_milestone_values_of_section_3_4() -> None:
    values = {
        t: [m.value for m in get_task(t).milestones]
        for t in ("iron_armor", "diamond", "enchantment")
    }
    assert values == {
        "iron_armor": [15, 35, 65, 100],
        "diamond": [10, 25, 50, 70, 100],
        "enchantment": [10, 25, 45, 60, 75, 90, 100],
    }


def test_reflexion_review_triggers() -> None:
    """Lessons are written after repeated failure, conflicting evidence, stalled progress or
    a scheduled review (appendix D)."""
    source = importlib.import_module("mirrorcraft.agents.llm.reflexion").__file__ or ""
    text = Path(source).read_text(encoding="utf-8")
    for trigger in (
        "repeated_failure",
        "conflicting_evidence",
        "stalled_progress",
        "scheduled_review",
    ):
        assert f'"trigger": "{trigger}"' in text


OUR_SETTINGS = [
    # (module, attribute path, value): the settings docs/agents.md lists as our own choices
    ("mirrorcraft.agents.llm.reflexion", "ReflexionAgent.stall_window", 10),
    ("mirrorcraft.agents.llm.reflexion", "ReflexionAgent.review_every", 20),
    ("mirrorcraft.agents.llm.xenon", "FRONTIER_SHOWN", 6),
    ("mirrorcraft.agents.llm.adam", "PLAN_LIMIT", 8),
    ("mirrorcraft.agents.llm.adam", "PLAN_EVERY", 10),
    ("mirrorcraft.agents.llm.adam", "DISCOVER_EVERY", 8),
    ("mirrorcraft.agents.llm.adam", "STALL_WINDOW", 3),
    ("mirrorcraft.agents.llm.adam", "MEMORY_SHOWN", 8),
]


@pytest.mark.parametrize(("module", "path", "value"), OUR_SETTINGS)
def test_settings_not_in_the_paper_are_documented_with_their_values(
    module: str, path: str, value: int
) -> None:
    found: object = importlib.import_module(module)
    for part in path.split("."):
        found = getattr(found, part)
    assert found == value
    docs = (TESTS.parent / "docs" / "agents.md").read_text(encoding="utf-8")
    row = next(
        line
        for line in docs.splitlines()
        if f"`{module.rsplit('.', 1)[1]}.{path.split('.')[-1]}`" in line or f"`{path}`" in line
    )
    assert str(value) in row
