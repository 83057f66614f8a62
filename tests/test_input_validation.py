"""Validation at every entry point, as a user meets it on the command line.

Budgets must be whole numbers from 1 to 100,000 and name a task or selector of the
experiment. Deeply nested JSON/YAML, integers longer than Python's 4,300-digit
limit and bytes that are not UTF-8 get one line naming the file and line (exit 2)
in every JSON/YAML input: play action lines and --inventory, rules craft, analyze
JSONL, datapack files, experiment specs and suite manifests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

DEEP = "[" * 5000 + "]" * 5000
LONG = "9" * 5000
SPEC = {
    "schema_version": 1,
    "name": "valid",
    "worlds": ["plains-1"],
    "rules": ["vanilla"],
    "tasks": ["diamond"],
    "agents": ["random"],
}
WAIT = json.dumps({"skill": "wait", "args": {}})


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        input=stdin,
    )


def refused(done: subprocess.CompletedProcess[str], *fragments: str, usage: bool = False) -> None:
    """Exit 2 and one error line (after argparse's usage lines when ``usage``)."""
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip()
    assert "Traceback" not in err, err
    if usage:
        assert err.startswith("usage:"), err
        err = err.splitlines()[-1]
    assert len(err.splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err


# -- budgets ------------------------------------------------------------------------------------


def accumulation_spec(
    tmp_path: Path, checkpoints: list[int] | None = None, eval_worlds: list[str] | None = None
) -> Path:
    """A small MineEvolve accumulation spec, written to ``acc.yaml``."""
    spec = tmp_path / "acc.yaml"
    doc = {
        "schema_version": 1,
        "kind": "accumulation",
        "name": "acc",
        "models": [{"name": "mock-planner"}],
        "variants": ["full"],
        "train": {"worlds": ["plains-1"], "tasks": ["group:wooden"], "episodes": 2},
        "checkpoints": checkpoints or [0, 2],
        "eval": {"worlds": eval_worlds or ["plains-1"], "tasks": ["obtain_crafting_table"]},
    }
    spec.write_text(yaml.safe_dump(doc))
    return spec


def run_spec(tmp_path: Path, **changes: object) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, **changes}))
    return cli("run", str(spec), "--out", str(tmp_path / "out"), "--limit", "0", "--no-report")


@pytest.mark.parametrize(
    ("budgets", "fragment"),
    [
        ({"diamond": -5}, "between 1 and 100000 actions, got -5"),
        ({"diamond": 0}, "between 1 and 100000 actions, got 0"),
        ({"diamond": 2.5}, "whole number of actions, got 2.5"),
        ({"diamond": "50"}, "whole number of actions, got '50'"),
        ({"diamonds": 50}, "unknown task 'diamonds'"),
        ({"iron_armor": 50}, "'iron_armor' covers none of this experiment's tasks"),
        ({"group:iron": 50}, "'group:iron' covers none of this experiment's tasks"),
    ],
)
def test_bad_spec_budgets_are_refused(
    tmp_path: Path, budgets: dict[str, object], fragment: str
) -> None:
    done = run_spec(tmp_path, budgets=budgets)
    refused(done, "spec.yaml", "field 'budgets'", fragment)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("budget", [0, -5, 100_001, 1.5])
def test_a_bad_single_budget_is_refused(tmp_path: Path, budget: object) -> None:
    refused(run_spec(tmp_path, budget=budget), "field 'budget'")


def test_selector_budget_keys_expand_and_task_ids_win(tmp_path: Path) -> None:
    from mirrorcraft.runner.spec import expand, parse_spec

    spec = parse_spec(
        {**SPEC, "tasks": ["progression"], "budgets": {"diamond": 7, "progression": 12}}, "s"
    )
    assert spec.budgets == {"iron_armor": 12, "diamond": 7, "enchantment": 12}
    assert {c.task: c.budget for c in expand(spec)} == spec.budgets
    done = run_spec(tmp_path, tasks=["progression"], budgets={"progression": 3})
    assert (
        done.returncode == 0 and "3 episodes, 0 already done" in done.stderr
    )  # --limit 0 runs nothing, which is no failure


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"worlds": ["plains-1", "plains-1"]}, "field 'worlds': 'plains-1' is listed twice"),
        ({"rules": ["vanilla", "M04", "vanilla"]}, "field 'rules': 'vanilla' is listed twice"),
        (
            {"rules": ["vanilla", "M04"], "disclosure": ["hidden", "hidden"]},
            "field 'disclosure': 'hidden' is listed twice",
        ),
        (
            {"models": [{"name": "m", "base_url": "http://a/v1"}, {"name": "m"}]},
            "field 'models': model 'm' is listed twice",
        ),
    ],
)
def test_an_entry_listed_twice_is_refused(
    tmp_path: Path, changes: dict[str, object], fragment: str
) -> None:
    """Each would expand into the same episode ids twice: counted and run twice, stored once
    (and, for two endpoints under one model name, one overwriting the other)."""
    refused(run_spec(tmp_path, **changes), "spec.yaml", fragment)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"disclosure": []}, "field 'disclosure'"),
        ({"models": []}, "field 'models'"),
        ({"rules": ["M04"], "mirror_worlds": []}, "the spec asks for no episodes"),
        ({"rules": ["vanilla", "M04"], "disclosure": ["disclosed"]}, "asks for no episodes"),
        ({"disclosure": ["disclosed"], "disclosed_agents": ["random"]}, "asks for no episodes"),
    ],
)
def test_a_spec_that_asks_for_no_episodes_is_refused(
    tmp_path: Path, changes: dict[str, object], fragment: str
) -> None:
    """Such a spec used to run nothing, print empty tables and exit 0."""
    refused(run_spec(tmp_path, **changes), "spec.yaml", fragment)
    assert not (tmp_path / "out").exists()


def test_disclosing_a_bare_datapack_is_refused(tmp_path: Path) -> None:
    """A datapack has no rule sheet: its disclosed episodes used to run with none, as hidden
    episodes recorded (and tabled as "w/rules") as disclosed."""
    pack = tmp_path / "pack"
    (pack / "data/minecraft/loot_tables/blocks").mkdir(parents=True)
    (pack / "pack.mcmeta").write_text('{"pack": {"pack_format": 10, "description": "t"}}')
    flint = {"rolls": 1, "entries": [{"type": "minecraft:item", "name": "minecraft:flint"}]}
    table = {"type": "minecraft:block", "pools": [flint]}
    (pack / "data/minecraft/loot_tables/blocks/gravel.json").write_text(json.dumps(table))
    told = {"agents": ["react"], "models": [{"name": "mock-planner"}]}
    both = {**told, "disclosure": ["hidden", "disclosed"]}
    done = run_spec(tmp_path, rules=["vanilla", str(pack)], **both)
    refused(done, repr(str(pack)), "no rule sheet to disclose")
    assert not (tmp_path / "out").exists()
    manifest = str(Path(__file__).resolve().parents[1] / "examples" / "my_suite.yaml")
    assert run_spec(tmp_path, rules=["vanilla", manifest], **both).returncode == 0
    assert run_spec(tmp_path, rules=["vanilla", str(pack)], **told).returncode == 0


@pytest.mark.parametrize(
    "command",
    [
        ["rules", "--pack", "{}", "info"],
        ["play", "--world", "plains-1", "--suite", "{}", "--task", "diamond", "--actions", "-"],
        ["controls", "--world", "plains-1", "--rules", "{}", "--skip-integrity"],
        ["controls", "--techtree", "--world", "plains-1", "--rules", "{}"],
    ],
)
def test_a_bad_manifest_is_one_line_wherever_a_rule_set_is_named(
    tmp_path: Path, command: list[str]
) -> None:
    """A manifest naming an unknown block, or no manifest at all, used to end these commands
    in a traceback (``suites check`` and ``run`` already said it in one line)."""
    bad = tmp_path / "bad.yaml"
    change = {"op": "block_drops", "targets": ["no_such_ore"], "mode": "add"}
    change |= {"drops": [{"item": "dirt"}], "sheet": "x"}
    bad.write_text(yaml.safe_dump({"id": "BAD", "name": "bad", "changes": [change]}))
    argv = [str(bad) if a == "{}" else a for a in command]
    refused(cli(*argv, stdin=WAIT), str(bad), "changes[0]: unknown block 'no_such_ore'")
    argv = [str(tmp_path / "gone") if a == "{}" else a for a in command]
    refused(cli(*argv, stdin=WAIT), "gone")


def test_the_no_episodes_check_agrees_with_expand() -> None:
    import itertools

    from mirrorcraft.runner.spec import ExperimentSpec, SpecError, expand, parse_spec

    grid = itertools.product(
        (["vanilla"], ["M04"], ["vanilla", "M04"]),
        (None, [], ["plains-1"]),
        (["hidden"], ["disclosed"], ["hidden", "disclosed"]),
        (["react"], ["random"]),
    )
    for rules, mirror_worlds, disclosure, told in grid:
        raw = {**SPEC, "worlds": ["plains-1", "taiga-1"], "rules": rules}
        raw |= {"disclosure": disclosure, "disclosed_agents": told}
        if mirror_worlds is not None:
            raw["mirror_worlds"] = mirror_worlds
        unchecked = ExperimentSpec.model_construct(
            **{k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        )
        try:
            parse_spec(raw, "s")
            accepted = True
        except SpecError as exc:
            assert "asks for no episodes" in str(exc), (raw, exc)
            accepted = False
        assert accepted == bool(expand(unchecked)), raw


@pytest.mark.parametrize(
    ("model", "fragment"),
    [
        ({"client": {"timeout_s": -1}}, "invalid client settings: timeout_s"),
        ({}, "has no endpoint"),
        ({"api_key_env": "MIRRORCRAFT_TEST_UNSET_KEY"}, "MIRRORCRAFT_TEST_UNSET_KEY is not set"),
    ],
)
def test_a_model_problem_names_the_model_once(
    tmp_path: Path, model: dict[str, object], fragment: str
) -> None:
    """It used to read "model 'm': model 'm': invalid client settings: ..."."""
    entry = {"name": "m", "base_url": "http://127.0.0.1:9/v1", **model}
    if not model:
        del entry["base_url"]
    done = run_spec(tmp_path, agents=["react"], models=[entry])
    refused(done, fragment)
    assert done.stderr.count("model 'm'") == 1, done.stderr


@pytest.mark.parametrize("option", ["--workers", "--concurrency"])
@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_workers_and_concurrency_must_be_positive(tmp_path: Path, option: str, value: str) -> None:
    """``--workers -2`` used to run anyway, announcing "running 1 with -2 worker(s)"."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    done = cli("run", str(spec), "--out", str(tmp_path / "out"), f"{option}={value}")
    refused(done, f"argument {option}", usage=True)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"checkpoints": [-5]}, "field 'checkpoints.0'"),
        ({"checkpoints": [10**9]}, "field 'checkpoints.0'"),
        ({"checkpoints": [150, 100]}, "checkpoints must be distinct and ascending"),
        ({"execution": {"max_attempts": True}}, "field 'execution.max_attempts'"),
        ({"execution": {"pause_after_faults": True}}, "field 'execution.pause_after_faults'"),
    ],
)
def test_horizon_checkpoints_and_attempt_counts_are_checked(
    tmp_path: Path, changes: dict[str, object], fragment: str
) -> None:
    """Negative or unreachable checkpoints used to be taken as they were, and ``true`` read
    as one attempt."""
    refused(run_spec(tmp_path, **changes), "spec.yaml", fragment)


def test_an_unknown_spec_kind_and_accumulation_messages_read_plainly(tmp_path: Path) -> None:
    """``kind: 5`` used to be read as a grid spec missing its worlds; accumulation specs'
    messages kept pydantic's "Value error, " prefix."""
    refused(run_spec(tmp_path, kind=5), "field 'kind': 5 is not a kind of spec")
    spec = accumulation_spec(tmp_path, checkpoints=[2, 0])
    done = cli("run", str(spec), "--out", str(tmp_path / "out"))
    refused(done, "checkpoints must be distinct, ascending and non-negative")
    assert "Value error" not in done.stderr


def test_a_results_folder_that_is_a_file_is_refused_plainly(tmp_path: Path) -> None:
    """It used to say only "File exists (...)"."""
    (tmp_path / "out").write_text("notes")
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    done = cli("run", str(spec), "--out", str(tmp_path / "out"), "--limit", "0")
    refused(done, "is a file; name a folder for the run's results")
    assert (tmp_path / "out").read_text() == "notes"


@pytest.mark.parametrize("rolls", ["0", "-1", "10001"])
def test_rules_loot_rolls_out_of_range_are_refused(rolls: str) -> None:
    """They used to be clamped silently to 1 or 10,000."""
    refused(
        cli("rules", "loot", "gravel", "--rolls", rolls), f"--rolls takes 1 to 10000, got {rolls}"
    )


def test_more_workers_than_four_per_cpu_are_refused(tmp_path: Path) -> None:
    """``--workers 100000`` used to start one process per pending episode."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    cpus = max(os.cpu_count() or 1, 1)
    done = cli("run", str(spec), "--out", str(tmp_path / "out"), "--workers", str(4 * cpus + 1))
    refused(done, f"at most {4 * cpus} on this machine")
    assert not (tmp_path / "out").exists()


def test_command_line_agents_are_validated_like_the_spec_s(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    out = str(tmp_path / "out")
    refused(cli("run", str(spec), "--out", out, "--agent", "random,random"), "listed twice")
    refused(cli("run", str(spec), "--out", out, "--agent", ","), "field 'agents'")
    assert not (tmp_path / "out").exists()


def test_an_accumulation_evaluation_world_listed_twice_is_refused(tmp_path: Path) -> None:
    spec = accumulation_spec(tmp_path, eval_worlds=["plains-1", "plains-1"])
    refused(cli("run", str(spec), "--out", str(tmp_path / "out")), "'plains-1' is listed twice")


@pytest.mark.parametrize("budget", ["0", "-5", "100001", "ten"])
def test_play_budget_must_be_a_positive_whole_number(budget: str) -> None:
    done = cli(
        "play", "--world", "plains-1", "--task", "diamond", f"--budget={budget}",
        "--actions", "-", stdin=WAIT,
    )  # fmt: skip
    refused(done, "argument --budget", usage=True)


def test_play_budget_one_means_one_action() -> None:
    done = cli(
        "play", "--world", "plains-1", "--task", "diamond", "--budget", "1", "--actions", "-",
        stdin=WAIT + "\n" + WAIT + "\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1  # the budget ran out after the first action


# -- JSON and YAML entry points -------------------------------------------------------------------

BAD_CONTENT: dict[str, tuple[bytes, str]] = {
    "nested": (DEEP.encode(), "nested deeper than 100 levels"),
    "long-int": (LONG.encode(), "more than 4300 digits"),
    "not-utf8": (b'"\xff\xfe"', "not UTF-8 text"),
}
Case = Callable[[Path, bytes], tuple[list[str], str]]
"""(tmp folder, bad value) -> (command line, the file:line the error must name)."""


def play_actions(tmp: Path, bad: bytes) -> tuple[list[str], str]:
    path = tmp / "actions.jsonl"
    path.write_bytes(WAIT.encode() + b"\n" + b'{"skill": "wait", "args": ' + bad + b"}\n")
    return ["play", "--world", "plains-1", "--task", "diamond", "--actions", str(path)], (
        f"{path}:2:"
    )


def analyze_jsonl(tmp: Path, bad: bytes) -> tuple[list[str], str]:
    path = tmp / "records.jsonl"
    path.write_bytes(b"\n\n" + b'{"episode_id": ' + bad + b"}\n")
    return ["analyze", str(path)], f"{path}:3:"


def export_jsonl(tmp: Path, bad: bytes) -> tuple[list[str], str]:
    cmd, where = analyze_jsonl(tmp, bad)
    return ["export", cmd[1], "--out", str(tmp / "x.csv"), "--format", "csv"], where


def datapack_file(tmp: Path, bad: bytes) -> tuple[list[str], str]:
    pack = tmp / "pack"
    (pack / "data/minecraft/recipes").mkdir(parents=True)
    (pack / "pack.mcmeta").write_text(json.dumps({"pack": {"pack_format": 10}}))
    (pack / "data/minecraft/recipes/bad.json").write_bytes(b'{\n"type":\n' + bad + b"}")
    return ["rules", "--pack", str(pack), "info"], "recipes/bad.json' : line 3:"


def spec_yaml(tmp: Path, bad: bytes) -> tuple[list[str], str]:
    path = tmp / "spec.yaml"
    path.write_bytes(yaml.safe_dump(SPEC).encode() + b"description: " + bad + b"\n")
    line = len(yaml.safe_dump(SPEC).splitlines()) + 1
    return ["run", str(path), "--out", str(tmp / "out"), "--no-report"], f"{path}:{line}:"


def manifest_yaml(tmp: Path, bad: bytes) -> tuple[list[str], str]:
    path = tmp / "suite.yaml"
    path.write_bytes(b"id: X01\nname: test\nchanges: " + bad + b"\n")
    return ["suites", "check", str(path)], f"{path}:3:"


CASES: dict[str, Case] = {
    "play-actions": play_actions,
    "analyze-jsonl": analyze_jsonl,
    "export-jsonl": export_jsonl,
    "datapack-json": datapack_file,
    "spec-yaml": spec_yaml,
    "manifest-yaml": manifest_yaml,
}


@pytest.mark.parametrize("content", sorted(BAD_CONTENT))
@pytest.mark.parametrize("entry", sorted(CASES))
def test_every_file_entry_point_names_file_and_line(
    tmp_path: Path, entry: str, content: str
) -> None:
    bad, problem = BAD_CONTENT[content]
    command, where = CASES[entry](tmp_path, bad)
    where = where.replace("' : line", "': line")
    refused(cli(*command), where, problem)


@pytest.mark.parametrize("content", ["nested", "long-int"])
def test_json_arguments_are_bounded_too(content: str) -> None:
    bad = BAD_CONTENT[content][0].decode()
    refused(
        cli(
            "play", "--world", "plains-1", "--task", "diamond", "--actions", "-",
            "--inventory", '{"oak_log": ' + bad + "}", stdin="",
        ),
        "--inventory",
        BAD_CONTENT[content][1],
    )  # fmt: skip
    refused(cli("rules", "craft", "[[" + bad + "]]"), "grid", BAD_CONTENT[content][1])


def test_a_syntax_error_in_an_action_line_is_still_an_attempted_action(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("{not json\n")
    done = cli("play", "--world", "plains-1", "--task", "diamond", "--actions", str(path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reason"] == "invalid_args"


BROKEN_YAML = [
    "a: [1, 2\nb: 3\n",
    "a: b: c\n",
    "key: 'open quote\n",
    "- one\ntwo: 2\n",
    "a: &x [*x]\n",
    "a: !!python/object:os.system {}\n",
]


def test_yaml_read_through_libyaml_gives_the_same_values_and_the_same_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every packaged YAML file parses to the same value with and without libyaml, and a
    broken document gets the reference parser's message and line either way."""
    from mirrorcraft import safeload

    if safeload._CLoader is None:
        pytest.skip("PyYAML here has no libyaml")
    files = sorted(Path(safeload.__file__).parent.joinpath("data").rglob("*.yaml"))
    assert len(files) > 20
    texts = [(str(f), f.read_text()) for f in files]

    def outcome(label: str, text: str) -> object:
        try:
            return ("value", safeload.parse_yaml(text, label))
        except safeload.DataError as exc:
            return ("error", str(exc))

    fast = [outcome(label, text) for label, text in texts + [("b", t) for t in BROKEN_YAML]]
    monkeypatch.setattr(safeload, "_CLoader", None)
    slow = [outcome(label, text) for label, text in texts + [("b", t) for t in BROKEN_YAML]]
    assert fast == slow
    assert [kind for kind, _ in fast[-len(BROKEN_YAML) :]] == ["error"] * len(BROKEN_YAML)


def test_the_nesting_check_agrees_with_a_recursive_count() -> None:
    import random

    from mirrorcraft.safeload import too_deep

    def depth(value: object) -> int:
        if isinstance(value, dict):
            return 1 + max((depth(v) for v in value.values()), default=0)
        if isinstance(value, list):
            return 1 + max((depth(v) for v in value), default=0)
        return 0

    rng = random.Random(7)

    def make(levels: int) -> object:
        if levels == 0 or rng.random() < 0.25:
            return rng.choice([1, "x", None, 2.5, True])
        if rng.random() < 0.5:
            return [make(levels - 1) for _ in range(rng.randint(0, 3))]
        return {str(i): make(levels - 1) for i in range(rng.randint(0, 3))}

    for _ in range(2000):
        doc, limit = make(rng.randint(0, 12)), rng.randint(1, 10)
        assert too_deep(doc, limit) == (depth(doc) > limit)
    chain: object = 1
    for _ in range(5):
        chain = [{"a": chain}]
    assert too_deep(chain, 10) is False and too_deep(chain, 9) is True
