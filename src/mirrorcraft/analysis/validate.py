"""Consistency checks on episode records, run before any number is computed.

``loading`` checks each record's shape (fields and types); this module checks
that a well-formed record does not contradict itself or name something this
package does not know:

- the Score recomputed from the recorded milestones and the task's milestone
  values (the paper's section 3.4: the largest value among the task's
  milestones that were reached, 0 when none) equals the stored ``score``;
  ``success`` equals ``score == 100``; reaching the final advancement means
  success; ``termination`` is ``success`` exactly when the episode succeeded;
- ``actions_used`` lies within the budget, ``score_trace`` and ``signatures``
  hold one entry per action, every milestone and encounter step lies within
  the actions taken, and the Score trace is the one the milestones imply;
- the rule set, task, agent, disclosure and termination are known values
  (case-sensitive: ``Vanilla`` is not ``vanilla``); a Vanilla episode cannot
  have disclosed rules, nor a non-vanilla rule-set fingerprint;
- one world has one biome across all records, and one rule-set id, the vanilla rules,
  one world under one rule set, the body and one task each have one fingerprint (where
  recorded).

A ``termination`` that names an infrastructure fault (the failure taxonomy of
the design notes) marks a record that is not an evaluation outcome: it is left
out of every number and counted, like the database's fault rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from mirrorcraft.runner.records import TERMINATIONS, EpisodeRecord

VANILLA = "vanilla"
DISCLOSURES = ("hidden", "disclosed")
INFRA_TERMINATIONS = (
    "infra_fault",
    "connection",
    "disconnected",
    "timeout",
    "server",
    "config",
    "worker",
    "missing_datapack",
    "unavailable_advancement",
)
"""``termination`` values that name an infrastructure fault: never scored, rerun under the same id."""


@dataclass(frozen=True)
class Declared:
    """Ids the user vouches for beyond the packaged ones (``--rule-set``, ``--agent``)."""

    rule_sets: frozenset[str] = frozenset()
    agents: frozenset[str] = frozenset()


@dataclass(frozen=True)
class InvalidRecord:
    """A record left out (``--skip-invalid``) or refused, with where it was and why."""

    where: str
    """``file:line`` for JSONL, ``file: episode 'id'`` for a database."""
    episode_id: str
    reason: str
    kind: str = "inconsistent"
    """``inconsistent`` (read, but it contradicts itself), ``bad`` (JSON, but not an episode
    record: a field missing or of the wrong type) or ``unreadable`` (not JSON: a line cut
    short when its writer was killed, say)."""

    def message(self) -> str:
        return f"{self.where}: {self.kind} episode record: {self.reason}"

    def to_json(self) -> dict[str, str]:
        return {"where": self.where, "episode_id": self.episode_id, "reason": self.reason}


@lru_cache(maxsize=1)
def packaged_suites() -> tuple[str, ...]:
    from mirrorcraft.datapack.suites import list_suites

    return tuple(m.id for m in list_suites())


@lru_cache(maxsize=1)
def _agent_names() -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    from mirrorcraft.agents.reference import REFERENCE_AGENTS
    from mirrorcraft.agents.registry import LLM_AGENTS, agent_variants

    names = (*REFERENCE_AGENTS, *LLM_AGENTS)
    variants = {name: agent_variants(name) for name in LLM_AGENTS}
    return names, variants


def _hint(value: str, known: Iterable[str]) -> str:
    same = [k for k in known if k.lower() == value.lower()]
    return f" (ids are case-sensitive: did you mean {same[0]!r}?)" if same else ""


def rule_set_problem(rules: str, record: EpisodeRecord, declared: Declared) -> str | None:
    """Why ``rules`` is not a rule set this analysis may use (None when it is).

    Known: ``vanilla``, a packaged suite id, a rule set declared by the user, or
    a user rule set the runner recorded (its fingerprint differs from vanilla's).
    """
    known = (VANILLA, *packaged_suites())
    if rules in known or rules in declared.rule_sets:
        return None
    hint = _hint(rules, (*known, *declared.rule_sets))
    if hint:
        return f"rules {rules!r} is not a known rule set{hint}"
    fingerprint, vanilla = record.ruleset_fingerprint, record.vanilla_fingerprint
    if fingerprint and vanilla and fingerprint != vanilla:
        return None
    return (
        f"rules {rules!r} is not a known rule set (vanilla, {', '.join(packaged_suites())}); "
        "declare a user rule set with --rule-set"
    )


USER_AGENT_KINDS = ("import", "entry_point", "remote")
"""``agent_origin`` kinds of users' own agents (``agents.plugins.AgentOrigin``)."""


def _is_builtin(agent: str) -> bool:
    names, variants = _agent_names()
    if agent in names:
        return True
    base, _, rest = agent.partition("[")
    return rest.endswith("]") and rest[:-1] in variants.get(base, ())


def agent_problem(
    agent: str, declared: Declared, record: EpisodeRecord | None = None
) -> str | None:
    """Why ``agent`` is not a configuration this analysis may use (None when it is).

    Known: a reference agent, an LLM configuration, a named variant
    (``mineevolve[no_curator]``), a configuration with a run label after a colon
    (the accumulation runner's ``mineevolve:full@3``), a declared name, or a user's
    agent the runner recorded with where it came from (``agent_origin``: an import
    path, an entry point or a URL; or a packaged configuration run with options).
    """
    names, _variants = _agent_names()
    if _is_builtin(agent) or agent in declared.agents:
        return None
    origin = record.agent_origin if record is not None else {}
    if origin.get("kind") in USER_AGENT_KINDS and origin.get("ref"):
        return None
    if origin.get("kind") == "builtin" and _is_builtin(origin.get("ref", "")):
        return None
    head, colon, label = agent.partition(":")
    if colon and label and head in names:
        return None
    hint = _hint(agent, (*names, *declared.agents))
    return f"agent {agent!r} is not a known configuration{hint or '; declare one with --agent'}"


def task_problem(task: str) -> str | None:
    from mirrorcraft.evaluator.tasks import progression_tasks, task_table

    if task in task_table():
        return None
    hint = _hint(task, task_table())
    known = f" ({', '.join(progression_tasks())}, or a tech-tree task)"
    return f"task {task!r} is not a known task{hint or known}"


def is_infrastructure(record: EpisodeRecord) -> bool:
    """Whether the record stands for an infrastructure fault (left out and counted)."""
    return record.termination in INFRA_TERMINATIONS


def _score_trace(milestones: dict[str, int], values: dict[str, int], n: int) -> list[int]:
    """The Score after each of ``n`` actions implied by the milestone steps."""
    trace = [0] * n
    for advancement, step in milestones.items():
        value = values.get(advancement)
        if value is None:
            continue
        for i in range(max(step, 1) - 1, n):
            trace[i] = max(trace[i], value)
    return trace


def _outcome_problems(r: EpisodeRecord) -> list[str]:
    from mirrorcraft.evaluator.tasks import get_task

    out: list[str] = []
    task = get_task(r.task)
    values = {m.advancement: m.value for m in task.milestones}
    recomputed = max((values[a] for a in r.milestones if a in values), default=0)
    if recomputed != r.score:
        out.append(f"score {r.score} but the recorded milestones give {recomputed}")
    if r.success != (r.score == 100):
        out.append(f"success is {str(r.success).lower()} but score is {r.score}")
    if task.final.advancement in r.milestones and not r.success:
        out.append(
            f"the final advancement {task.final.advancement} was reached but success is false"
        )
    if (r.termination == "success") != r.success:
        out.append(f"termination {r.termination!r} but success is {str(r.success).lower()}")
    counters = ("model_calls", "prompt_tokens", "completion_tokens", "cached_calls")
    negative = [name for name in (*counters, "estimated_calls") if getattr(r, name) < 0]
    if negative:
        out.append(f"{negative[0]} is negative")
    if r.cost_usd is not None and r.cost_usd < 0:
        out.append(f"cost_usd {r.cost_usd} is negative")
    for name in ("cached_calls", "estimated_calls"):
        if getattr(r, name) > r.model_calls:
            out.append(f"{name} {getattr(r, name)} exceeds model_calls {r.model_calls}")
    if r.unusable_replies is not None and not 0 <= r.unusable_replies <= r.model_calls:
        out.append(f"unusable_replies {r.unusable_replies} is outside 0..model_calls")
    if r.failed_attempts and min(r.failed_attempts.values()) < 0:
        out.append("failed_attempts holds a negative count")
    if r.budget < 1:
        out.append(f"budget {r.budget} is not a positive number of actions")
    if not 0 <= r.actions_used <= max(r.budget, 0):
        out.append(f"actions_used {r.actions_used} is outside 0..budget {r.budget}")
    n = r.actions_used
    if len(r.score_trace) != n:
        out.append(f"score_trace has {len(r.score_trace)} entries for {n} actions")
    if len(r.signatures) != n:
        out.append(f"signatures has {len(r.signatures)} entries for {n} actions")
    late = sorted(a for a, step in r.milestones.items() if not 0 <= step <= n)
    if late:
        out.append(f"milestone {late[0]} at action {r.milestones[late[0]]}, outside 0..{n}")
    bad = [e.step for e in r.encounters if not 1 <= e.step <= n]
    if bad:
        out.append(f"rule encounter at action {bad[0]}, outside 1..{n}")
    if not late and len(r.score_trace) == n:
        implied = _score_trace(r.milestones, values, n)
        wrong = next((i for i in range(n) if implied[i] != r.score_trace[i]), None)
        if wrong is not None:
            out.append(
                f"score_trace says {r.score_trace[wrong]} after action {wrong + 1} but the "
                f"milestones reached by then give {implied[wrong]}"
            )
    return out


def record_problems(r: EpisodeRecord, declared: Declared | None = None) -> list[str]:
    """Everything inconsistent about one (well-formed, evaluation) record; empty when none."""
    declared = declared or Declared()
    out: list[str] = []
    for problem in (
        rule_set_problem(r.rules, r, declared),
        task_problem(r.task),
        agent_problem(r.agent, declared, r),
    ):
        if problem:
            out.append(problem)
    if r.disclosure not in DISCLOSURES:
        out.append(f"disclosure {r.disclosure!r} is neither 'hidden' nor 'disclosed'")
    if r.termination not in TERMINATIONS:
        known = ", ".join((*TERMINATIONS, *INFRA_TERMINATIONS))
        out.append(
            f"termination {r.termination!r} is not a known outcome or fault ({known})"
            + _hint(r.termination, (*TERMINATIONS, *INFRA_TERMINATIONS))
        )
    if r.rules == VANILLA and r.disclosure == "disclosed":
        out.append("a Vanilla episode cannot have disclosed rules (there is no changed rule)")
    if (
        r.rules == VANILLA
        and r.ruleset_fingerprint
        and r.vanilla_fingerprint
        and r.ruleset_fingerprint != r.vanilla_fingerprint
    ):
        out.append("a Vanilla episode whose rule-set fingerprint is not the vanilla one")
    if task_problem(r.task) is None:
        out += _outcome_problems(r)
    return out


def steps_problem(r: EpisodeRecord, count: int, first: int | None, last: int | None) -> str | None:
    """Whether a stored step trace (count, first and last step) fits ``actions_used``."""
    n = r.actions_used
    if count != n:
        return f"{count} step records for actions_used {n}"
    if n and (first != 1 or last != n):
        return f"step records numbered {first}..{last} instead of 1..{n}"
    return None


@dataclass
class CrossCheck:
    """Checks across records, fed one record at a time: one biome per world, and one
    fingerprint per rule set, for the vanilla rules, per world and rule set, for the body
    and per task (where recorded), so that episodes of differently built rules, worlds,
    bodies or tasks (runs of another software version, a suite edited in place) are never
    pooled under one name; and one set of prompts per configuration (its template hashes and
    prompt-building version, where recorded)."""

    biomes: dict[str, tuple[str, str]] = field(default_factory=dict)
    fingerprints: dict[tuple[str, ...], tuple[str, str]] = field(default_factory=dict)
    prompts: dict[tuple[str, str], tuple[dict[str, str], str]] = field(default_factory=dict)
    """Per configuration (agent label, disclosure): the first record's template hashes."""

    def problem(self, r: EpisodeRecord) -> str | None:
        return self._fingerprint_problem(r) or self._prompt_problem(r)

    def _prompt_problem(self, r: EpisodeRecord) -> str | None:
        """One configuration's episodes must have been prompted alike: the same template
        files and the same prompt-building version (a record of ours written before the
        version was kept counts as version 1). Only what both records name is compared."""
        hashes = r.prompt_hashes()
        if not hashes:
            return None
        first, where = self.prompts.setdefault((r.agent, r.disclosure), (hashes, r.episode_id))
        differ = sorted(k for k in first.keys() & hashes.keys() if first[k] != hashes[k])
        if not differ:
            return None
        return (
            f"configuration {r.agent!r} ({r.disclosure}) was prompted differently here than in "
            f"episode {where!r}: {', '.join(differ)} differ ({hashes[differ[0]]!r} "
            f"against {first[differ[0]]!r}); episodes of another software version whose prompts "
            "differ cannot be pooled"
        )

    def _fingerprint_problem(self, r: EpisodeRecord) -> str | None:
        seen = self.biomes.setdefault(r.world, (r.biome, r.episode_id))
        if seen[0] != r.biome:
            return (
                f"world {r.world!r} has biome {r.biome!r} here but {seen[0]!r} "
                f"in episode {seen[1]!r}"
            )
        for key, value, what in (
            (("rules", r.rules), r.ruleset_fingerprint, f"rule set {r.rules!r}"),
            (("vanilla",), r.vanilla_fingerprint, "the vanilla rules"),
            (("world", r.world, r.rules), r.world_fingerprint, f"world {r.world!r}"),
            (("body",), r.body_fingerprint, "the body (simulator version, body or skill settings)"),
            (("task", r.task), r.task_fingerprint, f"task {r.task!r}"),
        ):
            if not value:
                continue
            first = self.fingerprints.setdefault(key, (value, r.episode_id))
            if first[0] != value:
                where = f" under {r.rules!r}" if key[0] == "world" else ""
                return (
                    f"{what}{where} has fingerprint {value!r} here but {first[0]!r} in episode "
                    f"{first[1]!r} (records of differently built rules, worlds, bodies or tasks, "
                    "e.g. another software version or an edited suite, cannot be pooled)"
                )
        return None


def refusal(invalid: Sequence[InvalidRecord]) -> str:
    """The one-line error for inconsistent records (the first, and how many in all)."""
    first = invalid[0].message()
    more = len(invalid) - 1
    tail = f" ({more} more record(s) like it; --skip-invalid leaves them out)" if more else ""
    return first + (tail or " (--skip-invalid leaves such records out)")
