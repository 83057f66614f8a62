"""What ``mirrorcraft run`` checks around the episodes: the folder lock, the resume guards,
the model preflight, and the closing line about unfinished episodes."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mirrorcraft.agents.registry import MOCK_MODEL
from mirrorcraft.commands.common import UserError, model_error
from mirrorcraft.runner.dispatch import Dispatcher
from mirrorcraft.runner.executor import endpoint_label
from mirrorcraft.runner.guards import (
    ChangedSpecError,
    Fingerprints,
    carried,
    removed,
    stale_episodes,
)
from mirrorcraft.runner.runlock import RunLock, RunLocked
from mirrorcraft.runner.spec import ModelSpec
from mirrorcraft.runner.store import ResultStore
from mirrorcraft.runner.versions import Judge

if TYPE_CHECKING:
    from mirrorcraft.llm.openai_client import OpenAISettings


@contextmanager
def locked(folder: Path) -> Iterator[RunLock]:
    """Hold the folder's run lock for the block; a held lock is a one-line error (exit 2)."""
    if folder.exists() and not folder.is_dir():
        raise UserError(f"--out {folder} is a file; name a folder for the run's results")
    lock = RunLock(folder)
    try:
        lock.acquire()
    except RunLocked as exc:
        raise UserError(str(exc)) from None
    try:
        yield lock
    finally:
        lock.release()


def fingerprints(
    spec_hash: str,
    rules: Iterable[str],
    worlds: Iterable[str],
    *,
    real_server: bool,
    agents: Mapping[str, Mapping[str, str]] | None = None,
    lineage: Judge | None = None,
) -> Fingerprints:
    from mirrorcraft.agents.llm.templates import current_prompt_hashes
    from mirrorcraft.backends.rulesets import resolve_rules, vanilla_rules
    from mirrorcraft.body.config import body_fingerprint
    from mirrorcraft.evaluator.tasks import task_fingerprint, task_table
    from mirrorcraft.world.registry import load_world

    return Fingerprints(
        spec_hash,
        {r: resolve_rules(r).fingerprint for r in dict.fromkeys(rules)},
        vanilla_rules().fingerprint,
        {} if real_server else {w: load_world(w).world.fingerprint for w in dict.fromkeys(worlds)},
        {a: dict(origin) for a, origin in (agents or {}).items()},
        body_fingerprint("mineflayer" if real_server else "sim"),
        {t: task_fingerprint(task) for t, task in task_table().items()},
        prompts=current_prompt_hashes(),
        lineage=lineage,
    )


@dataclass
class Resume:
    """What ``check_resume`` found among the stored episodes."""

    stale: set[str] = field(default_factory=set)
    """Episodes that differ from the spec now (run again under --allow-changed-spec)."""
    carried: list[str] = field(default_factory=list)
    """Episodes of another version of the spec that measure what it asks now: to stamp with
    the spec hash now (``store.restamp``), so that they count as its episodes."""
    removed: int = 0
    """Episodes of conditions the spec no longer lists (kept, left out of the analysis)."""


def check_resume(
    store: ResultStore,
    spec_hash: str,
    rules: Iterable[str],
    worlds: Iterable[str],
    folder: Path,
    *,
    allow: bool,
    real_server: bool = False,
    agents: Mapping[str, Mapping[str, str]] | None = None,
    lineage: Judge | None = None,
    allowable: bool = True,
) -> Resume:
    """Refuse to resume over episodes of another spec, rule set, world, body, task definition
    or user agent (its import path, package version or options; unless ``allow``); says
    which stored episodes differ (to run again) and, given the grid spec's ``lineage``,
    which of another spec version still count and how many the spec no longer lists.
    Without ``allowable`` (accumulation runs) a refusal does not offer the flag."""
    records = list(store.records())
    if not records:
        return Resume()
    stored_worlds = sorted({r.world for r in records} & set(worlds))
    now = fingerprints(
        spec_hash, rules, stored_worlds, real_server=real_server, agents=agents, lineage=lineage
    )
    try:
        stale = stale_episodes(records, now, folder, allow=allow, allowable=allowable)
    except ChangedSpecError as exc:
        raise UserError(str(exc)) from None
    if stale:
        print(
            f"--allow-changed-spec: {len(stale)} stored episode(s) differ from the spec now; "
            "those the spec still asks for run again, the rest are left out of the analysis",
            file=sys.stderr,
        )
    return Resume(stale, carried(records, now, stale), removed(records, now))


def preflight(models: Sequence[ModelSpec], used: set[str]) -> set[str]:
    """One call per model endpoint in ``used`` (mock models exempt); a problem stops the run.
    Returns the labels of the endpoints whose preflight timed out (``runner.executor.endpoint_label``),
    for the run to start them as failing (``runner.dispatch.Breaker.not_answering``); one that
    refused or answered 5xx fails fast, and the run's fault policy handles it as before."""
    from mirrorcraft.llm.base import LLMConfigError
    from mirrorcraft.llm.factory import make_settings
    from mirrorcraft.llm.preflight import check_all

    settings = []
    for m in models:
        if m.name not in used or m.name in (MOCK_MODEL, "none"):
            continue
        try:
            settings.append(make_settings(m.name, m.base_url, m.api_key_env, **m.client))
        except LLMConfigError as exc:
            raise model_error(m.name, exc) from None
    if not settings:
        return set()
    results = check_all(
        settings, lambda: print(f"preflight: {_probing(settings)}", file=sys.stderr, flush=True)
    )
    problems = [r.problem for r in results if r.problem]
    for r in results:
        if r.warning:
            print(f"preflight: {r.warning}", file=sys.stderr)
    if problems:
        raise UserError(
            "the model preflight failed, nothing was run:\n  " + "\n  ".join(problems)
            if len(problems) > 1
            else f"the model preflight failed, nothing was run: {problems[0]}"
        )
    bases = {m.name: m.base_url for m in models}
    return {endpoint_label(r.model, bases.get(r.model)) for r in results if r.timed_out}


def _probing(settings: Sequence[OpenAISettings]) -> str:
    """What the preflight is waiting for and how long it may take: an endpoint that accepts
    connections but never answers keeps it waiting for every attempt's full time limit."""
    from mirrorcraft.llm.openai_client import endpoint_host
    from mirrorcraft.llm.preflight import PREFLIGHT_MAX_RETRIES

    parts = [
        f"{s.model!r} at {endpoint_host(s.base_url)} (each request waits up to "
        f"{s.timeout_s:g} s, client.timeout_s; "
        f"{1 + min(s.max_retries, PREFLIGHT_MAX_RETRIES)} attempt(s) at most)"
        for s in settings
    ]
    return "still waiting for the one-token call to each model endpoint: " + ", ".join(parts)


def preflight_remote(urls: Iterable[str], timeout_s: float = 5.0) -> None:
    """Each remote agent must at least accept a connection before the first episode: an agent
    that was never started, or a wrong host or port, stops the run with one line instead of
    faulting every episode until the endpoint is given up (the protocol has no no-op call,
    so the path is checked by the first reset: a wrong one is a ``config`` fault at once)."""
    import socket
    from urllib.parse import urlsplit

    from mirrorcraft.runner.executor import remote_label

    problems = []
    for url in sorted(set(urls)):
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
            socket.create_connection((host, port), timeout=timeout_s).close()
        except (OSError, ValueError) as exc:
            why = "no answer" if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__
            problems.append(f"{remote_label(url)}: cannot connect to {host} ({why})")
    if problems:
        raise UserError(
            "the remote agent preflight failed, nothing was run: "
            + "; ".join(problems)
            + " (start the agent or fix its URL, then rerun; execution.preflight: false skips "
            "this check)"
        )


GIVEN_UP_WHY = {
    "worker": ("their worker died on every attempt", "execution.max_worker_faults"),
    "timeout": (
        "they ran past their time limit on every attempt",
        "execution.episode_timeout_s or execution.max_timeouts",
    ),
}
"""Why episodes of each capped fault kind were given up, and the setting that brings them back."""


def given_up_note(gave_up: Mapping[str, tuple[str, int]], caps: Mapping[str, int]) -> str:
    """The line before a run: the episodes given up in earlier runs, why and what to raise."""
    parts = []
    for kind, (why, setting) in GIVEN_UP_WHY.items():
        n = sum(1 for k, _ in gave_up.values() if k == kind)
        if n:
            parts.append(f"{n} because {why} ({caps[kind]} time(s) or more: raise {setting})")
    return (
        f"{len(gave_up)} episode(s) given up over earlier runs, not run (status given_up; "
        f"the faults table keeps each attempt): {'; '.join(parts)} to try them again"
    )


def not_finished_message(missing: int, dispatchers: Sequence[Dispatcher]) -> str:
    """The closing line for a run that left episodes unfinished, saying why and what next."""
    faults = stopped = 0
    given_up = dict.fromkeys(GIVEN_UP_WHY, 0)
    reasons: dict[str, None] = {}
    for d in dispatchers:
        for _entry, why in d.left:
            if why.startswith(("configuration error", "endpoint failing")):
                stopped += 1
                reasons[why] = None
            elif why.startswith("given up"):
                given_up["timeout" if "time-out" in why else "worker"] += 1
            else:
                faults += 1
    gave_up = sum(given_up.values())
    other = max(missing - faults - stopped - gave_up, 0)
    parts = []
    if faults:
        parts.append(f"{faults} after repeated infrastructure faults")
    if stopped:
        parts.append(f"{stopped} held back from an endpoint that kept failing or is misconfigured")
    if other:
        parts.append(f"{other} not run (--limit, or interrupted)")
    for kind, (why, setting) in GIVEN_UP_WHY.items():
        if given_up[kind]:
            parts.append(
                f"{given_up[kind]} given up after {why} (status given_up: not run again "
                f"unless {setting} is raised)"
            )
    which = "the others" if gave_up else "them"
    retry = (
        f"; rerun the same command to retry {which}: every unfinished episode gets fresh "
        "attempts (the faults table keeps each fault for the record)"
        if missing > gave_up
        else ""
    )
    lines = [f"{missing} episode(s) not finished ({', '.join(parts)}){retry}"]
    lines += [f"  {why}" for why in reasons if why.startswith("configuration error")]
    return "\n".join(lines)


def no_action_note(records: Iterable[object]) -> str | None:
    """A closing note when episodes ended before their first action because the model's
    replies could not be used as actions (termination ``no_action``, ``unusable_replies``):
    they are scored as real outcomes (Score 0), which for a model that never follows the reply
    format is a misconfiguration, not a measurement; None when there are none."""
    stopped: dict[tuple[str, str], list[int]] = {}
    for r in records:
        key = (str(getattr(r, "agent", "")), str(getattr(r, "model", "")))
        counts = stopped.setdefault(key, [0, 0])
        counts[1] += 1
        if (
            getattr(r, "termination", "") == "no_action"
            and getattr(r, "actions_used", 1) == 0
            and (getattr(r, "unusable_replies", 0) or 0) > 0
        ):
            counts[0] += 1
    parts = [f"{n} of {total} of {a} with {m}" for (a, m), (n, total) in stopped.items() if n]
    if not parts:
        return None
    return (
        "note: episodes ended before their first action because the model's replies could not "
        f"be used as actions, even after the repair call ({'; '.join(parts)}); they count as "
        "Score 0. Check that the model answers in the configuration's JSON reply format "
        "(the report's usage table counts unusable replies)"
    )
