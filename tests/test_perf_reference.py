"""Behaviour pinned across performance work: the same decisions and byte-identical results.

The fixtures were recorded from the code before the issue-22 optimisations (see
``tests/perf_reference.py``); a faster simulator, observation or planner must reproduce
them exactly.
"""

from __future__ import annotations

import json

import pytest

from tests.perf_reference import (
    FIXTURES,
    episode_key,
    grid_digests,
    llm_prompt_digest,
    planner_episodes,
    play_planner,
    recorded_prompt_version,
    recorded_simulator_version,
)

DECISIONS = json.loads((FIXTURES / "planner_decisions.json").read_text())
GRID = json.loads((FIXTURES / "reference_grid.json").read_text())


def test_fixture_covers_every_recorded_episode() -> None:
    assert sorted(DECISIONS) == sorted(episode_key(*e) for e in planner_episodes())
    assert len(DECISIONS) == 63 and all(DECISIONS.values())


@pytest.mark.parametrize("agent", ["vanilla-planner", "adaptive-planner", "oracle"])
def test_planners_make_the_recorded_decisions(agent: str) -> None:
    for episode in planner_episodes():
        if episode[0] != agent:
            continue
        key = episode_key(*episode)
        expected = DECISIONS[key]
        got = play_planner(*episode)
        for i, (want, have) in enumerate(zip(expected, got, strict=False)):
            assert have == want, f"{key}: decision {i + 1} differs: {have} != {want}"
        assert len(got) == len(expected), f"{key}: {len(got)} decisions, recorded {len(expected)}"


def test_reference_grid_is_byte_identical() -> None:
    got = grid_digests()
    assert sorted(got) == sorted(GRID)
    differing = [
        f"{v['condition']} ({eid}): {[k for k in v if got[eid][k] != v[k]]}"
        for eid, v in GRID.items()
        if got[eid] != v
    ]
    assert not differing, "episodes differ from the reference export: " + "; ".join(differing)


def test_llm_agents_send_the_recorded_prompts() -> None:
    assert llm_prompt_digest() == (FIXTURES / "llm_prompts.sha256").read_text().strip()


def test_the_prompt_digest_was_recorded_under_this_prompt_version() -> None:
    """A change to how prompts are built raises ``PROMPT_VERSION`` and re-records the digest
    (``python -m tests.perf_reference --write`` refuses a changed digest under the old one),
    so records of the two ways are never pooled (``analysis.validate.CrossCheck``)."""
    from mirrorcraft.agents.llm.templates import PROMPT_VERSION

    assert recorded_prompt_version() == PROMPT_VERSION


def test_fixtures_were_recorded_under_this_simulator_version() -> None:
    """A behaviour change raises ``SIMULATOR_VERSION`` and re-records these fixtures together
    (``python -m tests.perf_reference --write`` refuses changed results under the old one)."""
    from mirrorcraft.body.config import SIMULATOR_VERSION

    assert recorded_simulator_version() == SIMULATOR_VERSION
