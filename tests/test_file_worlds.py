"""Worlds from biome spec files (``PATH.yaml#SEED``), e.g. a designed biome, in experiments."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from mirrorcraft.cli import main
from mirrorcraft.world.registry import (
    UnknownWorldError,
    biome_spec,
    load_custom_world,
    load_world,
    world_problem,
)
from mirrorcraft.world.spec import load_spec


def _spec_file(tmp_path: Path, name: str = "savanna_test") -> Path:
    doc = biome_spec("savanna").model_dump(mode="json")
    doc["biome"] = name
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_file_world_is_the_spec_generated_with_that_seed(tmp_path: Path) -> None:
    path = _spec_file(tmp_path)
    world_id = f"{path}#17"
    loaded = load_world(world_id)
    direct = load_custom_world(world_id, load_spec(path), 17)
    assert loaded.world.fingerprint == direct.world.fingerprint
    assert load_world(world_id) is loaded  # cached while the file is unchanged
    assert load_world(f"{path}#18").world.fingerprint != loaded.world.fingerprint


def test_an_edited_spec_file_is_generated_afresh(tmp_path: Path) -> None:
    path = _spec_file(tmp_path)
    first = load_world(f"{path}#5")
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["terrain"]["base_height"] = doc["terrain"]["base_height"] + 3
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    assert load_world(f"{path}#5").world.fingerprint != first.world.fingerprint


def test_bad_world_ids_name_the_problem(tmp_path: Path) -> None:
    assert world_problem("plains-1") == ""
    assert "unknown world 'nowhere-1'" in world_problem("nowhere-1")
    assert "PATH.yaml#SEED" in world_problem("x.yaml#notaseed")
    assert "cannot read" in world_problem(f"{tmp_path}/missing.yaml#3")
    broken = tmp_path / "broken.yaml"
    broken.write_text("biome: [unclosed\n", encoding="utf-8")
    assert "not valid YAML" in world_problem(f"{broken}#3")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("biome: only_a_name\n", encoding="utf-8")
    assert "field" in world_problem(f"{wrong}#3")
    with pytest.raises(UnknownWorldError, match="cannot read"):
        load_world(f"{tmp_path}/missing.yaml#3")


def test_an_experiment_runs_paired_episodes_in_a_file_world(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    world_id = f"{_spec_file(tmp_path)}#101"
    spec = tmp_path / "exp.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "name": "file-world",
                "worlds": [world_id],
                "rules": ["vanilla", "M04"],
                "tasks": ["iron_armor"],
                "agents": ["oracle"],
                "seed": 0,
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    assert main(["run", str(spec), "--out", str(out), "--workers", "1", "--no-report"]) == 0
    with sqlite3.connect(out / "results.sqlite") as db:
        records = [json.loads(r[0]) for r in db.execute("SELECT record FROM episodes")]
    assert sorted((r["world"], r["rules"], r["success"]) for r in records) == [
        (world_id, "M04", True),
        (world_id, "vanilla", True),
    ]
    assert len({r["seed"] for r in records}) == 1  # the twins share their seed

    # Resuming after the spec file changed would mix two worlds under one id: refused.
    path = Path(world_id.rpartition("#")[0])
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["terrain"]["base_height"] = doc["terrain"]["base_height"] + 2
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(spec), "--out", str(out), "--workers", "1", "--no-report"]) == 2
    assert "now generates a different world" in capsys.readouterr().err

    bad = tmp_path / "bad.yaml"
    bad.write_text(spec.read_text().replace("#101", "#x"), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(bad), "--out", str(tmp_path / "bad"), "--no-report"]) == 2
    assert "PATH.yaml#SEED" in capsys.readouterr().err


def _edited_spec(tmp_path: Path, edit: Any) -> Path:
    path = _spec_file(tmp_path)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _set(*keys: Any) -> Any:
    *where, last, value = keys

    def edit(doc: Any) -> None:
        node = doc
        for key in where:
            node = node[key]
        node[last] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "fragment"),
    [
        (_set("mobs", 0, "count", [14, 10]), "count must be (min, max)"),
        (_set("mobs", 0, "count", [100000, 100000]), "<= 1000"),
        (_set("water", "pond_radius", [3000, 6000]), "pond_radius"),
        (_set("trees", "kinds", 0, "height", [9, 2]), "height"),
        (_set("ores", 0, "block", "unobtainium_ore"), "unknown block 'unobtainium_ore'"),
        (_set("trees", "kinds", 0, "log", "oak_logg"), "unknown block 'oak_logg'"),
        (_set("mobs", 0, "type", "dragon"), "unknown mob 'dragon'"),
    ],
    ids=["count inverted", "count absurd", "pond wider than the world", "tree height",
         "ore block", "tree log", "mob"],
)  # fmt: skip
def test_a_spec_that_cannot_make_a_world_is_one_line_before_anything_runs(
    tmp_path: Path, edit: Any, fragment: str
) -> None:
    """Inverted or absurd (min, max) pairs ended play and run in a numpy traceback, an unknown
    block in a ValueError traceback (and `run` retried it three times as a worker fault that
    blamed memory), and an unknown mob type placed mobs no rule knows."""
    world = f"{_edited_spec(tmp_path, edit)}#1"
    assert fragment in world_problem(world)
    with pytest.raises(UnknownWorldError, match=re.escape(fragment)):
        load_world(world)
    actions = tmp_path / "a.jsonl"
    actions.write_text('{"skill": "wait", "args": {}}\n')
    done = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", "play", "--world", world,
         "--task", "diamond", "--actions", str(actions)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert fragment in done.stderr
