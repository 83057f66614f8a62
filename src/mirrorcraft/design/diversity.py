"""How far a candidate suite is from the suites already accepted (the judge's diversity screen).

A suite's *transitions* are its structured overrides reduced to
(operation, input, new output): the changed transitions an agent can meet. The
overlap with an accepted suite is the Jaccard index of the two sets. The static
report carries the overlap with every accepted suite; a candidate whose
transitions equal an accepted suite's is a duplicate (a hard failure), one that
shares at least ``SIMILAR`` of them is flagged (a warning). The judge sees this
section and a summary of each accepted suite and says whether the candidate adds
something new.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from mirrorcraft.datapack.compiler import CompiledSuite
from mirrorcraft.datapack.manifest import Manifest
from mirrorcraft.datapack.overrides import structured_overrides
from mirrorcraft.datapack.suites import compiled, list_suites
from mirrorcraft.design.report import StaticReport
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset

SIMILAR = 0.5
"""Overlap from which a candidate is flagged as largely repeating an accepted suite."""

Transition = tuple[str, str, str]


def transitions(
    suite: CompiledSuite, vanilla: RuleSet, rules: RuleSet | None = None
) -> frozenset[Transition]:
    return frozenset(
        (o.operator, o.subject, o.new) for o in structured_overrides(suite, vanilla, rules)
    )


@lru_cache(maxsize=32)
def _accepted_transitions(manifest: Manifest) -> frozenset[Transition]:
    return transitions(compiled(manifest), vanilla_ruleset())


def accepted_suites(exclude: str = "") -> list[Manifest]:
    """The suites already in the benchmark (the packaged ones), without ``exclude``."""
    return [m for m in list_suites() if m.id != exclude]


def accepted_summary(accepted: Sequence[Manifest]) -> str:
    """One block per accepted suite for the judge: id, name, form and its prose rules."""
    blocks = []
    for m in accepted:
        rules = "\n".join(f"  - {c.sheet}" for c in m.changes)
        blocks.append(f"{m.id} ({m.name}; form: {m.form or 'unstated'}):\n{rules}")
    return "\n".join(blocks) or "none"


def check_diversity(
    report: StaticReport,
    suite: CompiledSuite,
    vanilla: RuleSet,
    rules: RuleSet,
    accepted: Sequence[Manifest],
) -> dict[str, Any]:
    """Add the diversity section (and any finding) to ``report``; returns the section."""
    mine = transitions(suite, vanilla, rules)
    rows: list[dict[str, Any]] = []
    for m in accepted:
        theirs = _accepted_transitions(m)
        union = mine | theirs
        shared = sorted(mine & theirs)
        overlap = len(shared) / len(union) if union else 0.0
        rows.append(
            {
                "suite": m.id,
                "form": m.form,
                "overlap": round(overlap, 3),
                "shared": [f"{op} {subject} -> {new}" for op, subject, new in shared[:6]],
            }
        )
    rows.sort(key=lambda r: (-r["overlap"], r["suite"]))
    section = {"transitions": len(mine), "accepted": rows, "similar_from": SIMILAR}
    if rows and mine:
        closest = rows[0]
        if closest["overlap"] >= 1.0:
            report.fail(
                "duplicate_suite",
                f"its changed transitions are exactly those of accepted suite {closest['suite']}",
            )
        elif closest["overlap"] >= SIMILAR:
            report.warn(
                "similar_suite",
                f"shares {closest['overlap']:.0%} of its changed transitions with accepted "
                f"suite {closest['suite']}",
            )
    report.sections["diversity"] = section
    return section
