"""The judge screens rule-suite candidates for diversity against the accepted suites (3.2)."""

from __future__ import annotations

import json
from pathlib import Path

from mirrorcraft.datapack.suites import find_suite
from mirrorcraft.design.diversity import SIMILAR
from mirrorcraft.design.mirror_report import mirror_report
from mirrorcraft.design.run import make_kind
from tests.test_design_loop import GOOD, TWO, Script, design, run, verdict

ALL = ("iron_armor", "diamond", "enchantment")


def _copy(suite: str, new_id: str, keep: slice = slice(None)) -> dict[str, object]:
    manifest = find_suite(suite)
    assert manifest is not None
    doc = manifest.model_dump(mode="json", exclude_none=True)
    doc["id"] = new_id
    doc["changes"] = doc["changes"][keep]
    return doc


def test_a_copy_of_an_accepted_suite_is_a_duplicate() -> None:
    found = mirror_report(_copy("M04", "X04"), ALL)
    section = found.report.sections["diversity"]
    assert section["accepted"][0]["suite"] == "M04" and section["accepted"][0]["overlap"] == 1.0
    assert {r["suite"] for r in section["accepted"]} == {f"M0{i}" for i in range(1, 7)}
    codes = {f.code for f in found.report.hard_failures}
    assert "duplicate_suite" in codes and not found.report.ok


def test_partial_overlap_is_measured_and_flagged_from_the_threshold() -> None:
    # M01's stick and raw-iron changes only: 3 of M01's 13 transitions
    few = mirror_report(_copy("M01", "X01", slice(1, 3)), ALL).report
    closest = few.sections["diversity"]["accepted"][0]
    assert closest["suite"] == "M01" and 0 < closest["overlap"] < SIMILAR
    assert not any(f.code in ("duplicate_suite", "similar_suite") for f in few.warnings)
    assert not any(f.code == "duplicate_suite" for f in few.hard_failures)
    # M04 without its cow: 8 of 9 transitions shared
    most = mirror_report(_copy("M04", "X05", slice(0, 4)), ALL).report
    assert most.sections["diversity"]["accepted"][0]["overlap"] >= SIMILAR
    assert "similar_suite" in {f.code for f in most.warnings}


def test_a_packaged_suite_is_not_compared_with_itself() -> None:
    manifest = find_suite("M03")
    assert manifest is not None
    found = mirror_report(manifest, ALL, allow_packaged=True)
    assert "M03" not in {r["suite"] for r in found.report.sections["diversity"]["accepted"]}


def test_the_judge_sees_the_accepted_suites_and_can_refuse_a_repeat(tmp_path: Path) -> None:
    repeat = json.loads(verdict("accept"))
    repeat["diversity"] = {"closest_suite": "M02", "distinct": False, "note": "M02 again"}
    distinct = json.loads(verdict("accept"))
    distinct["diversity"] = {"closest_suite": "M02", "distinct": True, "note": "adds a form"}
    script = Script([design(GOOD)], [json.dumps(repeat), json.dumps(distinct)])
    outcome, _files, log = run(make_kind("mirror", TWO), script, tmp_path, rounds=2)
    judge_prompt = script.prompts("judge")[0]
    assert "ACCEPTED SUITES" in judge_prompt and "M05 (Route substitution" in judge_prompt
    assert '"diversity"' in judge_prompt  # the static report's section
    assert "diversity" in judge_prompt.split("ACCEPTED SUITES")[0].lower()  # the instruction
    assert log[1]["outcome"] == "not_accepted"
    assert "judge finds it not distinct from M02" in log[1]["reasons"]
    assert outcome.accepted and outcome.rounds_used == 2
