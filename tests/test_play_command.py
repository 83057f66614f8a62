"""``mirrorcraft play`` output is stable: one JSON object per action with the documented keys."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mirrorcraft.cli import main

KEYS = {"step", "skill", "ok", "reason", "message", "inventory", "milestones", "score"}


def play(
    args: list[str], stdin: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[dict[str, object]], str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["play", *args, "--actions", "-"])
    captured = capsys.readouterr()
    rows = [json.loads(line) for line in captured.out.splitlines() if line.startswith("{")]
    return code, rows, captured.err


def test_play_prints_one_object_per_action(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    actions = "\n".join(
        [
            json.dumps({"skill": "mine", "args": {"block": "log", "count": 2}}),
            "this is not json",
            json.dumps(
                {
                    "skill": "craft_grid",
                    "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
                }
            ),
        ]
    )
    code, rows, _ = play(["--world", "plains-1", "--task", "diamond"], actions, capsys, monkeypatch)
    assert code == 0 and len(rows) == 3
    assert all(set(r) == KEYS for r in rows)
    assert (
        rows[0]["ok"]
        and rows[1]["reason"] == "invalid_args"
        and rows[2]["inventory"] == {"oak_log": 1, "oak_planks": 4}
    )
    assert [r["step"] for r in rows] == [1, 2, 3]


def test_play_with_inventory_and_suite(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    action = json.dumps(
        {
            "skill": "craft_grid",
            "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
        }
    )
    _, rows, _ = play(
        [
            "--world",
            "plains-1",
            "--suite",
            "M01",
            "--task",
            "diamond",
            "--inventory",
            '{"oak_log": 1}',
        ],
        action,
        capsys,
        monkeypatch,
    )
    assert rows[0]["inventory"] == {"oak_planks": 2}


@pytest.mark.parametrize(
    "args",
    [
        ["--world", "nowhere", "--task", "diamond"],
        ["--world", "plains-1", "--task", "diamond", "--suite", "M99"],
        ["--world", "plains-1", "--task", "diamond", "--inventory", "{oops"],
        ["--world", "plains-1", "--task", "diamond", "--inventory", '{"unobtainium": 3}'],
        # all of it or nothing: 36 stacks of logs leave no slot for the dirt
        ["--world", "plains-1", "--task", "diamond", "--inventory", '{"oak_log": 2304, "dirt": 1}'],
    ],
)
def test_play_bad_input_is_one_clear_line(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, rows, err = play(args, "", capsys, monkeypatch)
    assert (
        code == 2 and not rows and err.startswith("mirrorcraft: error:") and "Traceback" not in err
    )


def test_play_reads_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    route = Path(__file__).resolve().parents[1] / "examples" / "diamond_route.jsonl"
    code = main(["play", "--world", "plains-1", "--task", "diamond", "--actions", str(route)])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (
        code == 0
        and rows[-1]["score"] == 100
        and rows[-1]["milestones"][-1] == "story/mine_diamond"
    )


class _Recorder(io.StringIO):
    """Standard output that remembers what had been flushed (what a reading program has)."""

    flushed = ""

    def flush(self) -> None:
        super().flush()
        self.flushed = self.getvalue()


def test_each_reply_reaches_a_driving_program_before_the_next_action_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A program that writes one action and waits for its reply must get the reply while
    play waits for the next line, not when play ends (a pipe is block-buffered)."""
    out = _Recorder()
    seen: list[str] = []

    def lines() -> Iterator[str]:
        for _ in range(3):
            seen.append(out.flushed)
            yield json.dumps({"skill": "wait", "args": {}}) + "\n"
        seen.append(out.flushed)

    monkeypatch.setattr(sys, "stdin", lines())
    monkeypatch.setattr(sys, "stdout", out)
    assert main(["play", "--world", "plains-1", "--task", "diamond", "--actions", "-"]) == 0
    replies = [[json.loads(row)["step"] for row in text.splitlines()] for text in seen]
    assert replies == [[], [1], [1, 2], [1, 2, 3]]


def test_the_task_named_in_the_help_is_one_play_accepts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``play --help`` gives a tech-tree task id as an example; that id must play."""
    import re

    from mirrorcraft.cli import build_parser

    sub = next(
        a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)
    ).choices["play"]
    task_help = next(a.help for a in sub._actions if "--task" in a.option_strings)
    example = re.search(r"e\.g\. (\w+)", str(task_help))
    assert example is not None
    code, rows, err = play(
        ["--world", "plains-1", "--task", example.group(1)], "{}", capsys, monkeypatch
    )
    assert code == 0 and len(rows) == 1, err


def test_play_says_when_the_episode_ends_before_the_actions_do(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Actions after the end of the episode are not played; play says so (and why) on
    standard error instead of stopping without a word."""
    wait = json.dumps({"skill": "wait", "args": {}})
    args = ["--world", "plains-1", "--task", "diamond", "--budget", "2"]
    code, rows, err = play(args, "\n".join([wait] * 4), capsys, monkeypatch)
    assert code == 0 and [r["step"] for r in rows] == [1, 2]
    assert "the episode ended at step 2 (the action budget is spent)" in err


def test_a_reader_that_goes_away_ends_play_quietly() -> None:
    """A driver (or ``| head``) that stops reading: play's next reply meets a closed pipe.
    Play ends with status 0 and nothing on standard error, as before replies were flushed
    one by one (then the interpreter's last flush said "Exception ignored" and exited 120)."""
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    args = ["play", "--world", "plains-1", "--task", "diamond", "--actions", "-"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mirrorcraft.cli", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    wait = json.dumps({"skill": "wait", "args": {}}) + "\n"
    proc.stdin.write(wait.encode())
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["step"] == 1
    proc.stdout.close()  # the reader goes away
    proc.stdin.write(wait.encode() * 3)
    proc.stdin.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == 0 and err == ""
