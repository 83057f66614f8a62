"""``mirrorcraft run SPEC`` for ``kind: accumulation`` specs (knowledge experiments: MineEvolve,
its ablations and the baselines that keep memory)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mirrorcraft import __version__
from mirrorcraft.agents.mineevolve.store import KnowledgeStoreError
from mirrorcraft.agents.registry import MOCK_MODEL
from mirrorcraft.backends.rulesets import resolve_rules
from mirrorcraft.commands.common import UserError, model_error
from mirrorcraft.commands.run_guards import check_resume, locked, preflight
from mirrorcraft.progress import ProgressLine
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.runner.accumulate_run import AccumulationError, AccumulationRunner, Outcome
from mirrorcraft.runner.accumulation import AccumulationSpec
from mirrorcraft.runner.fault_report import fault_table, group_faults
from mirrorcraft.runner.spec import ModelSpec, validation_message
from mirrorcraft.runner.store import StoreError
from mirrorcraft.runner.versions import ProseOnly
from mirrorcraft.safeload import DataError, load_yaml_file
from mirrorcraft.world.registry import world_problem


def is_accumulation(raw: Any) -> bool:
    return isinstance(raw, dict) and raw.get("kind") == "accumulation"


def parse(raw: dict[str, Any], source: str) -> AccumulationSpec:
    try:
        return AccumulationSpec.model_validate(raw)
    except ValidationError as exc:
        raise UserError(validation_message(exc, source)) from None


def validate(spec: AccumulationSpec) -> tuple[list[str], list[str]]:
    """Check everything a run needs; returns the worlds and rule sets the spec names."""
    named = list(spec.eval.worlds) + (list(spec.train.worlds) if spec.train else [])
    rules = list(spec.eval.rules) + (list(spec.train.rules) if spec.train else [])
    for v in spec.variants:
        t = spec.train_for(v)
        if t is not None:
            named += list(t.worlds)
            rules += list(t.rules)
    for w in named:
        if problem := world_problem(w):
            raise UserError(problem)
    for r in dict.fromkeys(rules):
        try:
            resolve_rules(r)
        except RulesError as exc:
            raise UserError(str(exc)) from None
    from mirrorcraft.agents.memory import start_problem

    for v in spec.variants:
        if v.start_from is not None and (unreadable := start_problem(v.agent, v.start_from)):
            raise UserError(f"variant {v.name}: start_from: {unreadable}")
    try:
        from mirrorcraft.runner.accumulation import plan_streams

        plan_streams(spec)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    from mirrorcraft.agents.baselines.config import (
        BASELINE_SECTIONS,
        baseline_settings,
        settings_for,
    )
    from mirrorcraft.agents.mineevolve.config import MineEvolveConfigError, make_config

    try:
        make_config("full", settings_for("mineevolve", spec.agent_settings))
        for name in BASELINE_SECTIONS:
            baseline_settings(name, settings_for(name, spec.agent_settings))
    except MineEvolveConfigError as exc:
        raise UserError(f"agent_settings: {exc}") from None
    from mirrorcraft.llm.base import LLMConfigError
    from mirrorcraft.llm.factory import make_settings

    for m in spec.models:
        if m.name in (MOCK_MODEL, "none"):
            continue
        try:
            make_settings(m.name, m.base_url, m.api_key_env, **m.client)
        except LLMConfigError as exc:
            raise model_error(m.name, exc) from None
    return list(dict.fromkeys(named)), list(dict.fromkeys(rules))


def run_accumulation(args: argparse.Namespace, raw: dict[str, Any], source: str) -> int:
    if args.agent:
        raise UserError(
            "--agent does not apply to an accumulation spec (its variants name their agents)"
        )
    if getattr(args, "backend", None) not in (None, "sim"):
        raise UserError(
            "accumulation experiments run on the embedded simulator only (--backend sim)"
        )
    spec = parse(raw, source)
    if args.model:
        model = ModelSpec(name=args.model, base_url=args.base_url, api_key_env=args.api_key_env)
        spec = spec.model_copy(update={"models": (model,)})
    worlds, rules = validate(spec)
    out = Path(args.out) if args.out else Path("runs") / spec.name
    if getattr(args, "allow_changed_spec", False):
        raise UserError(
            "--allow-changed-spec does not apply to accumulation runs (their knowledge stores "
            "cannot mix two specs); give the changed spec another --out"
        )
    with locked(out):
        outcome = _run_locked(args, spec, out, worlds, rules)
    summary, loaded = _summary(out)
    from mirrorcraft.report.accumulation_tables import accumulation_tables
    from mirrorcraft.report.render import render_text

    print("\n".join(render_text(t) for t in accumulation_tables(summary)))
    if outcome.fault_table:
        print(outcome.fault_table)
    for line in outcome.missing:
        print(f"not finished: {line}")
    if outcome.given_up:
        settings = " or ".join(sorted(set(outcome.given_up.values())))
        print(
            f"{len(outcome.given_up)} episode(s) given up over all runs (status given_up): a "
            "rerun does not run them, nor what follows them in their stream; fix what failed "
            "(each fault is kept in the faults table of train.sqlite or results.sqlite), "
            f"then raise {settings} and rerun to try them again"
        )
    if any("given up" not in line for line in outcome.missing):
        others = " the others" if outcome.given_up else ""
        print(
            f"rerun the same command to continue{others}: unfinished episodes get fresh "
            "attempts (the faults tables keep each fault for the record)"
        )
    if outcome.held_back:
        print(f"{outcome.held_back} episode(s) left for later by --limit; rerun to continue")
    if not args.no_report and loaded.records:
        from mirrorcraft.report.build import write_report

        write_report(loaded, summary, out / "report", viewer=len(loaded.records) <= 1000)
        print(f"report: {out / 'report' / 'index.html'}")
    return 1 if outcome.missing else 0


def _user_agent_origins(spec: AccumulationSpec) -> dict[str, dict[str, str]]:
    """Record label -> where a user agent comes from now (import path, package version,
    options hash), so a resume refuses once another version of the agent is installed."""
    from mirrorcraft.agents.registry import LLM_AGENTS
    from mirrorcraft.runner.accumulation import plan_streams
    from mirrorcraft.runner.executor import agent_origin

    options = {v.name: dict(v.options) for v in spec.variants}
    out: dict[str, dict[str, str]] = {}
    train, evals = plan_streams(spec)
    for stream in (*train, *evals):
        if stream.agent in LLM_AGENTS:
            continue
        origin = agent_origin(stream.agent, options.get(stream.variant))
        for c in stream.conditions:
            out[c.agent] = origin
    return out


def _run_locked(
    args: argparse.Namespace,
    spec: AccumulationSpec,
    out: Path,
    worlds: list[str],
    rules: list[str],
) -> Outcome:
    ticker = _Ticker()
    try:
        runner = AccumulationRunner(
            spec, out, workers=args.workers, on_done=ticker.tick, limit=args.limit, say=_say
        )
    except StoreError as exc:
        raise UserError(str(exc)) from None
    ticker.plan(spec, runner.train_db.finished_ids(), runner.eval_db.finished_ids())
    try:
        runner.check_store_names()  # before the preflight's calls
        origins = _user_agent_origins(spec)
        for db in (runner.train_db, runner.eval_db):
            judge = ProseOnly.of(spec.public_dump(), db.meta)
            found = check_resume(
                db,
                runner.spec_hash,
                rules,
                worlds,
                out,
                allow=False,
                agents=origins,
                lineage=judge,
                allowable=False,
            )
            runner.carried.append(found.carried)
        if carried := sum(len(c) for c in runner.carried):
            print(
                f"{carried} stored episode(s) ran under a version of this spec that differs "
                f"from it only in its description: they count as its episodes (now stamped "
                f"{runner.spec_hash})",
                file=sys.stderr,
            )
        if spec.execution.preflight:
            for label in preflight(spec.models, {m.name for m in spec.models}):
                runner.breaker.not_answering(label, time.monotonic())  # probed one at a time
        runner.train_db.set_meta("software_version", __version__)
        outcome = runner.run()
        ticker.line.finish()
        rows = [
            *runner.train_db.run_faults(runner.run_id),
            *runner.eval_db.run_faults(runner.run_id),
        ]
        outcome.fault_table = fault_table(group_faults(rows))
    except (AccumulationError, KnowledgeStoreError) as exc:
        raise UserError(str(exc)) from None
    finally:
        runner.close()
    print(
        f"experiment {spec.name}: {outcome.planned} episodes planned, {outcome.done} run now, "
        f"{outcome.skipped} already done, {outcome.faults} infrastructure faults; "
        f"results in {out}/results.sqlite (training in {out}/train.sqlite, stores in {out}/stores)",
        file=sys.stderr,
    )
    return outcome


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _summary(out: Path) -> tuple[dict[str, Any], Any]:
    from mirrorcraft.analysis import load_results, summarize
    from mirrorcraft.analysis.coverage import note_unfinished

    loaded = load_results(str(out / "results.sqlite"), allow_empty=True)
    train = load_results(str(out / "train.sqlite"), allow_empty=True).records
    summary = summarize(loaded.records, excluded=loaded.excluded, train_records=train)
    note_unfinished(summary, out / "results.sqlite", (r.episode_id for r in loaded.records))
    return summary, loaded


class _Ticker:
    """The run's progress line: episodes done of those pending, per phase, with an ETA.

    Shown as ``run`` shows its own: redrawn on a terminal, a line every few seconds elsewhere.
    """

    def __init__(self) -> None:
        self.line = ProgressLine("episodes", 0, enabled=True)
        self.todo = {"train": 0, "eval": 0}
        self.done = {"train": 0, "eval": 0}

    def plan(self, spec: AccumulationSpec, trained: set[str], evaluated: set[str]) -> None:
        from mirrorcraft.runner.accumulation import plan_streams

        train, evals = plan_streams(spec)
        for phase, streams, finished in (("train", train, trained), ("eval", evals, evaluated)):
            ids = {c.episode_id for s in streams for c in s.conditions}
            self.todo[phase] = len(ids - finished)
        self.line.total = self.todo["train"] + self.todo["eval"]
        self.line.set_note(self._note())

    def _note(self) -> str:
        return (
            f"training {self.done['train']}/{self.todo['train']}, "
            f"evaluation {self.done['eval']}/{self.todo['eval']}"
        )

    def tick(self, phase: str) -> None:
        self.done[phase] = self.done.get(phase, 0) + 1
        self.line.advance(note=self._note())


def read_raw(path: Path) -> Any:
    try:
        return load_yaml_file(path)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror})") from None
    except DataError as exc:
        raise UserError(str(exc)) from None
