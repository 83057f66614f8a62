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

The shell blocks of ``docs/*.md`` run the same way (``mirrorcraft`` is this
interpreter's), except those the README already runs and those ``DOC_SKIP`` names
(placeholders such as ``RESULTS``, servers that never stop, a jar). Every
``mirrorcraft`` command line in the README, the docs and the examples' comments, run or
not, must name only options its subcommand has; and a few documented outputs (the
fields ``play`` prints, the registry's size, the packaged specs' episode counts) are
read from the README and compared with what the code gives.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
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

DOC_SKIP = {
    # command substring in docs/*.md -> why it does not run here
    " RESULTS": "RESULTS stands for your results file",
    "--out DIR": "a synopsis: DIR and the bracketed options are placeholders",
    "--model ... --base-url ...": "needs a model endpoint (the README runs the mock-planner form)",
    "--model NAME": "a synopsis: NAME and URL stand for your model endpoint",
    "server.py --port 8765": "serves until stopped (the README runs it around a command)",
    "server.js --port 8765": "serves until stopped (the README runs the Python one)",
    "run examples/remote_experiment.yaml": "needs the agent server of the line above running",
    "--agent http://127.0.0.1:8765": "needs the agent server of the first line running",
    "server check servers/": "needs the saves of server prepare, which needs a server jar",
    "--real-server": "needs a Minecraft 1.19 server jar",
    "pip install -e examples/my_agent": (
        "installs into the environment; entry points are tested in tests/test_plugin_agents.py"
    ),
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
    "bench_report.py": (
        ["--episodes", "2500", "--no-viewer-only"],
        "reports of 8,640 and 50,000 episodes take about 15 minutes; 2,500 still splits the list",
    ),
}


@dataclass(frozen=True)
class Command:
    text: str
    kind: str  # "shell" or "python"
    line: int
    doc: str = "README.md"

    @property
    def id(self) -> str:
        words = self.text.replace(".venv/bin/", "").split()
        where = "" if self.doc == "README.md" else self.doc.removesuffix(".md") + "-"
        return f"{where}L{self.line}-" + "-".join(w.strip("'\"")[:20] for w in words[:4])


def _strip_comment(line: str) -> str:
    """README comments follow the command after a space: ``cmd   # what it does``."""
    return re.sub(r"\s+#\s.*$", "", line).rstrip()


def readme_commands() -> list[Command]:
    return fenced_commands(README)


def fenced_commands(path: Path) -> list[Command]:
    out: list[Command] = []
    lines = path.read_text(encoding="utf-8").splitlines()
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


def _plain(text: str) -> str:
    """A command as the README and the docs both write it (the docs drop ``.venv/bin/``)."""
    return " ".join(text.replace(".venv/bin/", "").split())


def _is_command(text: str) -> bool:
    """A line of a docs block that runs a program (the docs' blocks also show output)."""
    words = [w for w in text.split() if not re.fullmatch(r"[A-Z_]+=\S*", w)]
    program = words[0].rsplit("/", 1)[-1] if words else ""
    return program in {"mirrorcraft", "python", "python3", "node", "npm", "pip", "bash"}


def doc_commands() -> list[Command]:
    """The docs' shell commands the README does not already run."""
    in_readme = {_plain(c.text) for c in COMMANDS}
    out = []
    for path in DOCS:
        for cmd in fenced_commands(path):
            if cmd.kind == "shell" and _is_command(cmd.text) and _plain(cmd.text) not in in_readme:
                out.append(Command(cmd.text, "shell", cmd.line, path.name))
    return out


DOC_COMMANDS = doc_commands()


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
    stale = [k for k in DOC_SKIP if not any(k in c.text for c in DOC_COMMANDS)]
    assert not stale, f"no docs command matches {stale}"


@pytest.mark.readme
@pytest.mark.parametrize("cmd", COMMANDS, ids=[c.id for c in COMMANDS])
def test_readme_command_works_as_written(cmd: Command, scratch: Path) -> None:
    if why := _skip_reason(cmd):
        pytest.skip(why)
    _run_as_written(cmd, scratch)


@pytest.mark.readme
@pytest.mark.parametrize("cmd", DOC_COMMANDS, ids=[c.id for c in DOC_COMMANDS])
def test_docs_command_works_as_written(cmd: Command, scratch: Path) -> None:
    if why := _skip_reason(cmd) or next((w for k, w in DOC_SKIP.items() if k in cmd.text), None):
        pytest.skip(why)
    _run_as_written(cmd, scratch, timeout=300)  # the docs' commands that run are quick


def _run_as_written(cmd: Command, scratch: Path, timeout: float = 1200) -> None:
    # The docs write `mirrorcraft ...`: the one installed beside this interpreter.
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    if cmd.kind == "python":
        args = [sys.executable, "-c", cmd.text]
    else:
        text = cmd.text.replace(".venv/bin/", f"{BIN}/")
        extra = _shortened(cmd)
        if extra:
            # Extra arguments go to the command itself, before any pipe or redirection.
            text = text + " " + " ".join(extra)
        args = ["bash", "-o", "pipefail", "-c", text]
    done = subprocess.run(
        args, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, (
        f"{cmd.doc} line {cmd.line}: {cmd.text}\nexit {done.returncode}\n"
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


# -- Options and outputs the docs name --------------------------------------------------------


def _cli_options(args: list[str]) -> set[str]:
    """The options `mirrorcraft ARGS...` accepts: the parser chain its words select."""
    from mirrorcraft.cli import build_parser

    parser = build_parser()
    known: set[str] = set()
    for word in ["", *args]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if word and subs and word in subs[0].choices:
            parser = subs[0].choices[word]
        elif word:
            continue
        known |= {o for a in parser._actions for o in a.option_strings}
    return known


def _fakeserver_options() -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "mirrorcraft.llm.fakeserver", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return set(re.findall(r"(?<![\w-])--[a-z][\w-]*", done.stdout))


def documented_invocations() -> list[tuple[str, str, list[str]]]:
    """(where, program, arguments) of every `mirrorcraft` or fake-endpoint command written
    in a code block or an inline code span of the README, the docs and the examples."""
    spans: list[tuple[str, str]] = []
    for path in (README, *DOCS):
        text = path.read_text(encoding="utf-8")
        spans += [(path.name, c.text) for c in fenced_commands(path) if c.kind == "shell"]
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        spans += [(path.name, s) for s in re.findall(r"`([^`]+)`", prose)]
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        comments = [ln.lstrip("# ") for ln in path.read_text().splitlines() if ln.startswith("#")]
        joined = "\n".join(comments).replace("\\\n", " ")
        spans += [(path.name, ln) for ln in joined.splitlines()]
    out = []
    for where, span in spans:
        for part in re.split(r"\s(?:--|&&|\||;)\s", " ".join(span.split())):
            try:
                words = shlex.split(part)
            except ValueError:
                words = part.split()
            words = [w.strip("[]") for w in words]
            for i, word in enumerate(words):
                if word.rsplit("/", 1)[-1] == "mirrorcraft" and i + 1 < len(words):
                    out.append((where, "mirrorcraft", words[i + 1 :]))
                    break
                if word == "mirrorcraft.llm.fakeserver":
                    out.append((where, "fakeserver", words[i + 1 :]))
                    break
    return out


def test_every_documented_option_exists() -> None:
    """A documented option the command does not have is an error the user meets first."""
    found = documented_invocations()
    assert sum(p == "mirrorcraft" for _w, p, _a in found) >= 60
    assert any(p == "fakeserver" for _w, p, _a in found)
    fake = _fakeserver_options()
    unknown = []
    for where, program, args in found:
        known = fake if program == "fakeserver" else _cli_options(args)
        for word in args:
            option = word.split("=", 1)[0]
            if re.fullmatch(r"--[a-z][\w-]*", option) and option not in known:
                unknown.append(f"{where}: {program} {' '.join(args)}: {option}")
    assert not unknown, "\n".join(unknown)


def _parser_options(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str]]:
    """(subcommand words, option) for every long option of every parser under ``parser``."""
    for action in parser._actions:
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                yield words, option
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parser_options(sub, (*words, name))


def test_every_option_is_documented() -> None:
    """The reverse of the check above: options no doc named (``run --no-report``, ``play
    --observe``, ``controls --skip-integrity``, ``server prepare --no-generate``...) were
    found only by reading --help. Each option of each subcommand must be written in a
    documented invocation of that subcommand, or in a paragraph of the README or the docs
    that also names the subcommand's words."""
    from mirrorcraft.cli import build_parser

    paragraphs = [
        p for path in (README, *DOCS) for p in re.split(r"\n\s*\n", path.read_text("utf-8"))
    ]
    invocations = [a for _w, prog, a in documented_invocations() if prog == "mirrorcraft"]
    missing = []
    for words, option in _parser_options(build_parser()):
        written = re.compile(re.escape(option) + r"(?![\w-])")
        if any(
            a[: len(words)] == list(words) and any(w.split("=")[0] == option for w in a)
            for a in invocations
        ):
            continue
        if any(
            written.search(p) and all(re.search(rf"\b{re.escape(w)}\b", p) for w in words)
            for p in paragraphs
        ):
            continue
        missing.append(f"mirrorcraft {' '.join(words)} {option}".replace("  ", " "))
    assert not missing, "options no doc describes:\n" + "\n".join(missing)


PLAY = [sys.executable, "-m", "mirrorcraft.cli", "play"]


def test_play_prints_the_fields_the_readme_names(tmp_path: Path) -> None:
    """README: "`play` prints one JSON object per action with `step`, ..., and `score`";
    once the task is complete it says so on standard error and plays nothing further."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    sentence = re.search(r"`play` prints one JSON object per action with (.*?)\. ", text)
    assert sentence, "the README no longer says what play prints"
    fields = set(re.findall(r"`(\w+)`", sentence.group(1)))
    route = ROOT / "examples" / "diamond_route.jsonl"
    done = subprocess.run(
        [*PLAY, "--world", "plains-1", "--task", "diamond", "--actions", str(route)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    assert printed and all(set(p) == fields for p in printed), (fields, printed[0])
    actions = [ln for ln in route.read_text().splitlines() if ln.strip()]
    assert len(printed) < len(actions) and printed[-1]["score"] == 100
    assert "no further actions" in done.stderr


def test_the_registry_has_as_many_ids_as_the_readme_says() -> None:
    from mirrorcraft.env import registered_ids

    text = " ".join(README.read_text(encoding="utf-8").split())
    said = re.search(r"`mirrorcraft\.env\.registered_ids\(\)` lists all ([\d,]+) packaged", text)
    assert said, "the README no longer says how many ids the registry lists"
    assert len(registered_ids()) == int(said.group(1).replace(",", ""))


def test_the_packaged_specs_have_the_episode_counts_the_readme_gives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The README's table of packaged experiments (each spec's first figure is its size),
    and the sizes the examples' comments give."""
    from mirrorcraft.runner.accumulation import AccumulationSpec, plan_streams
    from mirrorcraft.runner.spec import expand, load_spec
    from mirrorcraft.safeload import load_yaml_file

    folder = ROOT / "src" / "mirrorcraft" / "data" / "experiments"
    table = README.read_text(encoding="utf-8").split("| Spec | Episodes | Time here |\n", 1)
    assert len(table) == 2, "the README's table of packaged experiments is gone"
    lines = table[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `(\w+)\.yaml`[^|]*\| ([\d,]+)", lines, re.M)
    assert len(rows) >= 10, rows
    sizes = [(folder / f"{name}.yaml", said) for name, said in rows]
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "my_agent"))  # as PYTHONPATH= does
    # The examples say their size in their opening comment: "(4 episodes, ...", ". 42 episodes".
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        head = " ".join(ln for ln in path.read_text().splitlines() if ln.startswith("#"))
        sizes += [(path, n) for n in re.findall(r"(?:\(|\. )([\d,]+) episodes", head)]
    assert len(sizes) >= len(rows) + 2, sizes
    for path, said in sizes:
        raw = load_yaml_file(path)
        if raw.get("kind") == "accumulation":
            train, evals = plan_streams(AccumulationSpec.model_validate(raw))
            size = sum(len(s.conditions) for s in (*train, *evals))
        else:
            size = len(expand(load_spec(path)))
        assert size == int(said.replace(",", "")), f"{path.name}: {size} episodes, the doc {said}"
