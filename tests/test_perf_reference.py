"""Behaviour pinned across performance work: the same decisions and byte-identical results.

The fixtures were recorded from the code before the issue-22 optimisations (see
``tests/perf_reference.py``); a faster simulator, observation or planner must reproduce
them exactly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.perf_reference import (
    FIXTURES,
    PROMPT_CONFIGS,
    episode_key,
    grid_digests,
    planner_episodes,
    play_planner,
    play_prompts,
    prompt_refusal,
    recorded_prompt_digests,
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


PROMPTS = recorded_prompt_digests()


def test_every_configuration_that_calls_a_model_has_a_prompt_digest() -> None:
    """A configuration added to the registry (or a variant to ``PROMPT_CONFIGS``) is pinned
    too: its digest must be recorded before the suite passes."""
    from mirrorcraft.agents.registry import LLM_AGENTS

    assert set(LLM_AGENTS) <= set(PROMPT_CONFIGS)
    assert sorted(PROMPTS) == sorted(PROMPT_CONFIGS)


@pytest.mark.parametrize("key", sorted(PROMPT_CONFIGS))
def test_llm_agents_send_the_recorded_prompts(key: str) -> None:
    digest, hashes = play_prompts(key)
    assert digest == PROMPTS[key]["digest"], (
        f"{key} sends other prompts than recorded: raise PROMPT_VERSION in "
        "agents/llm/templates.py and re-record (python -m tests.perf_reference --write "
        "--prompts-only), or undo the change"
    )
    # Its records name the prompt version, which the resume guard and the analysis compare.
    from mirrorcraft.agents.llm.templates import PROMPT_VERSION

    assert hashes and all(h.get("prompt_version") == str(PROMPT_VERSION) for h in hashes)
    assert all("observation" in h for h in hashes)


UNREACHED_SECTIONS = {
    ("adam", "discovery_repair"),
    ("mineevolve", "nothing"),
    ("observation", "learned_rule"),
    ("observation", "stagnation_cycle"),
    ("observation", "unused_output_blocked"),
    ("voyager", "fallback_user"),
}
"""Template sections the reference episodes do not reach (the mock planner never gets there);
every other section of every agent's template file is sent, so a change to it moves a
digest."""


def test_the_prompt_digests_reach_every_configurations_prompts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Voyager's critic and skill prompts, MineEvolve's skill, remedy, curation and reflection
    prompts, the baselines' memory prompts, the repair prompts, the disclosed rule sheet: each
    is sent in some configuration's reference episodes."""
    from mirrorcraft.agents.llm import templates
    from mirrorcraft.agents.registry import llm_agent_class

    rendered: set[tuple[str, str]] = set()
    render = templates.TemplateFile.render

    def spy(self: templates.TemplateFile, section: str, values: Any) -> str:
        rendered.add((self.name, section))
        return render(self, section, values)

    monkeypatch.setattr(templates.TemplateFile, "render", spy)
    for key in PROMPT_CONFIGS:
        play_prompts(key)
    names = {n for a in PROMPT_CONFIGS for n in llm_agent_class(a.split("[")[0]).template_names}
    sections = {
        (n, s) for n in names | {"observation"} for s in templates.load_template(n).sections
    }
    assert sections - rendered == UNREACHED_SECTIONS


def test_a_changed_prompt_digest_needs_a_new_prompt_or_simulator_version() -> None:
    def entry(digest: str, template: str = "t1") -> dict[str, Any]:
        return {"digest": digest, "templates": {"common": "c1", "x": template}}

    then = {"react": entry("a"), "voyager": entry("b"), "gone": entry("c")}
    now = {"react": entry("a"), "voyager": entry("B"), "new": entry("d")}
    same = {"versions_then": (2, 5), "versions_now": (2, 5)}
    refused = prompt_refusal(then, now, **same)
    assert refused is not None and "prompts of voyager changed" in refused
    assert "raise PROMPT_VERSION" in refused and "react" not in refused.split(":")[0]
    # Only configurations in both count; the same digests are accepted.
    assert prompt_refusal(then, {**now, "voyager": entry("b")}, **same) is None
    assert prompt_refusal(None, now, **same) is None
    # A changed template file is in the records already (its digest): no new version needed.
    assert prompt_refusal(then, {**now, "voyager": entry("B", "t2")}, **same) is None
    # A new prompt version, or a new simulator version (observations follow the simulator).
    assert prompt_refusal(then, now, versions_then=(2, 5), versions_now=(3, 5)) is None
    assert prompt_refusal(then, now, versions_then=(2, 5), versions_now=(2, 6)) is None
    assert prompt_refusal(then, now, **same, mock_replies_changed=True) is None


def test_the_prompt_digest_was_recorded_under_this_prompt_version() -> None:
    """A change to how prompts are built raises ``PROMPT_VERSION`` and re-records the digests
    (``python -m tests.perf_reference --write`` refuses a configuration's changed digest under
    the old one, unless the simulator version changed too),
    so records of the two ways are never pooled (``analysis.validate.CrossCheck``)."""
    from mirrorcraft.agents.llm.templates import PROMPT_VERSION

    assert recorded_prompt_version() == PROMPT_VERSION


def test_fixtures_were_recorded_under_this_simulator_version() -> None:
    """A behaviour change raises ``SIMULATOR_VERSION`` and re-records these fixtures together
    (``python -m tests.perf_reference --write`` refuses changed results under the old one)."""
    from mirrorcraft.body.config import SIMULATOR_VERSION

    assert recorded_simulator_version() == SIMULATOR_VERSION
