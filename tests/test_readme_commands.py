"""Every command in the README's code blocks, run as written in a scratch folder.

The README is the first thing a new user runs, so it must not rot: this test reads
its fenced code blocks, runs each shell command (``.venv/bin/`` becomes this
interpreter's folder) in a temporary directory that sees the repository's
``examples/``, ``benchmarks/`` and ``src/``, in README order, and expects exit 0.
Python blocks run as scripts.

Commands that need what a test cannot have (a paid key, a server jar, a cluster)
are listed in ``SKIP`` with the reason; a few long ones are shortened by extra
arguments (``SHORTENED``, with the reason) unless ``MIRRORCRAFT_README_FULL=1``.
Every entry of both tables must match a README command, so a table cannot go stale.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
FULL = os.environ.get("MIRRORCRAFT_README_FULL") == "1"
LINKED = ("examples", "benchmarks", "src", "bridge")

SKIP = {
    "python3 -m venv": "the quick-start setup is what .ci/run does from nothing before the tests",
    "export DEEPSEEK_API_KEY": "needs a paid API key",
    "--model deepseek-v4-flash": "needs a paid API key and the provider's network",
    "--executor ray": "needs the optional ray extra and a Ray cluster",
    "--model M --base-url URL": (
        "M and URL stand for your model endpoint; tests/test_design_cli.py runs the same"
        " designer/judge loop against the local fake endpoint"
    ),
    "npm ci ": ".ci/run installs the bridge, and runs its tests",
    "server prepare --jar": "needs a Minecraft 1.19 server jar, which cannot be shipped",
    "--backend mineflayer": "needs saves prepared from a Minecraft server jar",
    "bench_bridge.py": "needs the bridge's npm packages and minutes of real-time digging",
    "pip install -e '.[bench]'": "installs the peer environment from PyPI (tests are offline)",
}

SHORTENED = {
    # command substring -> (extra arguments, why)
    "mirrorcraft controls": (
        ["--world", "plains-1"],
        "all 210 conditions take minutes on 2 cores; one world's 21 are checked here",
    ),
    "mineevolve_accumulation.yaml": (
        ["--limit", "40"],
        "the full offline smoke run is 1,560 episodes; the first 40 are run here",
    ),
    "bench_harness.py": (["--quick"], "the full benchmark takes minutes"),
    "bench_remote_agent.py": (["--quick"], "20 actions per episode instead of 100"),
    "bench_world.py": (["--quick"], "the full benchmark takes minutes"),
    "bench_peers.py": (["--quick"], "several interleaved rounds take a minute or more"),
    "bench_planners.py": (["--quick"], "three rounds of 63 episodes take a minute or more"),
    "bench_store.py": (["--quick"], "a 508-episode stream committed and loaded takes a minute"),
}


@dataclass(frozen=True)
class Command:
    text: str
    kind: str  # "shell" or "python"
    line: int

    @property
    def id(self) -> str:
        words = self.text.replace(".venv/bin/", "").split()
        return f"L{self.line}-" + "-".join(w.strip("'\"")[:20] for w in words[:4])


def _strip_comment(line: str) -> str:
    """README comments follow the command after a space: ``cmd   # what it does``."""
    return re.sub(r"\s+#\s.*$", "", line).rstrip()


def readme_commands() -> list[Command]:
    out: list[Command] = []
    lines = README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        lang, start, body = fence.group(1), i + 1, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if lang == "python":
            out.append(Command("\n".join(body), "python", start + 1))
            continue
        if lang not in ("", "bash", "sh", "shell"):
            continue
        pending, first = "", start
        for n, raw in enumerate(body, start + 1):
            text = _strip_comment(raw)
            if not pending:
                first = n
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            if text.endswith("\\"):
                pending += text[:-1] + " "
                continue
            out.append(Command((pending + text).strip(), "shell", first))
            pending = ""
    return out


COMMANDS = readme_commands()


def _skip_reason(cmd: Command) -> str | None:
    return next((why for key, why in SKIP.items() if key in cmd.text), None)


def _shortened(cmd: Command) -> list[str]:
    if FULL:
        return []
    return next((extra for key, (extra, _why) in SHORTENED.items() if key in cmd.text), [])


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that looks like a checkout to the commands, whose outputs stay in it."""
    folder = tmp_path_factory.mktemp("readme")
    for name in LINKED:
        if (ROOT / name).exists():
            (folder / name).symlink_to(ROOT / name)
    return folder


def test_the_tables_name_real_commands() -> None:
    """A skip or a shortening that no longer matches a README command is stale."""
    texts = [c.text for c in COMMANDS]
    stale = [k for k in (*SKIP, *SHORTENED) if not any(k in t for t in texts)]
    assert not stale, f"no README command matches {stale}"
    assert len(COMMANDS) >= 30 and any(c.kind == "python" for c in COMMANDS)


@pytest.mark.readme
@pytest.mark.parametrize("cmd", COMMANDS, ids=[c.id for c in COMMANDS])
def test_readme_command_works_as_written(cmd: Command, scratch: Path) -> None:
    if why := _skip_reason(cmd):
        pytest.skip(why)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if cmd.kind == "python":
        args = [sys.executable, "-c", cmd.text]
    else:
        text = cmd.text.replace(".venv/bin/", f"{BIN}/")
        extra = _shortened(cmd)
        if extra:
            # Extra arguments go to the command itself, before any pipe or redirection.
            text = text + " " + " ".join(extra)
        args = ["bash", "-o", "pipefail", "-c", text]
    done = subprocess.run(args, cwd=scratch, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, (
        f"README line {cmd.line}: {cmd.text}\nexit {done.returncode}\n"
        f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    )
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def test_the_test_command_prints_the_closing_count(tmp_path: Path) -> None:
    """The README's ``pytest -q`` ends with pytest's ``N passed`` line (not hidden by -qq)."""
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_one():\n    assert True\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(probe)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^1 passed", done.stdout, re.M), done.stdout
