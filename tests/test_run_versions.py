"""Which stored episodes of another version of a spec still count (``runner.versions``), judged
without running anything: the CLI tests in test_run_resume.py cover the runs themselves."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mirrorcraft.runner.records import EpisodeRecord
from mirrorcraft.runner.spec import EpisodeCondition, ExperimentSpec, expand, parse_spec
from mirrorcraft.runner.versions import (
    CHANGED,
    REMOVED,
    SAME,
    VERSIONS_KEY,
    Lineage,
    ProseOnly,
    with_version,
)

BASE: dict[str, Any] = {
    "name": "v",
    "worlds": ["plains-1"],
    "rules": ["vanilla", "M04"],
    "tasks": ["diamond"],
    "agents": [{"name": "react", "label": "agent"}],
    "models": [{"name": "mock-planner", "client": {"timeout_s": 5}}],
    "budget": 10,
    "repetitions": 2,
}


def _record(c: EpisodeCondition, spec_hash: str) -> EpisodeRecord:
    return EpisodeRecord(
        c.episode_id, "v", c.world, "plains", c.rules, c.task, c.agent, c.model, c.disclosure,
        c.budget, c.repetition, c.seed, 0, False, {}, "budget", 0, [], [],
        spec_hash=spec_hash,
    )  # fmt: skip


def _folder(spec: ExperimentSpec, extra: dict[str, Any] | None = None) -> Any:
    meta = {"spec": spec.public_dump(), "spec_hash": spec.hash, **(extra or {})}
    return meta.get


def _judge(now: dict[str, Any], ran: ExperimentSpec, extra: dict[str, Any] | None = None) -> Any:
    spec = parse_spec(now, "now")
    return Lineage.of(spec, expand(spec), _folder(ran, extra))


def test_prose_and_growth_keep_episodes_and_what_they_measure_does_not() -> None:
    ran = parse_spec(BASE, "ran")
    records = [_record(c, ran.hash) for c in expand(ran)]
    grown = {**BASE, "description": "more", "checkpoints": [5], "repetitions": 3}
    grown |= {"worlds": ["taiga-1", "plains-1"]}  # reordered too
    assert {_judge(grown, ran).verdict(r) for r in records} == {SAME}
    # a transport setting is how calls are made, not what they return
    tuned = {**BASE, "models": [{"name": "mock-planner", "client": {"timeout_s": 50}}]}
    assert {_judge(tuned, ran).verdict(r) for r in records} == {SAME}
    # ... and so is the variable the key is read from
    keyed = {**BASE, "models": [{"name": "mock-planner", "api_key_env": "OTHER_KEY"}]}
    assert {_judge(keyed, ran).verdict(r) for r in records} == {SAME}

    effort = {"name": "mock-planner", "client": {"reasoning_effort": "high"}}
    for changed in (
        {"models": [effort]},
        {"agents": [{"name": "reflexion", "label": "agent"}]},
        {"budget": 11},
        {"seed": 3},
        {"call_budget": 7},
        {"backend": "mineflayer"},
    ):
        assert {_judge({**BASE, **changed}, ran).verdict(r) for r in records} == {CHANGED}, changed

    fewer = {**BASE, "repetitions": 1, "rules": ["vanilla"]}
    verdicts = sorted(_judge(fewer, ran).verdict(r) for r in records)
    assert verdicts == [REMOVED, REMOVED, REMOVED, SAME]


def test_a_version_the_folder_does_not_know_is_a_change_and_garbage_is_ignored() -> None:
    ran = parse_spec(BASE, "ran")
    records = [_record(c, "0123456789abcdef") for c in expand(ran)]  # not the last run's
    judge = _judge({**BASE, "description": "x"}, ran, {VERSIONS_KEY: ["not", "a", "map"]})
    assert {judge.verdict(r) for r in records} == {CHANGED}
    # ... but kept in spec_versions, an older version is known
    older = parse_spec({**BASE, "description": "older"}, "older")
    known = {VERSIONS_KEY: {older.hash: older.public_dump(), "x": 3}}
    records = [replace(r, spec_hash=older.hash) for r in records]
    assert {_judge(BASE, ran, known).verdict(r) for r in records} == {SAME}
    # a budget left behind by an earlier --allow-changed-spec is not this run's change
    moved = [replace(r, episode_id="other", spec_hash=older.hash) for r in records]
    assert {_judge(BASE, ran, known).verdict(r) for r in moved} == {REMOVED}
    assert {_judge(BASE, ran).verdict(replace(r, spec_hash=ran.hash)) for r in moved} == {CHANGED}


def test_spec_versions_accumulate_and_accumulation_specs_keep_only_prose_edits() -> None:
    a, b = parse_spec(BASE, "a"), parse_spec({**BASE, "repetitions": 3}, "b")
    versions = with_version(_folder(a), b.hash, b.public_dump())
    assert set(versions) == {a.hash, b.hash}
    doc = {**BASE, "description": "first"}
    record = _record(expand(a)[0], parse_spec(doc, "d").hash)
    meta = _folder(parse_spec(doc, "d"))
    reworded = parse_spec({**doc, "description": "second"}, "r").public_dump()
    grown = parse_spec({**doc, "repetitions": 3}, "g").public_dump()
    assert ProseOnly.of(reworded, meta).verdict(record) == SAME
    assert ProseOnly.of(grown, meta).verdict(record) == CHANGED
    # where the key is kept and the endpoint's address are how a model is reached
    reached = {"name": "mock-planner", "api_key_env": "K2", "base_url": "http://h/v1"}
    moved = parse_spec({**doc, "models": [reached]}, "m").public_dump()
    assert ProseOnly.of(moved, meta).verdict(record) == SAME
