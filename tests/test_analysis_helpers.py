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


# Successes per (model, task) cell of 30 episodes (10 worlds x 3 repetitions) for ReAct, as
# (iron_armor, diamond, enchantment). The per-model totals are those of the paper's Table 10
# (their sums give Table 4); the split over tasks is one that the paper leaves open and that
# meets its text (Vanilla Iron Armor 90.0% pooled and 93.3% with DeepSeek; under M04 with
# DeepSeek on Iron Armor 13.3% hidden and 43.3% disclosed; under M05 Iron Armor 91.7% and
# Diamond 75.0% hidden; ReAct keeps 52%/23% (hidden) and 63%/42% (disclosed) of its Vanilla
# SR on Iron Armor and Diamond under M04 with Gemini/DeepSeek; Gemini's hidden Enchantment SR
# pooled over suites is 15.6%; DeepSeek's disclosed M02 Enchantment SR is 3.3%) and the
# Table 11 intervals (see docs/analysis.md, "Reproducing Table 11").
TABLE4_VANILLA = {"gemini": (26, 28, 6), "deepseek": (28, 25, 2)}
TABLE4_CELLS: dict[str, dict[str, dict[str, tuple[int, int, int]]]] = {
    "M01": {
        "hidden": {"gemini": (14, 11, 5), "deepseek": (26, 9, 2)},
        "disclosed": {"gemini": (20, 16, 5), "deepseek": (26, 9, 1)},
    },
    "M02": {
        "hidden": {"gemini": (30, 30, 8), "deepseek": (28, 23, 2)},
        "disclosed": {"gemini": (29, 28, 9), "deepseek": (30, 29, 1)},
    },
    "M03": {
        "hidden": {"gemini": (29, 28, 5), "deepseek": (30, 28, 1)},
        "disclosed": {"gemini": (29, 25, 12), "deepseek": (30, 30, 6)},
    },
    "M04": {
        "hidden": {"gemini": (14, 14, 0), "deepseek": (4, 8, 0)},
        "disclosed": {"gemini": (17, 17, 1), "deepseek": (13, 9, 0)},
    },
    "M05": {
        "hidden": {"gemini": (25, 22, 4), "deepseek": (30, 23, 2)},
        "disclosed": {"gemini": (30, 23, 6), "deepseek": (30, 25, 2)},
    },
    "M06": {
        "hidden": {"gemini": (26, 25, 6), "deepseek": (28, 28, 4)},
        "disclosed": {"gemini": (29, 27, 10), "deepseek": (30, 26, 2)},
    },
}
TABLE4_TASKS = ("iron_armor", "diamond", "enchantment")
_BELOW_100 = {"iron_armor": 35, "diamond": 25, "enchantment": 45}
TABLE4_WORLDS = tuple(
    f"{('plains', 'taiga', 'jungle', 'savanna', 'snowy_plains')[w % 5]}-{w}" for w in range(10)
)


def table4_records() -> list[EpisodeRecord]:
    """ReAct episodes whose cells give the paper's Tables 4 and 10 (30 per model and task)."""
    cells: list[tuple[str, str, dict[str, tuple[int, int, int]]]] = [
        ("vanilla", "hidden", TABLE4_VANILLA)
    ]
    for suite, by_disclosure in TABLE4_CELLS.items():
        for disclosure, counts in by_disclosure.items():
            cells.append((suite, disclosure, counts))
    out: list[EpisodeRecord] = []
    for rules, disclosure, counts in cells:
        for model, per_task in counts.items():
            for task, successes in zip(TABLE4_TASKS, per_task, strict=True):
                budget = 75 if task == "enchantment" else 50
                for slot in range(30):
                    world, rep = TABLE4_WORLDS[slot // 3], slot % 3
                    score = 100 if slot < successes else _BELOW_100[task]
                    out.append(
                        make_record(
                            world=world,
                            rules=rules,
                            task=task,
                            model=model,
                            disclosure=disclosure,
                            budget=budget,
                            repetition=rep,
                            score=score,
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
