"""Builders of synthetic episode records for the analysis and report tests (plus their own checks)."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.runner.records import EncounterRecord, EpisodeRecord, StepRecord

SCHEMA = """
CREATE TABLE episodes (episode_id TEXT PRIMARY KEY, status TEXT NOT NULL, record TEXT NOT NULL);
CREATE TABLE steps (episode_id TEXT NOT NULL, step INTEGER NOT NULL, record TEXT NOT NULL,
                    PRIMARY KEY (episode_id, step));
"""
SUITES = ("M01", "M02", "M03", "M04", "M05", "M06")


def make_record(
    *,
    world: str = "plains-1",
    rules: str = "vanilla",
    task: str = "diamond",
    agent: str = "react",
    model: str = "m1",
    disclosure: str = "hidden",
    budget: int = 50,
    repetition: int = 0,
    score: int = 0,
    trace: Sequence[int] | None = None,
    signatures: Sequence[Sequence[str]] | None = None,
    encounters: Iterable[tuple[int, str]] = (),
    milestones: dict[str, int] | None = None,
    cost: float | None = 0.01,
    biome: str | None = None,
    episode_id: str | None = None,
) -> EpisodeRecord:
    """One episode; the trace defaults to the final score reached on the last action."""
    score_trace = list(trace) if trace is not None else [score]
    final = score_trace[-1] if score_trace else score
    sigs = (
        [list(s) for s in signatures] if signatures is not None else [["wait"]] * len(score_trace)
    )
    if milestones is None:
        milestones = {}
        for m in get_task(task).milestones:
            step = next((i for i, v in enumerate(score_trace, 1) if v >= m.value), None)
            if step is not None:
                milestones[m.advancement] = step
    ident = (
        episode_id or f"{world}/{rules}/{task}/{agent}/{disclosure}/{model}/{budget}/r{repetition}"
    )
    return EpisodeRecord(
        episode_id=ident,
        experiment="test",
        world=world,
        biome=biome or world.split("-")[0],
        rules=rules,
        task=task,
        agent=agent,
        model=model,
        disclosure=disclosure,
        budget=budget,
        repetition=repetition,
        seed=repetition,
        score=final,
        success=final == 100,
        milestones=milestones,
        termination="success" if final == 100 else "budget",
        actions_used=len(score_trace),
        score_trace=score_trace,
        signatures=sigs,
        encounters=[EncounterRecord(step, rule, "craft", ["x"]) for step, rule in encounters],
        cost_usd=cost,
    )


def write_jsonl(path: Path, records: Iterable[EpisodeRecord]) -> Path:
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in records), encoding="utf-8")
    return path


def write_db(
    path: Path,
    records: Iterable[EpisodeRecord],
    steps: dict[str, list[StepRecord]] | None = None,
    status: dict[str, str] | None = None,
) -> Path:
    con = sqlite3.connect(path)
    with con:
        con.executescript(SCHEMA)
        for r in records:
            con.execute(
                "INSERT INTO episodes VALUES (?, ?, ?)",
                (r.episode_id, (status or {}).get(r.episode_id, "ok"), json.dumps(r.to_json())),
            )
        for episode_id, rows in (steps or {}).items():
            for s in rows:
                con.execute(
                    "INSERT INTO steps VALUES (?, ?, ?)",
                    (episode_id, s.step, json.dumps(s.to_json())),
                )
    con.close()
    return path


def table4_records() -> list[EpisodeRecord]:
    """ReAct episodes whose per-suite SRs are those of the paper's Table 4 (180 per cell)."""
    vanilla = 115
    hidden = {"M01": 67, "M02": 121, "M03": 121, "M04": 40, "M05": 106, "M06": 117}
    disclosed = {"M01": 77, "M02": 126, "M03": 132, "M04": 57, "M05": 116, "M06": 124}
    cells: list[tuple[str, str, int]] = [("vanilla", "hidden", vanilla)]
    cells += [(s, "hidden", n) for s, n in hidden.items()]
    cells += [(s, "disclosed", n) for s, n in disclosed.items()]
    out: list[EpisodeRecord] = []
    for rules, disclosure, successes in cells:
        i = 0
        for model in ("gemini", "deepseek"):
            for task in ("iron_armor", "diamond", "enchantment"):
                budget = 75 if task == "enchantment" else 50
                for w in range(10):
                    for rep in range(3):
                        score = 100 if i < successes else 35
                        i += 1
                        out.append(
                            make_record(
                                world=f"{('plains', 'taiga', 'jungle', 'savanna', 'snowy_plains')[w % 5]}-{w}",
                                rules=rules,
                                task=task,
                                model=model,
                                disclosure=disclosure,
                                budget=budget,
                                repetition=rep,
                                score=score,
                                milestones={},
                            )
                        )
    return out


def _trajectory(rng: random.Random, task: str, budget: int, skill: float) -> list[int]:
    values = [m.value for m in get_task(task).milestones]
    reached = sum(1 for _ in values if rng.random() < skill) if rng.random() < 0.9 else 0
    length = budget if reached < len(values) else rng.randint(len(values) * 3, budget)
    steps = sorted(rng.sample(range(1, length + 1), reached)) if reached else []
    trace, score, k = [], 0, 0
    for i in range(1, length + 1):
        while k < len(steps) and steps[k] == i:
            score = values[k]
            k += 1
        trace.append(score)
    return trace


SKILLS = ("mine", "craft_grid", "smelt", "explore", "place")


def synthetic_study(
    seed: int = 0,
    models: Sequence[str] = ("gemini", "deepseek"),
    agents: Sequence[str] = ("react", "reflexion", "xenon"),
    worlds: Sequence[str] = ("plains-1", "taiga-1", "savanna-2"),
    suites: Sequence[str] = SUITES,
    reps: int = 2,
    tasks: Sequence[str] = ("iron_armor", "diamond", "enchantment"),
    disclosed_agent: str | None = "react",
    budget_override: int | None = None,
) -> tuple[list[EpisodeRecord], dict[str, list[StepRecord]]]:
    """A small but complete study with traces, encounters and steps (deterministic)."""
    rng = random.Random(seed)
    records: list[EpisodeRecord] = []
    steps: dict[str, list[StepRecord]] = {}
    conditions = [("vanilla", "hidden")] + [(s, "hidden") for s in suites]
    for model in models:
        for agent in agents:
            conds = conditions + (
                [(s, "disclosed") for s in suites] if agent == disclosed_agent else []
            )
            for task in tasks:
                budget = budget_override or get_task(task).budget
                for world in worlds:
                    for rep in range(reps):
                        for rules, disclosure in conds:
                            skill = 0.85 if rules in ("vanilla", "M02", "M03") else 0.7
                            trace = _trajectory(rng, task, budget, skill)
                            sigs = [[rng.choice(SKILLS), rng.choice("ab")] for _ in trace]
                            enc: list[tuple[int, str]] = []
                            if rules != "vanilla" and trace:
                                for r in range(rng.randint(0, 3)):
                                    enc.append((rng.randint(1, len(trace)), f"{rules}/rule{r}"))
                            rec = make_record(
                                world=world,
                                rules=rules,
                                task=task,
                                agent=agent,
                                model=model,
                                disclosure=disclosure,
                                budget=budget,
                                repetition=rep,
                                trace=trace,
                                signatures=sigs,
                                encounters=enc,
                                cost=None if agent == "xenon" and model == "deepseek" else 0.02,
                            )
                            records.append(rec)
                            steps[rec.episode_id] = _steps(rec)
    return records, steps


def _steps(rec: EpisodeRecord) -> list[StepRecord]:
    out: list[StepRecord] = []
    inventory: dict[str, int] = {}
    reached = {v: k for k, v in rec.milestones.items()}
    for i, (score, sig) in enumerate(zip(rec.score_trace, rec.signatures, strict=True), 1):
        inventory = {**inventory, f"item_{i % 4}": inventory.get(f"item_{i % 4}", 0) + 1}
        action: dict[str, Any] = {"skill": sig[0], "args": {"block": sig[1]}}
        out.append(
            StepRecord(
                episode_id=rec.episode_id,
                step=i,
                action=action,
                thought=f"step {i}: try <b>{sig[0]}</b> & see </td></table><script>alert(1)</script>",
                result={"ok": i % 3 != 0, "reason": "" if i % 3 else "needs_tool", "message": "m"},
                inventory=inventory,
                position=[i, 64, -i],
                score=score,
                new_milestones=[reached[i]] if i in reached else [],
                encounter_rules=[e.rule for e in rec.encounters if e.step == i],
            )
        )
    return out


def test_table4_records_have_the_papers_cells() -> None:
    records = table4_records()
    assert len(records) == 13 * 180
    vanilla = [r for r in records if r.rules == "vanilla"]
    assert sum(r.success for r in vanilla) == 115


def test_synthetic_study_is_deterministic() -> None:
    a, _ = synthetic_study(seed=3, models=("m",), agents=("react",), worlds=("plains-1",), reps=1)
    b, _ = synthetic_study(seed=3, models=("m",), agents=("react",), worlds=("plains-1",), reps=1)
    assert [r.to_json() for r in a] == [r.to_json() for r in b]
