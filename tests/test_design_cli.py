"""``mirrorcraft design``: static-only runs, a run against a local fake endpoint, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.cli import main
from mirrorcraft.design.run import make_kind
from mirrorcraft.llm.fakeserver import Fail, FakeOpenAIServer, Hang, Reply
from mirrorcraft.world.registry import load_custom_world
from mirrorcraft.world.spec import load_spec
from mirrorcraft.worldgen import compile_biome_pack, validate_zip

TWO = ("iron_armor", "diamond")


def log_of(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "design_log.jsonl").read_text().splitlines()]


def test_static_only_mirror_is_deterministic_and_accepts_a_suite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mirror"
    args = ["design", "mirror", "--tasks", ",".join(TWO), "--static-only", "--seed", "0"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "design accepted" in printed and "controls passed" in printed
    assert {p.name for p in out.iterdir()} >= {"D01.yaml", "D01.zip", "D01.sheet.txt"}
    log = log_of(out)
    attempts = [r for r in log if r["event"] == "attempt"]
    assert attempts[-1]["outcome"] == "accepted" and log[-1]["accepted"]
    assert {a["outcome"] for a in attempts[:-1]} <= {"rejected", "controls_failed"}
    # Same seed, same proposals and the same audit, attempt by attempt.
    kind = make_kind("mirror", TWO)
    sampler = kind.sampler(0)
    for record in attempts:
        spec = sampler.propose(record["attempt"])
        assert spec == record["spec"]
        assert kind.evaluate(spec, fail_fast=True).report.to_json() == record["static_report"]
    assert kind.sampler(1).propose(1) != attempts[0]["spec"]


def test_static_only_biome_writes_a_spec_that_generates_a_complete_world(tmp_path: Path) -> None:
    out = tmp_path / "biome"
    code = main(
        [
            "design",
            "biome",
            "--base",
            "savanna",
            "--static-only",
            "--worlds",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    spec = load_spec(out / "savanna_variant.yaml")
    summary = json.loads((out / "savanna_variant.worlds.json").read_text())
    assert (
        summary["base"] == "savanna" and summary["worlds"][0]["resources"]["diamond"]["available"]
    )
    world = load_custom_world("savanna_variant-1", spec, seed=77).world
    assert "cow" in {m.type for m in world.mobs}
    # The accepted spec also comes as a 1.19 worldgen datapack that passes the validator,
    # and the static report says so.
    pack = (out / "savanna_variant.worldgen.zip").read_bytes()
    assert validate_zip(pack).ok
    assert pack == compile_biome_pack(spec).zip_bytes()
    worldgen = json.loads((out / "static_report.json").read_text())["worldgen"]
    assert worldgen["errors"] == 0 and worldgen["world_preset"] == "mirrorcraft:savanna_variant"


DESIGN = {
    "schema_version": "1.0",
    "kind": "mirror",
    "design_summary": "Wood comes as planks; iron ore carries an ingot.",
    "resolved_feedback": [],
    "spec": {
        "schema_version": 1,
        "kind": "mirror",
        "id": "D07",
        "name": "Early byproducts",
        "selected_tasks": ["iron_armor"],
        "changes": [
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
        ],
    },
}
VERDICT = {
    "schema_version": 1,
    "kind": "mirror",
    "verdict": "accept",
    "confidence": 0.7,
    "summary": "Both changes sit on the iron route and show in the drops.",
    "hard_failures": [],
    "warnings": [],
    "task_assessments": [
        {"task": "iron_armor", "solvable": True, "route": ["planks", "iron"], "principal_risk": ""}
    ],
    "change_assessments": [{"change": 0, "relevant": True}],
    "revision_instructions": [],
}


def _llm_args(server: FakeOpenAIServer, out: Path) -> list[str]:
    return [
        "design",
        "mirror",
        "--id",
        "D07",
        "--tasks",
        "iron_armor",
        "--model",
        "fake-model",
        "--base-url",
        server.base_url,
        "--rounds",
        "1",
        "--out",
        str(out),
    ]


def test_an_llm_design_through_an_openai_compatible_endpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "llm"
    with FakeOpenAIServer() as server:
        server.script(Reply(json.dumps(DESIGN)), Reply(json.dumps(VERDICT)))
        assert main(_llm_args(server, out)) == 0
        assert server.requests == 2
        assert "wrote" in capsys.readouterr().out and (out / "D07.zip").exists()
        # A rerun replays the cached replies: nothing is asked (or paid) twice.
        assert main(_llm_args(server, out)) == 0
        assert server.requests == 2
    rounds = [r for r in log_of(out) if r["event"] == "round"]
    assert rounds[0]["outcome"] == "accepted" and rounds[0]["verdict"]["verdict"] == "accept"


def test_without_an_accepted_candidate_the_exit_is_non_zero_and_the_log_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "nothing"
    with FakeOpenAIServer(default=Reply("I would rather chat about redstone.")) as server:
        assert main(_llm_args(server, out)) == 1
    printed = capsys.readouterr().out
    assert "design not accepted" in printed and "design_log.jsonl" in printed
    assert "the designer's reply could not be used: the reply holds no JSON object" in printed
    assert [r["event"] for r in log_of(out)] == ["start", "round", "end"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mirror", "--tasks", "flying", "--static-only"], "unknown or missing task"),
        (["mirror", "--tasks", "diamond"], "give --model"),
        (["biome", "--base", "desert", "--static-only"], "unknown base biome"),
        (["mirror", "--model", "m"], "has no endpoint"),
        (
            ["mirror", "--model", "m", "--base-url", "http://x/v1", "--spec", "nope.yaml"],
            "cannot read",
        ),
        (["mirror", "--static-only", "--rounds", "0"], "at least 1"),
        (["mirror", "--static-only", "--spec", "mine.yaml"], "samples its own proposals"),
        # An id no candidate may carry would fail every round (paid calls) or attempt.
        (["mirror", "--static-only", "--id", "M01"], "already taken by a packaged rule set"),
        (["mirror", "--static-only", "--id", "ir"], "3+ characters"),
        (["mirror", "--static-only", "--id", "../up"], "use 1-32 letters"),
        # The name is the folder the spec is written to: not a way out of --out.
        (["biome", "--static-only", "--name", "../escape"], "use 1-40 lowercase"),
        (["biome", "--static-only", "--name", "Plains Two"], "use 1-40 lowercase"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["design", *args, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_an_unwritable_output_folder_is_one_clear_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder", encoding="utf-8")
    out = blocker / "packs"
    assert main(["server", "worldgen", "--biome", "plains", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and str(blocker) in err


@pytest.mark.parametrize(
    ("fault", "fragment"),
    [(Fail(401, "bad key"), "HTTP 401"), (Fail(404), "HTTP 404"), (Fail(400), "HTTP 400")],
)
def test_an_endpoint_that_refuses_the_setup_is_one_line_and_the_log_is_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fault: Fail, fragment: str
) -> None:
    out = tmp_path / "refused"
    with FakeOpenAIServer(default=fault) as server:
        assert main(_llm_args(server, out)) == 2
        assert server.requests == 1  # a refusal is not retried, nor asked again next round
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err and err.count("\n") == 1
    assert "design_log.jsonl" in err
    log = log_of(out)
    assert [r["event"] for r in log] == ["start", "end"]
    assert log[-1]["accepted"] is False and fragment in log[-1]["message"]


def test_timeout_limits_each_design_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--timeout reaches the client: a call that hangs is cut off after it and asked again
    (without it, the client's 60 s default would hold the hanging call for 30 s)."""
    out = tmp_path / "slow"
    with FakeOpenAIServer(default=Reply("no design today")) as server:
        server.script(Hang(30.0))
        assert main([*_llm_args(server, out), "--timeout", "0.5"]) == 1
        assert server.requests == 3  # the cut-off call, its retry, the repair call
    assert "the designer's reply could not be used" in capsys.readouterr().out
    assert main([*_llm_args(server, out), "--timeout", "0"]) == 2
    assert "timeout_s" in capsys.readouterr().err


def test_a_folder_holding_another_design_is_refused_before_its_reports_are_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README once designed a suite and a biome into one --out: the biome's
    static_report.json and controls.json replaced the suite's, silently."""
    from mirrorcraft.design.run import check_folder

    out = tmp_path / "designs"
    out.mkdir()
    held = {"D01.yaml": "id: D01\n", "static_report.json": '{"kind": "mirror"}\n'}
    held["controls.json"] = '{"passed": true}\n'
    for name, text in held.items():
        (out / name).write_text(text)
    args = ["design", "biome", "--base", "plains", "--static-only", "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "D01.yaml" in err and "another --out" in err and err.count("\n") == 1
    assert {p.name: p.read_text() for p in out.iterdir()} == held
    check_folder(make_kind("mirror", TWO), out)  # the same design again is welcome
    check_folder(make_kind("biome", TWO), tmp_path / "fresh")
