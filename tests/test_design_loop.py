"""The designer/judge loop with scripted mock models (offline, deterministic)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mirrorcraft.backends.rulesets import resolve_rules
from mirrorcraft.datapack.compiler import compile_manifest
from mirrorcraft.datapack.manifest import load_manifest_file
from mirrorcraft.design.kinds import BiomeKind, ControlsResult, MirrorKind
from mirrorcraft.design.loop import DesignLog, DesignOutcome, DesignSettings
from mirrorcraft.design.run import initial_spec, make_kind, run_llm
from mirrorcraft.llm.base import CallMeta, Message
from mirrorcraft.llm.mock import FaultPlan, MockLLM
from mirrorcraft.rules.ruleset import vanilla_ruleset
from mirrorcraft.world.registry import biome_spec, load_custom_world
from mirrorcraft.world.spec import load_spec

TWO = ("iron_armor", "diamond")


def manifest(*changes: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "kind": "mirror",
        "id": "D01",
        "name": "Loop test suite",
        "selected_tasks": list(TWO),
        "changes": list(changes),
    }


UNSOLVABLE = manifest(
    {
        "op": "block_drops",
        "targets": ["iron_ore", "deepslate_iron_ore"],
        "mode": "replace",
        "drops": [{"item": "dirt", "count": 1}],
        "sheet": "Iron ore of either kind drops dirt.",
    }
)
GOOD = manifest(
    {
        "op": "block_drops",
        "targets": ["#minecraft:logs"],
        "mode": "replace",
        "drops": [{"item": "{crafted}", "count": 4}],
        "sheet": "Breaking a log drops 4 planks of its kind instead of the log.",
    },
    {
        "op": "block_drops",
        "targets": ["iron_ore", "deepslate_iron_ore"],
        "mode": "add",
        "drops": [{"item": "iron_ingot", "count": 1}],
        "sheet": "Iron ore of either kind also drops an iron ingot.",
    },
)


def design(spec: dict[str, Any], kind: str = "mirror", summary: str = "a draft") -> str:
    return json.dumps(
        {
            "schema_version": "1.0",
            "kind": kind,
            "design_summary": summary,
            "resolved_feedback": [],
            "spec": spec,
        }
    )


def verdict(
    v: str, tasks: Sequence[str] = TWO, unsolvable: Sequence[str] = (), hard: Sequence[str] = ()
) -> str:
    return json.dumps(
        {
            "schema_version": "1.0",
            "kind": "biome" if "enchantment" in tasks and len(tasks) == 3 else "mirror",
            "verdict": v,
            "confidence": 0.8,
            "summary": f"verdict {v}",
            "hard_failures": list(hard),
            "warnings": [],
            "task_assessments": [
                {"task": t, "solvable": t not in unsolvable, "route": [], "principal_risk": ""}
                for t in tasks
            ],
            "change_assessments": [],
            "revision_instructions": [
                {"path": "changes[0].drops", "action": "replace", "detail": "keep raw iron"}
            ]
            if v != "accept"
            else [],
        }
    )


class Script:
    """Designer and judge replies in order (the last one repeats); every call is kept."""

    def __init__(self, designer: Sequence[str], judge: Sequence[str]) -> None:
        self.replies = {"design": list(designer), "judge": list(judge)}
        self.used = {"design": 0, "judge": 0}
        self.calls: list[tuple[str, list[Message]]] = []

    def __call__(self, messages: Sequence[Message], meta: CallMeta | None) -> str:
        assert meta is not None
        role = "design" if meta.purpose.startswith("design") else "judge"
        self.calls.append((meta.purpose, list(messages)))
        items = self.replies[role]
        reply = items[min(self.used[role], len(items) - 1)]
        self.used[role] += 1
        return reply

    def prompts(self, purpose: str) -> list[str]:
        return ["\n".join(m.content for m in msgs) for p, msgs in self.calls if p == purpose]


def run(
    kind: MirrorKind | BiomeKind, script: Script, out: Path, rounds: int = 4, **mock: Any
) -> tuple[DesignOutcome, list[Path], list[dict[str, Any]]]:
    settings = DesignSettings(rounds=rounds)
    start = initial_spec(kind, None, 0)
    outcome, files = asyncio.run(run_llm(kind, MockLLM(script, **mock), settings, out, start))
    log = [json.loads(line) for line in (out / "design_log.jsonl").read_text().splitlines()]
    return outcome, files, log


def test_revision_after_an_unsolvable_draft_is_accepted_and_passes_the_controls(
    tmp_path: Path,
) -> None:
    script = Script(
        [design(UNSOLVABLE), design(GOOD, summary="logs give planks, iron ore gives ingots")],
        [
            verdict("revise", unsolvable=TWO, hard=["iron is unobtainable"]),
            verdict("accept"),
        ],
    )
    outcome, files, log = run(make_kind("mirror", TWO), script, tmp_path)
    assert outcome.accepted and outcome.rounds_used == 2, outcome.message
    assert outcome.controls is not None and outcome.controls.passed
    assert [r["event"] for r in log] == ["start", "round", "round", "end"]
    first, second = log[1], log[2]
    assert first["outcome"] == "not_accepted"
    assert {f["code"] for f in first["static_report"]["hard_failures"]} == {"no_route"}
    assert first["verdict"]["verdict"] == "revise"
    assert second["outcome"] == "accepted" and second["controls"]["passed"]
    for record in (first, second):
        assert len(record["designer"]["prompt_hash"]) == 16 and record["judge"]["reply"]
    # The second designer call saw the first static report and the judge's revision request.
    second_prompt = script.prompts("design")[1]
    assert '"no_route"' in second_prompt and '"verdict":"revise"' in second_prompt
    assert '"verdict":"not_run"' in script.prompts("design")[0]
    # The judge sees only the candidate and its static report: no catalog, no designer prose.
    for judge_prompt in script.prompts("judge"):
        assert "crafting_recipes" not in judge_prompt and "logs give planks" not in judge_prompt
    # The accepted suite is written where --suite PATH and experiment specs can use it.
    names = sorted(p.name for p in files)
    assert names == ["D01.sheet.txt", "D01.yaml", "D01.zip", "controls.json", "static_report.json"]
    written = load_manifest_file(tmp_path / "D01.yaml")
    assert (tmp_path / "D01.zip").read_bytes() == compile_manifest(
        written, vanilla_ruleset()
    ).zip_bytes()
    assert resolve_rules(str(tmp_path / "D01.yaml")).name == "D01"
    assert "planks" in (tmp_path / "D01.sheet.txt").read_text()


def test_a_designer_that_never_converges_stops_at_the_round_limit(tmp_path: Path) -> None:
    script = Script([design(UNSOLVABLE)], [verdict("revise", unsolvable=TWO)])
    outcome, files, log = run(make_kind("mirror", TWO), script, tmp_path, rounds=2)
    assert not outcome.accepted
    assert "no candidate was accepted within 2 round(s)" in outcome.message
    # The closing message says why the last round failed, not only its outcome code.
    assert "judge verdict revise" in outcome.message
    assert "judge deems iron_armor, diamond unsolvable" in outcome.message
    assert "first hard failure: no_route: iron_armor has no route" in outcome.message
    assert [r["event"] for r in log] == ["start", "round", "round", "end"]
    assert log[-1]["accepted"] is False and log[-1]["usage"]["calls"] == 4
    assert files == [] and not (tmp_path / "D01.yaml").exists()


def test_a_rerun_into_the_folder_keeps_the_accepted_design_its_log_and_its_controls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later run into a folder holding an accepted suite appends to the log, and when it
    accepts nothing it leaves that suite's files alone: its own failed controls go to
    controls_failed.json, never over the accepted suite's controls.json."""
    kind = make_kind("mirror", TWO)

    def controls(passed: bool) -> None:
        summary = {"passed": passed, "rows": 1, "rows_passed": int(passed), "failures": []}
        result = ControlsResult(
            passed, [] if passed else ["plains-1 D01 diamond: no route"], summary
        )
        monkeypatch.setattr(kind, "controls", lambda cand: result)

    controls(True)
    outcome, _files, _log = run(kind, Script([design(GOOD)], [verdict("accept")]), tmp_path, 1)
    assert outcome.accepted
    kept = {
        n: (tmp_path / n).read_bytes() for n in ("D01.yaml", "controls.json", "static_report.json")
    }
    controls(False)
    outcome, files, log = run(kind, Script([design(GOOD)], [verdict("accept")]), tmp_path, 1)
    assert not outcome.accepted and [p.name for p in files] == ["controls_failed.json"]
    assert {n: (tmp_path / n).read_bytes() for n in kept} == kept
    assert not json.loads((tmp_path / "controls_failed.json").read_text())["passed"]
    assert [r["event"] for r in log] == ["start", "round", "end", "start", "round", "end"]
    assert [r["outcome"] for r in log if r["event"] == "round"] == ["accepted", "controls_failed"]
    # A run that accepts again replaces the suite and clears the stale failure.
    controls(True)
    outcome, files, log = run(kind, Script([design(GOOD)], [verdict("accept")]), tmp_path, 1)
    assert outcome.accepted and not (tmp_path / "controls_failed.json").exists()
    assert [r["event"] for r in log].count("start") == 3
    assert not list(tmp_path.glob(".*.partial"))


def test_a_killed_runs_last_line_does_not_spoil_the_next_runs_log(tmp_path: Path) -> None:
    (tmp_path / "design_log.jsonl").write_text('{"event": "start"}\n{"event": "ro', "utf-8")
    DesignLog(tmp_path / "design_log.jsonl").write({"event": "start", "kind": "mirror"})
    lines = (tmp_path / "design_log.jsonl").read_text().splitlines()
    assert lines[1] == '{"event": "ro' and json.loads(lines[2])["kind"] == "mirror"


def test_the_log_counts_calls_answered_from_the_cache_apart(tmp_path: Path) -> None:
    """A second design run into the same folder is answered from its llm_cache.sqlite and
    pays nothing; its log said the same calls and cost as the first, as if paid again."""
    from mirrorcraft.llm.cache import CachedClient, ResponseCache

    kind = make_kind("mirror", TWO)
    logs = []
    with ResponseCache(tmp_path / "llm_cache.sqlite") as cache:
        for out in (tmp_path / "a", tmp_path / "b"):
            script = Script([design(UNSOLVABLE)], [verdict("revise", unsolvable=TWO)])
            client = CachedClient(MockLLM(script), cache, scope="design-mirror-0")
            settings = DesignSettings(rounds=2)
            asyncio.run(run_llm(kind, client, settings, out, initial_spec(kind, None, 0)))
            text = (out / "design_log.jsonl").read_text().splitlines()[-1]
            logs.append(json.loads(text)["usage"])
            assert len(script.calls) == (4 if out.name == "a" else 0)
    assert logs[0]["calls"] == logs[1]["calls"] == 4
    assert logs[0]["cached_calls"] == 0 and logs[1]["cached_calls"] == 4
    assert logs[0]["estimated_calls"] == logs[1]["estimated_calls"] == 0


def test_malformed_replies_are_repaired_once(tmp_path: Path) -> None:
    script = Script(
        ["Here is my design, as requested!", "```json\n" + design(GOOD) + "\n```"],
        ['{"verdict": "accept"', "I accept."],
    )
    outcome, _files, log = run(make_kind("mirror", TWO), script, tmp_path, rounds=1)
    assert not outcome.accepted
    rnd = log[1]
    assert rnd["designer"]["repair"]["problem"] == "the reply holds no JSON object"
    assert "problem" not in rnd["designer"]  # the repair worked
    assert rnd["static_report"]["passed"]
    assert rnd["judge"]["repair"] and rnd["judge"]["problem"]
    assert rnd["verdict"]["verdict"] == "not_run" and rnd["reasons"] == ["no usable judge verdict"]
    assert [p for p, _m in script.calls] == ["design", "design_repair", "judge", "judge_repair"]


def test_a_reply_that_stays_unusable_costs_the_round_but_not_the_run(tmp_path: Path) -> None:
    no_spec = json.dumps(
        {"schema_version": "1.0", "kind": "mirror", "design_summary": "x", "resolved_feedback": []}
    )
    bad_spec = design({"id": "D01", "name": "x", "changes": [{"op": "teleport", "sheet": "x"}]})
    script = Script([no_spec, bad_spec, design(UNSOLVABLE)], [verdict("revise", unsolvable=TWO)])
    outcome, _files, log = run(make_kind("mirror", TWO), script, tmp_path, rounds=2)
    assert not outcome.accepted
    assert log[1]["outcome"] == "designer_reply_unusable"
    assert "unknown operator 'teleport'" in log[1]["designer"]["problem"]
    # The next designer call is told the judge did not run, and why.
    assert "could not be used" in script.prompts("design")[1]
    assert log[2]["outcome"] == "not_accepted"


def test_the_judge_cannot_overrule_the_compiler_or_skip_a_task(tmp_path: Path) -> None:
    outcome, _f, log = run(
        make_kind("mirror", TWO),
        Script([design(UNSOLVABLE)], [verdict("accept")]),
        tmp_path / "a",
        1,
    )
    assert not outcome.accepted and log[1]["reasons"] == ["static report: 20 hard failure(s)"]
    outcome, _f, log = run(
        make_kind("mirror", TWO),
        Script([design(GOOD)], [verdict("accept", unsolvable=["diamond"])]),
        tmp_path / "b",
        1,
    )
    assert not outcome.accepted and log[1]["reasons"] == ["judge deems diamond unsolvable"]


def test_an_endpoint_failure_ends_the_run_with_a_message(tmp_path: Path) -> None:
    script = Script([design(GOOD)], [verdict("accept")])
    outcome, _f, log = run(
        make_kind("mirror", TWO), script, tmp_path, faults=FaultPlan(at={1: "timeout"})
    )
    assert not outcome.accepted and outcome.message.startswith("the model endpoint failed")
    assert log[-1]["event"] == "end" and log[-1]["accepted"] is False


def test_a_biome_design_round_trip_generates_a_world_with_every_resource(tmp_path: Path) -> None:
    tasks = ("iron_armor", "diamond", "enchantment")
    kind = make_kind("biome", tasks, base="plains", name="plains_hills", worlds=1)
    assert isinstance(kind, BiomeKind)
    spec = biome_spec("plains").model_dump(mode="json")
    spec.update(biome="plains_hills", spec_version="1.0-hills")
    spec["terrain"] = {**spec["terrain"], "relief": 7.0, "relief_scale": 20.0}
    script = Script([design(spec, kind="biome")], [verdict("accept", tasks=tasks)])
    outcome, files, log = run(kind, script, tmp_path)
    assert outcome.accepted, outcome.message
    assert {p.name for p in files} >= {"plains_hills.yaml", "plains_hills.worlds.json"}
    assert log[1]["controls"]["passed"]
    accepted = load_spec(tmp_path / "plains_hills.yaml")
    assert accepted.terrain.relief == 7.0
    world = load_custom_world("plains_hills-check", accepted, seed=4242).world
    names = {world.palette.names[i] for i in np.unique(world.grid).tolist()}
    assert any(n.endswith("_log") for n in names)
    for block in ("stone", "coal_ore", "sugar_cane", "water", "obsidian"):
        assert block in names
    for ore in ("iron_ore", "diamond_ore", "lapis_ore"):
        assert ore in names or f"deepslate_{ore}" in names
    assert "cow" in {m.type for m in world.mobs}


def test_reply_contracts_are_validated_with_clear_problems() -> None:
    from mirrorcraft.design.contracts import read_designer, read_judge

    def no_problem(spec: dict[str, Any]) -> str:
        return ""

    reply, problem = read_designer(design(GOOD).replace('"1.0"', "1", 1), "mirror", no_problem)
    assert reply is not None and reply.schema_version == "1.0" and problem == ""
    assert read_designer(design(GOOD), "biome", no_problem)[1] == "kind must be 'biome'"
    assert (
        "'schema_version': Field required" in read_designer('{"kind": 1}', "mirror", no_problem)[1]
    )
    notes = json.loads(design(GOOD))
    notes["resolved_feedback"] = [{"code": "no_route", "fixed": True}]
    reply, _ = read_designer(json.dumps(notes), "mirror", no_problem)
    assert reply is not None and reply.resolved_feedback == ('{"code":"no_route","fixed":true}',)
    judged, problem = read_judge(verdict("accept", tasks=["diamond"]), "mirror", TWO)
    assert judged is None and "missing ['iron_armor']" in problem
    bad = json.loads(verdict("accept"))
    bad["confidence"] = 3
    assert "confidence" in read_judge(json.dumps(bad), "mirror", TWO)[1]
