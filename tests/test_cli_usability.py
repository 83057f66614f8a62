"""What a user trips over on the command line: formats, list options, help, messages, progress."""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.cli import build_parser, main
from mirrorcraft.commands.common import list_option
from mirrorcraft.design.kinds import _summarise
from mirrorcraft.progress import ProgressLine, format_eta
from tests.test_analysis_helpers import synthetic_study, write_db

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=900,
    )


# -- export ---------------------------------------------------------------------------------
def test_export_format_follows_the_extension_and_refuses_a_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records, steps)
    assert main(["export", str(db), "--out", str(tmp_path / "e.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "e.csv").open()))
    assert len(rows) == len(records) and "episode_id" in rows[0]
    assert main(["export", str(db), "--format", "jsonl", "--out", str(tmp_path / "x.csv")]) == 2
    assert "does not match" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
    assert main(["export", str(db), "--out", str(tmp_path / "x.txt")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err
    assert main(["export", str(db), "--out", str(tmp_path / "plain")]) == 0  # no extension: JSONL
    first = (tmp_path / "plain").read_text().splitlines()[0]
    assert json.loads(first)["episode_id"]


def test_missing_extras_name_the_source_checkout_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_extras(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] in ("pyarrow", "ray"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_extras)
    monkeypatch.setattr("importlib.import_module", lambda name, package=None: no_extras(name))
    records, steps = synthetic_study(seed=3, worlds=("plains-1",), reps=1)
    db = write_db(tmp_path / "r.db", records, steps)
    assert main(["export", str(db), "--out", str(tmp_path / "e.parquet")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'mirrorcraft[parquet]'" in err and "pip install -e '.[parquet]'" in err
    assert not (tmp_path / "e.parquet").exists()

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "schema_version: 1\nname: extras\nworlds: [plains-1]\nrules: [vanilla]\n"
        "tasks: [diamond]\nagents: [random]\nbudget: 5\n"
    )
    code = main(
        ["run", str(spec), "--out", str(tmp_path / "o"), "--executor", "ray", "--no-report"]
    )
    err = capsys.readouterr().err
    assert code != 0 and "pip install -e '.[ray]'" in err and "Traceback" not in err


# -- list options, help ---------------------------------------------------------------------
def test_list_options_take_commas_and_repeats() -> None:
    assert list_option(["a,b", "c", " d , "]) == ["a", "b", "c", "d"]
    assert list_option(None) is None
    args = build_parser().parse_args(["controls", "--world", "plains-1,taiga-1", "--world", "x"])
    assert list_option(args.world) == ["plains-1", "taiga-1", "x"]


def test_controls_accepts_comma_separated_worlds(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "controls",
            "--world",
            "plains-1,taiga-1",
            "--rules",
            "vanilla",
            "--task",
            "diamond",
            "--skip-integrity",
            "--json",
        ]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and {r["world"] for r in doc["rows"]} == {"plains-1", "taiga-1"}
    # --json said "passed": true and "integrity_leaks": [] without saying no scan was made
    assert doc["integrity_scan"] == "skipped" and doc["integrity_leaks"] == []


def _options_without_help(parser: argparse.ArgumentParser, path: str) -> list[str]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _options_without_help(sub, f"{path} {name}")
        elif isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        elif not action.help:
            out.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return out


def test_every_option_of_every_command_has_help() -> None:
    assert _options_without_help(build_parser(), "mirrorcraft") == []


def test_play_task_help_mentions_tech_tree_ids() -> None:
    text = build_parser()._subparsers._group_actions[0].choices["play"].format_help()  # type: ignore[union-attr]
    assert "tech-tree" in text


# -- rules --pack -------------------------------------------------------------------------
def test_rules_pack_takes_suite_ids_and_manifest_paths(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rules", "--pack", "M04", "loot", "iron_ore", "--tool", "stone_pickaxe"]) == 0
    assert json.loads(capsys.readouterr().out)["rolls"] == [{"raw_iron_block": 1}]
    manifest = str(ROOT / "examples" / "my_suite.yaml")
    assert main(["rules", "--pack", manifest, "loot", "gravel", "--rolls", "20"]) == 0
    rolls = json.loads(capsys.readouterr().out)["rolls"]
    assert rolls == [{"flint": 1}] * 20  # vanilla gravel drops flint only 10% of the time
    assert main(["rules", "--pack", "M99", "info"]) == 2
    assert "M99" in capsys.readouterr().err


def test_rules_loot_adds_up_stacks_of_one_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table that drops one item as several stacks (two pools, or more than a stack holds)
    used to be shown with the last stack's count only."""
    pack = tmp_path / "pack"
    (pack / "data/minecraft/loot_tables/blocks").mkdir(parents=True)
    (pack / "pack.mcmeta").write_text('{"pack": {"pack_format": 10, "description": "t"}}')
    flint = {"type": "minecraft:item", "name": "minecraft:flint"}
    many = {**flint, "functions": [{"function": "minecraft:set_count", "count": 100}]}
    table = {
        "type": "minecraft:block",
        "pools": [{"rolls": 1, "entries": [flint]}, {"rolls": 2, "entries": [many]}],
    }
    (pack / "data/minecraft/loot_tables/blocks/gravel.json").write_text(json.dumps(table))
    assert main(["rules", "--pack", str(pack), "loot", "gravel"]) == 0
    assert json.loads(capsys.readouterr().out)["rolls"] == [{"flint": 201}]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["loot", "iron_ore", "--tool", "stone_pikaxe"], "unknown item 'stone_pikaxe' for --tool"),
        (
            ["loot", "iron_ore", "--tool", "stone_pickaxe", "--enchant", "fortun=3"],
            "unknown enchantment 'fortun'",
        ),
        (["smelt", "raw_irn"], "unknown item 'raw_irn' to smelt"),
        (["craft", '[["oak_lgo"]]', "--station", "inventory"], "unknown item 'oak_lgo'"),
    ],
)
def test_rules_refuses_unknown_ids_instead_of_answering(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo used to read as an answer: a misspelt tool 'harvests nothing', a misspelt
    input 'smelts into nothing', a misspelt enchantment was dropped from the tool."""
    assert main(["rules", *argv]) == 2
    captured = capsys.readouterr()
    assert fragment in captured.err and not captured.out
    assert main(["rules", "loot", "iron_ore", "--tool", "minecraft:stone_pickaxe",
                 "--enchant", "minecraft:fortune=3"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["harvestable"] is True


# -- run messages -------------------------------------------------------------------------
def _spec(tmp_path: Path, agents: list[str]) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "name": "usability",
                "worlds": ["plains-1"],
                "rules": ["vanilla", "M04"],
                "tasks": ["diamond"],
                "agents": agents,
                "repetitions": 1,
                "budget": 20,
            }
        )
    )
    return path


def test_limit_is_not_a_failure_and_the_controls_table_needs_an_oracle(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ["vanilla-planner", "random"])
    out = tmp_path / "out"
    first = _cli("run", str(spec), "--out", str(out), "--limit", "1", "--workers", "1")
    assert first.returncode == 0, first.stderr
    assert "3 episode(s) left for later by --limit" in first.stdout
    assert "oracle" not in first.stdout
    rest = _cli("run", str(spec), "--out", str(out), "--workers", "1", "--no-report")
    assert rest.returncode == 0 and "left for later" not in rest.stdout
    with_oracle = _cli(
        "run", str(_spec(tmp_path, ["oracle"])), "--out", str(tmp_path / "o"), "--no-report"
    )
    assert with_oracle.returncode == 0 and "Controls (not benchmark results)" in (
        with_oracle.stdout
    )
    assert "Controls" not in first.stdout


def test_a_negative_limit_is_refused(tmp_path: Path) -> None:
    """``--limit -3`` ran nothing and said "4 episode(s) left for later by --limit", exit 0,
    as if the run had gone as asked."""
    out = tmp_path / "out"
    done = _cli("run", str(_spec(tmp_path, ["random"])), "--out", str(out), "--limit", "-3")
    assert done.returncode == 2 and "--limit: must be 0 or more, got -3" in done.stderr
    assert not out.exists()


def test_model_without_base_url_names_the_flag_and_no_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = _spec(tmp_path, ["react"])
    assert main(["run", str(spec), "--out", str(tmp_path / "x"), "--model", "some-model"]) == 2
    err = capsys.readouterr().err
    assert "--model some-model needs --base-url" in err
    assert "deepseek" not in err.lower() and "openai.com" not in err


# -- design biome: suite changes off the selected routes are information ----------------------
@dataclass
class _Row:
    world: str = "plains_variant-1"
    rules: str = "M01"
    task: str = "diamond"
    budget: int = 50
    route: bool = True
    oracle_success: bool = True
    oracle_actions: int = 20
    twins_equal: bool = True
    neutral_equal: bool = True

    @property
    def passed(self) -> bool:
        return self.route and self.oracle_success and self.twins_equal and self.neutral_equal


@dataclass
class _Obs:
    world: str = "plains_variant-1"
    rules: str = "M01"
    change: int = 3
    trigger: str = "smelt x"
    detail: str = "same"
    passed: bool = False


@dataclass
class _Report:
    rows: list[Any] = field(default_factory=lambda: [_Row()])
    observability: list[Any] = field(default_factory=lambda: [_Obs()])
    off_route: list[Any] = field(default_factory=lambda: [("M01", 3, "Iron nuggets ...")])


def test_biome_candidates_are_judged_on_their_own_worlds_only() -> None:
    biome = _summarise(_Report(), [], suite_changes_fail=False)
    assert biome.passed and biome.failures == []
    assert any(
        "M01 change 3 lies on no selected task's route" in s for s in biome.summary["suite_changes"]
    )
    suite = _summarise(_Report(), [], suite_changes_fail=True)
    assert not suite.passed and len(suite.failures) == 2
    infeasible = _summarise(
        _Report(rows=[_Row(oracle_success=False)]), [], suite_changes_fail=False
    )
    assert not infeasible.passed and "oracle failed" in infeasible.failures[0]


# -- progress -------------------------------------------------------------------------------
class _Stream:
    def __init__(self, tty: bool) -> None:
        self.text, self._tty = "", tty

    def isatty(self) -> bool:
        return self._tty

    def write(self, s: str) -> None:
        self.text += s

    def flush(self) -> None:
        return None


def test_progress_is_quiet_off_a_terminal_unless_asked() -> None:
    quiet = _Stream(tty=False)
    line = ProgressLine("controls", 3, unit="conditions", stream=quiet)
    line.advance(note="a")
    line.finish()
    assert quiet.text == ""
    asked = _Stream(tty=False)
    line = ProgressLine("controls", 3, unit="conditions", stream=asked, enabled=True)
    for n in "abc":
        line.advance(note=n)
    line.finish()
    assert asked.text.startswith("controls: 1/3 conditions, ETA ")
    assert "controls: 3/3 conditions" in asked.text.splitlines()[-1]
    tty = _Stream(tty=True)
    line = ProgressLine("design mirror", 200, unit="attempts", stream=tty, upper_bound=True)
    line.advance(note="attempt 1: rejected")
    assert "\r" in tty.text and "ETA at most" in tty.text


def test_eta_format() -> None:
    assert format_eta(float("nan")) == "--"
    assert format_eta(65) == "1m05s" and format_eta(3 * 3600 + 120) == "3h02m"


def test_long_commands_show_progress_when_asked() -> None:
    checked = _cli("suites", "check", "M04", "--progress")
    assert checked.returncode == 0 and "route check: 10/10 worlds" in checked.stderr
    quiet = _cli("suites", "check", "M04")
    assert quiet.returncode == 0 and "route check" not in quiet.stderr
    controls = _cli(
        "controls", "--world", "plains-1", "--rules", "vanilla", "--task", "diamond",
        "--skip-integrity", "--progress",
    )  # fmt: skip
    assert controls.returncode == 0 and "controls: 1/1 conditions" in controls.stderr


# -- accumulation runs ----------------------------------------------------------------------
ACCUMULATION = {
    "schema_version": 1,
    "kind": "accumulation",
    "name": "acc-limit",
    "models": [{"name": "mock-planner"}],
    "variants": ["full"],
    "train": {
        "worlds": ["plains-1"],
        "rules": ["vanilla"],
        "tasks": ["obtain_crafting_table", "obtain_wooden_pickaxe"],
        "episodes": 4,
    },
    "checkpoints": [0, 4],
    "eval": {"worlds": ["plains-1"], "rules": ["vanilla"], "tasks": ["obtain_stick"]},
    "seed": 0,
}


def test_accumulation_runs_honour_limit_and_show_totals(tmp_path: Path) -> None:
    spec = tmp_path / "acc.yaml"
    spec.write_text(json.dumps(ACCUMULATION))
    out = tmp_path / "out"
    first = _cli("run", str(spec), "--out", str(out), "--no-report", "--limit", "3")
    assert first.returncode == 0, first.stderr
    assert "episodes: 0/6" in first.stderr and "(training 0/4, evaluation 0/2)" in first.stderr
    assert "3 episode(s) left for later by --limit" in first.stdout
    rest = _cli("run", str(spec), "--out", str(out), "--no-report")
    assert rest.returncode == 0, rest.stderr
    assert "episodes: 0/3" in rest.stderr and "3 already done" in rest.stderr
    assert "left for later" not in rest.stdout


def test_the_installed_command_keeps_exit_codes_and_stored_results(tmp_path: Path) -> None:
    """The ``mirrorcraft`` console script (``cli.entry``, which freezes the process's
    objects before it ends) exits as ``main`` says and leaves every episode stored: a
    short run succeeds with its records in the database, a missing spec is one line and
    exit code 2."""
    exe = Path(sys.executable).parent / "mirrorcraft"
    if not exe.exists():
        pytest.skip("the mirrorcraft console script is not installed next to this Python")
    out = tmp_path / "run"
    done = subprocess.run(
        [str(exe), "run", "--out", str(out), "--limit", "4", "--no-report"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    import sqlite3

    with sqlite3.connect(out / "results.sqlite") as con:
        (stored,) = con.execute("SELECT COUNT(*) FROM episodes WHERE status = 'ok'").fetchone()
    assert stored == 4
    missing = subprocess.run(
        [str(exe), "run", str(tmp_path / "no_such_spec.yaml"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    assert missing.stderr.strip().count("\n") == 0 and "no_such_spec.yaml" in missing.stderr


def test_an_interrupt_that_lands_as_the_command_returns_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C on ``producer | mirrorcraft play`` ends the producer (play's input ends) and
    interrupts play at once; Python may raise the interrupt only after ``main`` returned,
    in ``entry``. It is the usual interrupted line and exit code, not a traceback."""
    import gc

    from mirrorcraft import cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.setattr(gc, "freeze", interrupted)
    assert cli.entry() == 130
    assert capsys.readouterr().err == "mirrorcraft: interrupted\n"


def test_a_ctrl_c_while_the_command_is_still_importing_ends_in_one_line() -> None:
    """The console script imports ``mirrorcraft.cli`` and calls ``entry``. The commands take
    about 0.6 s to import; a Ctrl-C then used to end in an import traceback. Here the
    interrupt is raised by the import of the commands themselves."""
    script = (
        "import sys\n"
        "class Interrupting:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mirrorcraft.commands':\n"
        "            raise KeyboardInterrupt\n"
        "        return None\n"
        "import mirrorcraft\n"  # it puts its own finder first; this one goes before it
        "sys.meta_path.insert(0, Interrupting())\n"
        "from mirrorcraft.cli import entry\n"
        "sys.argv = ['mirrorcraft', 'controls']\n"
        "sys.exit(entry())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 130, out.stderr
    assert out.stderr == "mirrorcraft: interrupted\n"
