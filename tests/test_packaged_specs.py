"""Every packaged experiment spec loads, names only known worlds and agents, and expands."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import yaml

from mirrorcraft.agents.registry import is_known_agent
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.spec import expand, load_spec
from mirrorcraft.world.registry import world_problem

SPECS = sorted(Path(str(resources.files("mirrorcraft") / "data" / "experiments")).glob("*.yaml"))
PLAIN = [p for p in SPECS if yaml.safe_load(p.read_text()).get("kind") != "accumulation"]


def test_the_packaged_specs_are_found() -> None:
    assert {"default.yaml", "reference_grid.yaml", "techtree_reference.yaml"} <= {
        p.name for p in PLAIN
    }
    techtree = next(p for p in PLAIN if p.name == "techtree_reference.yaml")
    assert len(expand(load_spec(techtree))) == 4 * 7 * 70 * 2


@pytest.mark.parametrize("path", PLAIN, ids=lambda p: p.stem)
def test_a_packaged_spec_expands_into_paired_episodes(path: Path) -> None:
    spec = load_spec(path)
    assert all(world_problem(w) == "" for w in spec.worlds)
    assert all(is_known_agent(a) for a in spec.agents)
    conditions = expand(spec)
    assert conditions
    for c in conditions:
        get_task(c.task)
    # Twins: every Mirror condition has a Vanilla one with the same seed.
    vanilla = {(c.world, c.task, c.agent, c.seed) for c in conditions if c.rules == "vanilla"}
    if "vanilla" in spec.rules:
        assert all((c.world, c.task, c.agent, c.seed) in vanilla for c in conditions)


def _spec(name: str):  # type: ignore[no-untyped-def]
    return load_spec(next(p for p in SPECS if p.name == name))


def test_the_main_study_has_the_papers_8640_episodes_and_reasoning_off() -> None:
    spec = _spec("paper_main.yaml")
    conditions = expand(spec)
    assert len(conditions) == 8640
    hidden = [c for c in conditions if c.disclosure == "hidden"]
    assert sum(c.rules == "vanilla" for c in hidden) == 1080
    assert sum(c.rules != "vanilla" for c in hidden) == 6480
    assert {c.agent for c in conditions if c.disclosure == "disclosed"} == {"react"}
    settings = {m.name: m.client for m in spec.models}
    assert settings["deepseek-v4-flash"] == {"extra_body": {"thinking": {"type": "disabled"}}}
    assert settings["gemini-3.1-flash-lite"] == {"reasoning_effort": "minimal"}


@pytest.mark.parametrize(
    "name", ["paper_main.yaml", "paper_horizon.yaml", "paper_third_model.yaml"]
)
def test_paper_specs_say_their_model_names_are_placeholders(name: str) -> None:
    path = next(p for p in SPECS if p.name == name)
    assert "MODEL NAMES ARE PLACEHOLDERS" in path.read_text()
    assert "placeholders" in load_spec(path).description


def test_the_horizon_study_uses_its_own_25_worlds_with_10_mirror_twins() -> None:
    from mirrorcraft.world.registry import world_ids, world_table

    spec = _spec("paper_horizon.yaml")
    assert sorted(spec.worlds) == sorted(world_ids("horizon")) and len(spec.worlds) == 25
    assert not set(spec.worlds) & set(world_ids())  # apart from the main study's ten
    biomes = [world_table()[w].biome for w in spec.worlds]
    assert all(biomes.count(b) == 5 for b in set(biomes)) and len(set(biomes)) == 5
    assert spec.mirror_worlds is not None and len(spec.mirror_worlds) == 10
    conditions = expand(spec)
    mirror_worlds = {c.world for c in conditions if c.rules != "vanilla"}
    assert mirror_worlds == set(spec.mirror_worlds)
    assert {c.world for c in conditions if c.rules == "vanilla"} == set(spec.worlds)
    per_cell = 3 * 4  # repetitions x configurations, per world and task
    assert len(conditions) == 3 * per_cell * (25 + 10 * 6)
    assert {c.budget for c in conditions} == {200} and spec.checkpoints == (100, 150, 200)


def test_the_third_model_study_is_diamond_with_mirror_twins_in_plains_and_savanna() -> None:
    spec = _spec("paper_third_model.yaml")
    conditions = expand(spec)
    assert {c.task for c in conditions} == {"diamond"} and {c.model for c in conditions} == {
        "gpt-5.6-luna"
    }
    assert {c.repetition for c in conditions} == {0, 1}
    assert {c.world for c in conditions if c.rules == "vanilla"} == set(spec.worlds)
    assert {c.world for c in conditions if c.rules != "vanilla"} == {
        "plains-1",
        "plains-2",
        "savanna-1",
        "savanna-2",
    }
    assert len(conditions) == 6 * 2 * (10 + 4 * 6)
    assert spec.models[0].client == {"reasoning_effort": "none"}


def test_mirror_worlds_must_be_worlds_and_unset_keeps_the_spec_hash() -> None:
    from mirrorcraft.runner.spec import SpecError, parse_spec

    base = {
        "name": "t",
        "worlds": ["plains-1"],
        "rules": ["vanilla", "M01"],
        "tasks": ["diamond"],
        "agents": ["oracle"],
    }
    with pytest.raises(SpecError, match="mirror_worlds names 'taiga-1'"):
        parse_spec({**base, "mirror_worlds": ["taiga-1"]}, "t")
    plain = parse_spec(base, "t")
    assert plain.hash == "3d0935128904bb46"  # the hash of this spec before mirror_worlds existed
    none = parse_spec({**base, "mirror_worlds": []}, "t")
    assert {c.rules for c in expand(none)} == {"vanilla"} and none.hash != plain.hash
