"""``mirrorcraft design mirror|biome``: build a new rule suite or biome spec with a designer and a judge."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from mirrorcraft.commands.common import UserError, add_progress_flag, list_option
from mirrorcraft.progress import ProgressLine


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "design",
        help="design a new rule suite or biome spec (LLM designer + judge, or static-only)",
    )
    s = p.add_subparsers(dest="design_kind", metavar="KIND", required=True)
    mirror = s.add_parser("mirror", help="a new rule suite (datapack manifest)")
    mirror.add_argument("--id", default="D01", help="the suite id to design (default D01)")
    biome = s.add_parser("biome", help="a new biome spec")
    biome.add_argument("--base", default="plains", help="packaged biome to start from")
    biome.add_argument("--name", default=None, help="the new biome's name (default <base>_variant)")
    biome.add_argument(
        "--worlds", type=int, default=2, help="candidate worlds generated per check (1-4)"
    )
    for q in (mirror, biome):
        q.add_argument(
            "--tasks",
            action="append",
            default=None,
            help="selected tasks, repeated or comma-separated (default: the three progression tasks)",
        )
        q.add_argument("--model", help="model for the designer and the judge")
        q.add_argument("--base-url", help="OpenAI-compatible API root of the model")
        q.add_argument("--api-key-env", help="environment variable holding the API key")
        q.add_argument("--rounds", type=int, default=4, help="designer/judge rounds (default 4)")
        q.add_argument(
            "--timeout",
            type=float,
            default=None,
            metavar="SECONDS",
            help="limit for one model call (default 60); a whole spec is a long reply, so raise "
            "it for a slow endpoint rather than have each call cut off and asked again",
        )
        q.add_argument("--constraints", default="", help="what you want from the design, in words")
        q.add_argument("--spec", help="starting spec (YAML/JSON); default: sampler draw or base")
        q.add_argument("--seed", type=int, default=0, help="seed of the sampler (default 0)")
        q.add_argument(
            "--static-only", action="store_true", help="no model: seeded sampler + compiler audit"
        )
        q.add_argument(
            "--max-attempts", type=int, default=200, help="sampler attempts in --static-only mode"
        )
        q.add_argument("--out", required=True, help="folder for the spec, artifacts and log")
        add_progress_flag(q)
    p.set_defaults(handler=run)


def _kind(args: argparse.Namespace) -> Any:
    from mirrorcraft.design.run import DesignInputError, make_kind

    tasks = tuple(list_option(args.tasks) or ("iron_armor", "diamond", "enchantment"))
    try:
        if args.design_kind == "mirror":
            return make_kind("mirror", tasks, suite_id=args.id)
        return make_kind("biome", tasks, base=args.base, name=args.name, worlds=args.worlds)
    except DesignInputError as exc:
        raise UserError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    from mirrorcraft.design.loop import DesignSettings
    from mirrorcraft.design.run import DesignInputError, check_folder, initial_spec, run_static

    if args.rounds < 1 or args.max_attempts < 1:
        raise UserError("--rounds and --max-attempts must be at least 1")
    if not args.static_only and not args.model:
        raise UserError(
            "give --model (with --base-url) for the designer and judge, or --static-only"
        )
    if args.static_only and args.spec:
        raise UserError(
            "--spec starts the designer/judge loop; --static-only samples its own proposals"
        )
    kind = _kind(args)
    out = Path(args.out)
    try:
        check_folder(kind, out)
    except DesignInputError as exc:
        raise UserError(str(exc)) from None
    steps = args.max_attempts if args.static_only else args.rounds
    line = ProgressLine(
        f"design {args.design_kind}",
        steps,
        unit="attempts" if args.static_only else "rounds",
        enabled=args.progress,
        upper_bound=True,
    )

    def watch(note: str, step_done: bool) -> None:
        if step_done:
            line.advance(note=note)
        else:
            line.set_note(note)

    settings = DesignSettings(
        rounds=args.rounds,
        constraints=args.constraints,
        seed=args.seed,
        max_attempts=args.max_attempts,
    )
    try:
        if args.static_only:
            outcome, files = run_static(kind, settings, out, watch)
        else:
            start = initial_spec(kind, Path(args.spec) if args.spec else None, args.seed)
            outcome, files = asyncio.run(_run_llm(args, kind, settings, out, start, watch))
    except DesignInputError as exc:
        raise UserError(str(exc)) from None
    line.finish()
    log = out / "design_log.jsonl"
    if not outcome.accepted:
        print(f"mirrorcraft: design not accepted: {outcome.message}; the full log is in {log}")
        return 1
    controls = outcome.controls.summary if outcome.controls else {}
    print(
        f"design accepted ({outcome.message}); controls passed: {controls.get('rows_passed')}/"
        f"{controls.get('rows')} rows, observable changes {controls.get('observable_changes')}"
    )
    for f in files:
        print(f"wrote {f}")
    print(f"log: {log}")
    return 0


async def _run_llm(
    args: argparse.Namespace, kind: Any, settings: Any, out: Path, start: Any, watch: Any
) -> Any:
    from mirrorcraft.design.run import run_llm
    from mirrorcraft.llm.base import LLMConfigError
    from mirrorcraft.llm.factory import close_client, make_client

    out.mkdir(parents=True, exist_ok=True)
    try:
        client = make_client(
            args.model,
            args.base_url,
            args.api_key_env,
            cache_path=out / "llm_cache.sqlite",
            cache_scope=f"design-{kind.name}-{args.seed}",
            **({} if args.timeout is None else {"timeout_s": args.timeout}),
        )
    except LLMConfigError as exc:
        raise UserError(str(exc)) from None
    try:
        return await run_llm(kind, client, settings, out, start, watch)
    except LLMConfigError as exc:
        raise UserError(f"{exc}; the design log is in {out / 'design_log.jsonl'}") from None
    finally:
        await close_client(client)
