"""Running a design session end to end and writing what it produced.

``run_llm`` and ``run_static`` open the design log in the output folder, run the
loop (or the sampler), and on acceptance write the accepted spec and its
artifacts; with or without acceptance they write the last static report and the
controls summary beside the log.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mirrorcraft.design.kinds import BiomeKind, MirrorKind, write_atomic
from mirrorcraft.design.loop import (
    Designer,
    DesignLog,
    DesignOutcome,
    DesignSettings,
    Watch,
    quiet,
    static_design,
)
from mirrorcraft.llm.base import LLMClient
from mirrorcraft.safeload import DataError, load_yaml_file

LOG_NAME = "design_log.jsonl"
FAILED_CONTROLS_NAME = "controls_failed.json"


class DesignInputError(Exception):
    """A design request the user can fix (unknown task or base, unreadable starting spec)."""


def make_kind(
    kind: str,
    tasks: tuple[str, ...],
    *,
    suite_id: str = "D01",
    base: str = "plains",
    name: str | None = None,
    worlds: int = 2,
) -> MirrorKind | BiomeKind:
    from mirrorcraft.design.kinds import known_biome
    from mirrorcraft.evaluator.tasks import task_table

    unknown = [t for t in tasks if t not in task_table()]
    if unknown or not tasks:
        known = ", ".join(task_table())
        raise DesignInputError(f"unknown or missing task(s) {unknown} (known: {known})")
    if len(set(tasks)) != len(tasks):
        raise DesignInputError("each task may be listed once")
    from mirrorcraft.backends.rulesets import vanilla_rules
    from mirrorcraft.evaluator.tasks import get_task

    advancements = vanilla_rules().advancements
    for task in tasks:
        if any(m.advancement not in advancements for m in get_task(task).milestones):
            raise DesignInputError(
                f"task {task!r} cannot be designed for: its milestones are not vanilla advancements"
            )
    if kind == "mirror":
        from mirrorcraft.datapack.manifest import SUITE_ID_PATTERN
        from mirrorcraft.design.mirror_report import id_problems

        # Every candidate must carry this id: one no candidate may have fails every round.
        if not re.fullmatch(SUITE_ID_PATTERN, suite_id):
            raise DesignInputError(f"--id {suite_id!r}: use 1-32 letters, digits, '_', '.' or '-'")
        problems = id_problems(suite_id)
        if problems:
            raise DesignInputError(f"--id: {problems[0]}")
        return MirrorKind(tasks, suite_id)
    if not known_biome(base):
        from mirrorcraft.design.biome_catalog import packaged_biomes

        raise DesignInputError(
            f"unknown base biome {base!r} (known: {', '.join(packaged_biomes())})"
        )
    if not 1 <= worlds <= 4:
        raise DesignInputError("--worlds must be between 1 and 4")
    biome = name or f"{base}_variant"
    # It names the folder the accepted spec is written to, and the worlds (<biome>-<n>).
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", biome):
        raise DesignInputError(
            f"--name {biome!r}: use 1-40 lowercase letters, digits or '_', starting with a letter"
        )
    return BiomeKind(tasks, base, biome, worlds)


def read_spec(path: Path) -> dict[str, Any]:
    try:
        raw = load_yaml_file(path)
    except OSError as exc:
        raise DesignInputError(f"{path}: cannot read ({exc.strerror})") from None
    except DataError as exc:
        raise DesignInputError(str(exc)) from None
    if not isinstance(raw, dict):
        raise DesignInputError(f"{path}: a spec must be a mapping")
    return raw


def initial_spec(kind: MirrorKind | BiomeKind, path: Path | None, seed: int) -> dict[str, Any]:
    """The user's spec, else the sampler's first draw (mirror) or the base biome (biome)."""
    if path is not None:
        return read_spec(path)
    if isinstance(kind, BiomeKind):
        return kind.base_spec()
    return kind.sampler(seed).propose(0)


def check_folder(kind: MirrorKind | BiomeKind, out: Path) -> None:
    """Refuse a folder that holds another design's accepted spec.

    ``static_report.json`` and ``controls.json`` have fixed names, so accepting a design of
    another id, name or kind there would replace the reports of the spec already beside
    them (a mirror and a biome designed into one ``--out``) and leave that spec without
    its own. The same design again (to replay the cache, or more rounds) is welcome.
    """
    if not (out / "static_report.json").is_file():
        return
    mine = kind.suite_id if isinstance(kind, MirrorKind) else kind.biome_name
    others = sorted(
        p.name for p in out.glob("*.yaml") if p.stem != mine and not p.name.startswith(".")
    )
    if others:
        raise DesignInputError(
            f"{out} holds the accepted design {others[0]}, whose static_report.json and"
            f" controls.json a design of {mine!r} would replace; give it another --out"
        )


def _write_results(kind: MirrorKind | BiomeKind, outcome: DesignOutcome, out: Path) -> list[Path]:
    """The accepted candidate's files, or the failed controls of a run that accepted none.

    ``static_report.json`` and ``controls.json`` always belong to the accepted spec beside
    them: a later run into the same folder that accepts nothing leaves them (and that spec)
    alone and writes its last controls summary to ``controls_failed.json`` instead.
    """

    def dump(doc: dict[str, Any]) -> str:
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"

    if not (outcome.accepted and outcome.candidate is not None):
        if outcome.controls is None:
            return []
        return [write_atomic(out / FAILED_CONTROLS_NAME, dump(outcome.controls.summary))]
    files = [write_atomic(out / "static_report.json", dump(outcome.candidate.report.to_json()))]
    if outcome.controls is not None:
        files.append(write_atomic(out / "controls.json", dump(outcome.controls.summary)))
    (out / FAILED_CONTROLS_NAME).unlink(missing_ok=True)
    return files + kind.write(outcome.candidate, out)


async def run_llm(
    kind: MirrorKind | BiomeKind,
    client: LLMClient,
    settings: DesignSettings,
    out: Path,
    start: dict[str, Any],
    watch: Watch | None = None,
) -> tuple[DesignOutcome, list[Path]]:
    check_folder(kind, out)
    out.mkdir(parents=True, exist_ok=True)
    log = DesignLog(out / LOG_NAME)
    try:
        outcome = await Designer(kind, client, settings, log, watch or quiet).run(start)
    finally:
        log.close()
    return outcome, _write_results(kind, outcome, out)


def run_static(
    kind: MirrorKind | BiomeKind,
    settings: DesignSettings,
    out: Path,
    watch: Watch | None = None,
) -> tuple[DesignOutcome, list[Path]]:
    check_folder(kind, out)
    out.mkdir(parents=True, exist_ok=True)
    log = DesignLog(out / LOG_NAME)
    try:
        outcome = static_design(kind, settings, log, watch or quiet)
    finally:
        log.close()
    return outcome, _write_results(kind, outcome, out)
