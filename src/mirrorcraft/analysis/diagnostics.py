"""Behaviour after rule encounters (IRR, RL) and success at horizon checkpoints.

A *rule encounter* is the first logged action, per distinct changed rule, whose
outcome differed from vanilla in an episode. In a packaged suite a changed rule is one
change of its manifest (one line of its rule sheet), however many datapack resources it
writes: M06's "logs drop planks and sticks" is one rule, though each kind of log has its
own loot table. Other rule sets (a user's datapack) have no such list, so each changed
resource (recipe, loot table) counts as a rule.

- IRR (Immediate Repeat Rate): among encounters that have a next budgeted action
  (encounter step < actions used), the percentage whose next action has the
  same semantic signature as the encounter action.
- RL (Recovery Latency): actions from the encounter action to the first action
  whose Score exceeds the Score just before the encounter (0 when the
  encounter action itself raised it); encounters after which the Score never
  rises above that value are left out.

Intervals (not in the paper, which gives none for IRR and RL): IRR is a
proportion over encounters, with the binomial variance p(1-p)/n; RL a mean of
latencies, with the sample variance over n. Like the paper's other intervals
they treat the units (here encounters) as independent.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from mirrorcraft.analysis.estimates import (
    BOUNDARY,
    ONE_EPISODE,
    SCORE,
    SR,
    CellStats,
    Estimate,
)
from mirrorcraft.analysis.metrics import is_success
from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.runner.records import EncounterRecord, EpisodeRecord


@lru_cache(maxsize=32)
def _suite_rule_of(rules: str) -> dict[str, str]:
    """A packaged suite's resources (``recipes/minecraft:oak_planks``), each mapped to the
    change that writes it, named ``"M01 rule 1"`` (numbered as on the rule sheet). Empty for
    any other rule set; a resource two changes write is left out (it stays its own rule)."""
    manifest = find_suite(rules)
    if manifest is None:
        return {}
    owners: dict[str, set[int]] = defaultdict(set)
    for index, resources in compiled(manifest).changed.items():
        for category, location in resources:
            owners[f"{category}/{location}"].add(index)
    return {res: f"{rules} rule {min(ix) + 1}" for res, ix in owners.items() if len(ix) == 1}


def changed_rule(record: EpisodeRecord, enc: EncounterRecord) -> str:
    """The changed rule an encounter belongs to: its suite change, else its resource."""
    return _suite_rule_of(record.rules).get(enc.rule, enc.rule)


def rule_encounters(record: EpisodeRecord) -> list[EncounterRecord]:
    """The first encounter of each distinct changed rule (``changed_rule``), by step."""
    first: dict[str, EncounterRecord] = {}
    for enc in sorted(record.encounters, key=lambda e: e.step):
        first.setdefault(changed_rule(record, enc), enc)
    return sorted(first.values(), key=lambda e: (e.step, e.rule))


@dataclass(frozen=True)
class EncounterOutcome:
    rule: str
    step: int
    repeated: bool | None
    """Whether the next action repeated the signature; None when there was no next action."""
    latency: int | None
    """Recovery latency in actions; None when the Score never rose above its earlier value."""


def encounter_outcome(record: EpisodeRecord, enc: EncounterRecord) -> EncounterOutcome | None:
    """What followed one encounter; None when its step lies outside the recorded trajectory."""
    k = enc.step
    trace = record.score_trace
    if k < 1 or k > len(trace):
        return None
    repeated: bool | None = None
    if k < record.actions_used and k < len(record.signatures):
        repeated = record.signatures[k] == record.signatures[k - 1]
    before = trace[k - 2] if k >= 2 else 0
    latency = next((j - k for j in range(k, len(trace) + 1) if trace[j - 1] > before), None)
    return EncounterOutcome(changed_rule(record, enc), k, repeated, latency)


def encounter_outcomes(record: EpisodeRecord) -> list[EncounterOutcome]:
    out = (encounter_outcome(record, e) for e in rule_encounters(record))
    return [o for o in out if o is not None]


@dataclass(frozen=True)
class Diagnostics:
    """IRR and RL of a group of episodes."""

    encounters: int
    irr: float | None
    """Percentage; None when no encounter had a next action."""
    irr_n: int
    rl: float | None
    """Mean actions; None when no encounter was followed by a Score increase."""
    rl_n: int
    irr_estimate: Estimate | None = None
    """IRR with its binomial variance (None without an encounter that had a next action)."""
    rl_estimate: Estimate | None = None
    """RL with the variance of a sample mean (None without a recovery)."""


def _proportion(hits: int, n: int) -> Estimate:
    cell = CellStats(n=n, successes=hits)
    why = ONE_EPISODE if n < 2 else BOUNDARY if hits in (0, n) else None
    return Estimate(cell.mean(SR), cell.mean_variance(SR), cell.mean_variance(SR, True), n, {}, why)


def _mean(values: Sequence[int]) -> Estimate:
    cell = CellStats(n=len(values), score_sum=sum(values), score_squares=sum(v * v for v in values))
    why = cell.degenerate(SCORE)  # one encounter, or every latency the same
    return Estimate(cell.mean(SCORE), cell.mean_variance(SCORE), None, len(values), {}, why)


def diagnose(records: Iterable[EpisodeRecord]) -> Diagnostics:
    outcomes = [o for r in records for o in encounter_outcomes(r)]
    repeats = [o.repeated for o in outcomes if o.repeated is not None]
    latencies = [o.latency for o in outcomes if o.latency is not None]
    irr = _proportion(sum(repeats), len(repeats)) if repeats else None
    rl = _mean(latencies) if latencies else None
    return Diagnostics(
        encounters=len(outcomes),
        irr=None if irr is None else irr.value,
        irr_n=len(repeats),
        rl=None if rl is None else rl.value,
        rl_n=len(latencies),
        irr_estimate=irr,
        rl_estimate=rl,
    )


def diagnose_by_suite(records: Iterable[EpisodeRecord]) -> dict[str, Diagnostics]:
    """Diagnostics per rule suite (Mirror episodes only)."""
    groups: dict[str, list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        if r.rules != "vanilla":
            groups[r.rules].append(r)
    return {suite: diagnose(rs) for suite, rs in groups.items()}


def equal_suite_mean(values: Iterable[float | None]) -> float | None:
    """Mean across suites with equal weight per suite, skipping suites without a value."""
    present = [v for v in values if v is not None]
    return math.fsum(present) / len(present) if present else None


def equal_suite_estimate(estimates: Iterable[Estimate | None]) -> Estimate | None:
    """The equal-weight mean of per-suite estimates, its variance sum(var) / k**2."""
    present = [e for e in estimates if e is not None]
    if not present:
        return None
    k = len(present)
    ac = [e.variance_ac for e in present]
    return Estimate(
        math.fsum(e.value for e in present) / k,
        math.fsum(e.variance for e in present) / (k * k),
        None if any(v is None for v in ac) else math.fsum(v or 0.0 for v in ac) / (k * k),
        sum(e.comparisons for e in present),
        {},
        next((e.degenerate for e in present if e.degenerate), None),
    )


# --- horizon checkpoints --------------------------------------------------------------------


@lru_cache(maxsize=64)
def final_advancement(task: str) -> str | None:
    """The advancement that completes ``task`` (None for a task this package does not know)."""
    from mirrorcraft.evaluator.tasks import UnknownTaskError, get_task

    try:
        return get_task(task).final.advancement
    except UnknownTaskError:
        return None


def success_step(record: EpisodeRecord) -> int | None:
    """1-based action index at which the episode reached its final milestone, if it did."""
    advancement = final_advancement(record.task)
    if advancement is not None and advancement in record.milestones:
        return record.milestones[advancement]
    if not is_success(record):
        return None
    return next((i for i, s in enumerate(record.score_trace, 1) if s >= 100), None)


def checkpoint_sr(records: Sequence[EpisodeRecord], checkpoint: int) -> float | None:
    """Cumulative SR (%) after ``checkpoint`` actions, over episodes whose budget reaches it."""
    eligible = [r for r in records if r.budget >= checkpoint]
    if not eligible:
        return None
    hits = 0
    for r in eligible:
        step = success_step(r)
        hits += 1 if step is not None and step <= checkpoint else 0
    return 100.0 * hits / len(eligible)
