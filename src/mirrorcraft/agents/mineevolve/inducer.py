"""The inducer's triggers: when a run of successes becomes a skill and failures a remedy.

A remedy (or, in the reflection ablation, a note) is due when the latest
execution failed and either it was stagnant (typed feedback only) or the failures
among the last ``window`` executions reach ``failure_rate`` of the window. The
window is always counted as full, so one failure in an otherwise empty history
does not reach the threshold: an isolated accident is not stored as knowledge.

A skill is due when a run of at least ``min_skill_segment`` consecutive verified
successes ends in a subgoal that produced an item (its checks hold an
``inv_ge`` or ``inv_gain``); the segment is the last ``max_skill_segment`` executions of that run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mirrorcraft.agents.mineevolve.checks import COUNTED
from mirrorcraft.agents.mineevolve.config import InducerConfig
from mirrorcraft.agents.mineevolve.feedback import Feedback
from mirrorcraft.agents.mineevolve.plan import Subgoal


def remedy_due(cfg: InducerConfig, history: Sequence[Feedback], mode: str = "typed") -> bool:
    """Should the latest feedback in ``history`` produce a remedy?"""
    if not history or history[-1].success:
        return False
    if mode != "binary" and history[-1].stagnant:
        return True
    window = history[-cfg.window :]
    failures = sum(1 for f in window if not f.success)
    return failures >= math.ceil(cfg.failure_rate * cfg.window - 1e-9)


def success_segment(
    cfg: InducerConfig, history: Sequence[tuple[Feedback, Subgoal]]
) -> list[tuple[Feedback, Subgoal]]:
    """The segment a skill should be induced from now, or [] when none is due."""
    if not history or not history[-1][0].success:
        return []
    if not any(c.type in COUNTED for c in history[-1][1].checks):
        return []
    run: list[tuple[Feedback, Subgoal]] = []
    for fb, sg in reversed(history):
        if not fb.success:
            break
        run.append((fb, sg))
    run.reverse()
    if len(run) < cfg.min_skill_segment:
        return []
    return run[-cfg.max_skill_segment :]
