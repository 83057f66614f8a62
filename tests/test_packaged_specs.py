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
