"""``mirrorcraft run [SPEC]``: run an experiment, resumably, and print the headline table."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from importlib import resources
from pathlib import Path
from typing import Any

from mirrorcraft import __version__
from mirrorcraft.agents.registry import MOCK_MODEL, agent_problem, needs_model
from mirrorcraft.backends.rulesets import resolve_rules
from mirrorcraft.commands.common import (
    UserError,
    count_int,
    list_option,
    model_error,
    positive_int,
)
from mirrorcraft.commands.run_guards import (
    Resume,
    check_resume,
    given_up_note,
    locked,
    no_action_note,
    not_finished_message,
    preflight,
    preflight_remote,
)
from mirrorcraft.faults import InfrastructureFault
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.runner.dispatch import Dispatcher
from mirrorcraft.runner.executor import agent_origin, plan_jobs
from mirrorcraft.runner.fault_report import fault_table, group_faults
from mirrorcraft.runner.loops import new_run_id, run_async, run_local, run_ray
from mirrorcraft.runner.progress import Progress
from mirrorcraft.runner.spec import (
    IDENTITY_KEY,
    AgentEntry,
    ExperimentSpec,
    ModelSpec,
    SpecError,
    expand,
    load_spec,
    parse_spec,
    run_identity,
)
from mirrorcraft.runner.store import ResultStore, StoreError
from mirrorcraft.runner.versions import VERSIONS_KEY, Lineage, with_version
from mirrorcraft.world.registry import world_problem

VIEWER_LIMIT = 1000


def add_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="run an experiment (default: the small reference experiment)")
    p.add_argument(
        "spec", nargs="?", default=None, help="experiment spec YAML (default: the packaged default)"
    )
    p.add_argument("--out", default=None, help="results folder (default: runs/<experiment name>)")
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="worker processes (default: one per CPU; 1 with --backend mineflayer; at most 4 per CPU)",
    )
    p.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="local worker processes (default) or a Ray cluster (pip install -e '.[ray]')",
    )
    p.add_argument("--address", default=None, help="Ray cluster address (with --executor ray)")
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=16,
        help="episodes in flight at once for LLM and remote agents (default: 16)",
    )
    p.add_argument(
        "--limit", type=count_int, default=None, help="run at most this many pending episodes"
    )
    p.add_argument(
        "--agent",
        action="append",
        default=None,
        help="run these agents instead of the spec's (repeated or comma-separated)",
    )
    p.add_argument(
        "--model", default=None, help="model name for LLM agents (replaces the spec's models)"
    )
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for --model")
    p.add_argument(
        "--api-key-env", default=None, help="environment variable holding the API key for --model"
    )
    p.add_argument("--no-report", action="store_true", help="skip writing the HTML report")
    p.add_argument(
        "--backend",
        choices=["sim", "mineflayer"],
        default=None,
        help="sim (embedded, default) or mineflayer (real 1.19 servers; see docs/real_server.md)",
    )
    p.add_argument(
        "--saves",
        default=os.environ.get("MIRRORCRAFT_SAVES", "servers"),
        help="mineflayer: the folder written by 'mirrorcraft server prepare' (default: servers/)",
    )
    p.add_argument("--jar", default=None, help="mineflayer: server jar (default: the prepared one)")
    p.add_argument(
        "--server-command",
        default=None,
        help="mineflayer: command starting the server, {jar} replaced (default: java -Xms1G -Xmx2G -jar {jar} nogui)",
    )
    p.add_argument("--node", default="node", help="mineflayer: the Node.js 20 executable")
    p.add_argument(
        "--allow-changed-spec",
        action="store_true",
        help="resume in a folder whose episodes ran under another spec, rule set or world: "
        "differing episodes are rerun (old records kept in 'superseded'); analysis reads "
        "only the spec that ran last",
    )
    p.set_defaults(handler=run)


def default_spec_path() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / "experiments" / "default.yaml"))


def _spec(args: argparse.Namespace) -> ExperimentSpec:
    path = Path(args.spec) if args.spec else default_spec_path()
    try:
        spec = load_spec(path)
    except SpecError as exc:
        raise UserError(str(exc)) from None
    changes: dict[str, Any] = {}
    if args.agent:
        changes["agents"] = tuple(list_option(args.agent) or ())
    if args.model:
        if not args.base_url and args.model != MOCK_MODEL:
            raise UserError(
                f"--model {args.model} needs --base-url: the OpenAI-compatible API root of the"
                " endpoint serving it (e.g. http://127.0.0.1:8000/v1 for a local server), and"
                " --api-key-env NAME if it wants a key"
            )
        changes["models"] = (
            ModelSpec(name=args.model, base_url=args.base_url, api_key_env=args.api_key_env),
        )
    if getattr(args, "backend", None):
        changes["backend"] = args.backend
    if not changes:
        return spec
    # Validated again, so an option can no more list an agent twice (or none) than the file can.
    try:
        return parse_spec({**spec.model_dump(), **changes}, f"{path} with the command's options")
    except SpecError as exc:
        raise UserError(str(exc)) from None


def _validate(spec: ExperimentSpec) -> None:
    for w in spec.worlds:
        if problem := world_problem(w):
            raise UserError(problem)
    for entry in spec.agent_entries:
        a = entry.name
        if why := agent_problem(a):
            raise UserError(why)
        _check_agent_options(entry)
        if needs_model(a):
            if all(m.name == "none" for m in spec.models):
                raise UserError(
                    f"agent {a!r} needs a model: add models to the spec or pass --model"
                )
            from mirrorcraft.llm.base import LLMConfigError
            from mirrorcraft.llm.factory import make_settings
            from mirrorcraft.llm.openai_client import read_api_key

            for m in spec.models:
                if m.name == MOCK_MODEL:
                    continue
                try:
                    make_settings(m.name, m.base_url, m.api_key_env, **m.client)
                    if m.api_key_env:
                        read_api_key(m.api_key_env)
                except LLMConfigError as exc:
                    raise model_error(m.name, exc) from None
    for r in spec.rules:
        try:
            resolve_rules(r)
        except RulesError as exc:
            raise UserError(str(exc)) from None
        except Exception as exc:  # manifests: a clear message, never a traceback
            raise UserError(f"rule set {r!r}: {exc}") from None
    _check_disclosure(spec)


def _check_disclosure(spec: ExperimentSpec) -> None:
    """A disclosed episode gives the agent the suite's rule sheet, which only a packaged
    suite or a manifest has: under a bare datapack it would run with no sheet at all, as a
    hidden episode recorded as disclosed."""
    from mirrorcraft.runner.executor import rule_sheet_for

    if "disclosed" not in spec.disclosure:
        return
    if not any(a in spec.disclosed_agents for a in spec.agent_ids):
        return
    for r in spec.rules:
        if r != "vanilla" and rule_sheet_for(r) is None:
            raise UserError(
                f"rule set {r!r} has no rule sheet to disclose (a datapack holds only the "
                "rules): name a suite manifest (.yaml) there, or drop 'disclosed' from disclosure"
            )


def _check_agent_options(entry: AgentEntry) -> None:
    """Let the agent refuse its options (and a user agent fail to be created) before any
    episode runs, with its own one-line reason."""
    from mirrorcraft.agents.plugins import PluginError, build_plugin, check_options, is_remote
    from mirrorcraft.agents.registry import (
        UnknownAgentError,
        is_builtin,
        make_agent,
        takes_options,
    )
    from mirrorcraft.backends.rulesets import vanilla_rules

    try:
        if is_builtin(entry.name):
            if entry.options and not takes_options(entry.name):
                raise UserError(f"agent {entry.name!r} takes no options")
            if entry.options:
                vanilla = vanilla_rules()
                make_agent(
                    entry.name, active=vanilla, vanilla=vanilla, model=MOCK_MODEL,
                    options=dict(entry.options),
                )  # fmt: skip
        elif is_remote(entry.name):
            check_options(entry.name, entry.options, entry.id)
        else:
            build_plugin(entry.name, entry.id, entry.options)
    except (PluginError, UnknownAgentError) as exc:
        raise UserError(str(exc)) from None
    except (TypeError, ValueError) as exc:
        raise UserError(f"agent {entry.id!r}: invalid options: {exc}") from None


def _backend_options(args: argparse.Namespace, spec: ExperimentSpec) -> dict[str, Any]:
    """The mineflayer options, checked before any episode starts ({} for the embedded backend)."""
    if spec.backend != "mineflayer":
        return {}
    from mirrorcraft.backends.mineflayer.backend import MineflayerOptions, run_problems
    from mirrorcraft.backends.mineflayer.server import DEFAULT_COMMAND

    options = MineflayerOptions(
        saves=Path(args.saves),
        jar=Path(args.jar) if args.jar else None,
        command=args.server_command or DEFAULT_COMMAND,
        node=args.node,
    )
    problems = run_problems(options, list(spec.worlds), list(spec.rules))
    if problems:
        raise UserError("cannot run on real servers:\n  " + "\n  ".join(problems))
    return options.to_dict()


WORKERS_PER_CPU = 4
"""``--workers`` above this many per CPU is refused: each worker is a process of its own
(holding the loaded worlds, or a real server), and more than the CPUs buy nothing."""


def run(args: argparse.Namespace) -> int:
    workers_given = args.workers is not None
    cpus = max(os.cpu_count() or 1, 1)
    if not workers_given:
        args.workers = cpus
    elif args.workers > WORKERS_PER_CPU * cpus:
        raise UserError(
            f"--workers {args.workers}: at most {WORKERS_PER_CPU * cpus} on this machine "
            f"({WORKERS_PER_CPU} per CPU; it has {cpus}); each worker is a process of its own"
        )
    if args.spec:
        from mirrorcraft.commands.accumulate_cmd import is_accumulation, read_raw, run_accumulation

        raw = read_raw(Path(args.spec))
        if is_accumulation(raw):
            return run_accumulation(args, raw, args.spec)
    spec = _spec(args)
    _validate(spec)
    backend_options = _backend_options(args, spec)
    if backend_options and not workers_given:
        args.workers = 1  # every episode runs its own Minecraft server
    out = Path(args.out) if args.out else Path("runs") / spec.name
    with locked(out):
        return _run_locked(args, spec, out, backend_options)


def _run_locked(
    args: argparse.Namespace, spec: ExperimentSpec, out: Path, backend_options: dict[str, Any]
) -> int:
    conditions = expand(spec)
    try:
        store = ResultStore(out / "results.sqlite")
    except StoreError as exc:
        raise UserError(str(exc)) from None
    dispatchers: list[Dispatcher] = []
    with store:
        identity = run_identity(spec, store.meta)
        resume = check_resume(
            store,
            identity,
            spec.rules,
            spec.worlds,
            out,
            allow=args.allow_changed_spec,
            real_server=bool(backend_options),
            agents={e.id: agent_origin(e.name, e.options) for e in spec.agent_entries},
            lineage=Lineage.of(spec, conditions, store.meta),
        )
        stale = resume.stale
        incomplete = store.incomplete_ids()
        if incomplete:
            print(
                f"{len(incomplete)} stored episode(s) have step rows that disagree with their "
                "actions_used (edited or damaged traces); they run again",
                file=sys.stderr,
            )
        finished = store.finished_ids() - stale
        wanted = {c.episode_id for c in conditions}
        caps = {
            "worker": spec.execution.max_worker_faults,
            "timeout": spec.execution.max_timeouts,
        }
        jobs = plan_jobs(
            spec,
            conditions,
            finished,
            cache_path=out / "llm_cache.sqlite",
            backend_options=backend_options,
            spec_hash=identity,
        )
        limits = {j.condition.episode_id: j.timeout_s for j in jobs}
        gave_up = store.give_up_faulty(caps, wanted, limits)
        given_up = set(gave_up)
        if given_up:
            print(given_up_note(gave_up, caps), file=sys.stderr)
            jobs = [j for j in jobs if j.condition.episode_id not in given_up]
        held_back = 0
        if args.limit is not None:
            held_back = max(len(jobs) - max(args.limit, 0), 0)
            jobs = jobs[: max(args.limit, 0)]
        not_answering: set[str] = set()
        if spec.execution.preflight:
            not_answering = preflight(
                spec.models, {j.condition.model for j in jobs if j.endpoint is not None}
            )
            preflight_remote(
                j.agent_ref for j in jobs if j.agent_ref.startswith(("http://", "https://"))
            )
        _say_versions(resume, identity)
        store.restamp(
            resume.carried,
            identity,
            {
                "spec": spec.public_dump(),
                "spec_hash": identity,
                IDENTITY_KEY: spec.hash,
                VERSIONS_KEY: with_version(store.meta, identity, spec.public_dump()),
                "software_version": __version__,
            },
        )
        where = f"with {args.workers} worker(s)"
        if args.executor == "ray":
            where = f"on the Ray cluster at {args.address}" if args.address else "on a local Ray"
        print(
            f"experiment {spec.name}: {len(conditions)} episodes, {len(finished & {c.episode_id for c in conditions})} "
            f"already done, running {len(jobs)} {where}; results in {out}/results.sqlite",
            file=sys.stderr,
        )
        progress = Progress(len(jobs))
        run_id = new_run_id()
        policy = spec.execution
        try:
            model_jobs = [j for j in jobs if j.in_event_loop]
            cpu_jobs = [j for j in jobs if not j.in_event_loop]
            if args.executor == "ray":
                dispatchers.append(
                    run_ray(
                        jobs,
                        store,
                        args.address,
                        progress,
                        policy=policy,
                        run_id=run_id,
                        not_answering=not_answering,
                    )
                )
            else:
                if cpu_jobs:
                    dispatchers.append(
                        run_local(
                            cpu_jobs,
                            store,
                            args.workers,
                            progress,
                            policy=policy,
                            run_id=run_id,
                            not_answering=not_answering,
                        )
                    )
                if model_jobs:
                    concurrency = args.concurrency
                    if backend_options:
                        concurrency = min(concurrency, args.workers)
                    dispatchers.append(
                        run_async(
                            model_jobs,
                            store,
                            concurrency,
                            progress,
                            policy=policy,
                            run_id=run_id,
                            not_answering=not_answering,
                        )
                    )
        except InfrastructureFault as exc:
            raise UserError(str(exc)) from None
        progress.show(force=True)
        failed = len({j.condition.episode_id for j in jobs} - store.finished_ids())
        faults = fault_table(group_faults(store.run_faults(run_id)))
    # One reading of the results serves the headline tables and the report.
    loaded, summary = _summary(out / "results.sqlite", spec)
    print(_headline(summary))
    stopped = no_action_note(loaded.records)
    if stopped:
        print(stopped)
    if faults:
        print(faults)
    if failed:
        print(not_finished_message(failed, dispatchers))
    if held_back:
        print(f"{held_back} episode(s) left for later by --limit; rerun to continue")
    if not args.no_report:
        print(f"report: {_report(out, loaded, summary)}")
    return 0 if not failed else 1


def _say_versions(resume: Resume, identity: str) -> None:
    """Say which stored episodes of earlier versions of the spec count for it now, and how
    many belong to conditions it no longer lists."""
    if resume.carried:
        print(
            f"{len(resume.carried)} stored episode(s) ran under an earlier version of this spec "
            "that measured them as it does now (only its description, checkpoints, list of "
            "conditions, or how its models are reached and called changed): they count as its "
            f"episodes (now stamped {identity})",
            file=sys.stderr,
        )
    if resume.removed:
        print(
            f"{resume.removed} stored episode(s) belong to conditions this spec no longer "
            "lists (or were left behind by --allow-changed-spec): kept in the database, not "
            "run, left out of the analysis (counted as episodes of an earlier version of the "
            "spec)",
            file=sys.stderr,
        )


def _summary(db: Path, spec: ExperimentSpec) -> tuple[Any, dict[str, Any]]:
    from mirrorcraft.analysis import Declared, load_results, summarize

    # the spec names its own rule sets and agents (user packs, plugins): they are known here
    declared = Declared(frozenset(spec.rules), frozenset(spec.agent_ids))
    loaded = load_results(str(db), allow_empty=True, declared=declared)
    summary = summarize(
        loaded.records, checkpoints=list(spec.checkpoints), excluded=loaded.excluded
    )
    from mirrorcraft.analysis.coverage import note_unfinished

    note_unfinished(summary, db, (r.episode_id for r in loaded.records))
    from mirrorcraft.analysis.usage import note_fault_attempts

    note_fault_attempts(summary, loaded.path, loaded.kind)
    return loaded, summary


def _headline(summary: dict[str, Any]) -> str:
    """The configuration and suite tables; ``mirrorcraft analyze`` prints the rest."""
    from mirrorcraft.report.render import render_text
    from mirrorcraft.report.tables import build_tables

    tables = build_tables(summary)
    keys = ("configurations", "suites", "controls")
    return "\n".join(render_text(t) for t in tables if t.key in keys)


def _report(out: Path, loaded: Any, summary: dict[str, Any]) -> str:
    from mirrorcraft.analysis.compare import compare
    from mirrorcraft.analysis.reference import load_reference
    from mirrorcraft.report.build import write_report
    from mirrorcraft.report.files import ReportFolderError

    viewer = len(loaded.records) <= VIEWER_LIMIT
    beside = compare(loaded.records, load_reference())  # the report's compare.html
    try:
        write_report(loaded, summary, out / "report", viewer=viewer, comparison=beside)
    except ReportFolderError as exc:
        return f"not written: {exc} (mirrorcraft report RESULTS --out DIR writes one)"
    suffix = (
        ""
        if viewer
        else f" (episode pages skipped above {VIEWER_LIMIT} episodes; to write them: "
        f"{shlex.join(['mirrorcraft', 'report', str(loaded.path), '--out', str(out / 'report')])})"
    )
    return str(out / "report" / "index.html") + suffix
