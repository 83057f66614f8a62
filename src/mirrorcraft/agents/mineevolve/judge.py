"""The curator's model-judged stage: a candidate that passed the deterministic checks is shown
to the model, which accepts it or rejects it for one of the same five reasons.

The paper's curator is a model prompt that validates candidates (schema, match,
executability, specificity, conflict) under rule checks. By default MineEvolve
runs both: the deterministic checks of ``curator.py`` first (cheap, and they catch
what code can decide), then one ``curate`` call per surviving candidate that would
be written to the store or activated. Merges into an existing entry are not judged
again, and neither are the free-text notes of the text-reflection ablation (the
stage judges structured skills and remedies). A reply that names the candidate
neither accepted nor rejected gets one JSON
repair call; if it is still unusable the candidate is not admitted (reason
``judge``). The ``deterministic_curator`` variant skips this stage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mirrorcraft.agents.llm.templates import TemplateFile
from mirrorcraft.agents.mineevolve.curator import REJECT_REASONS
from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry, matched

UNUSABLE = "judge"
"""The rejection reason when no usable judgement came back."""
SHOWN = 6
_REASON = re.compile(r"\s*([a-z]+)\s*(?:[:(,;.\-].*)?", re.DOTALL)
"""A rejection reason as models write it: "specificity", "Conflict", "conflict: contradicts
remedy_0002"; a list of several ("schema|match|...", echoing the schema) names none."""


def rejection_reason(raw: object) -> str:
    """The reason among ``REJECT_REASONS`` a judge's rejection gives, else ``UNUSABLE``."""
    m = _REASON.fullmatch(raw.lower()) if isinstance(raw, str) else None
    return m.group(1) if m and m.group(1) in REJECT_REASONS else UNUSABLE


def parse_judgement(
    entry_id: str,
) -> Callable[[dict[str, Any] | None], tuple[tuple[bool, str] | None, str]]:
    """A reply parser: (accepted, reason) for the candidate, or why the reply is unusable."""

    def parse(doc: dict[str, Any] | None) -> tuple[tuple[bool, str] | None, str]:
        if doc is None:
            return None, "no JSON object found"
        accepted = doc.get("accepted", [])
        rejected = doc.get("rejected", [])
        if isinstance(accepted, list) and entry_id in accepted:
            return (True, ""), ""
        if isinstance(rejected, list):
            for item in rejected:
                if isinstance(item, dict) and item.get("id") == entry_id:
                    return (False, rejection_reason(item.get("reason"))), ""
        return None, f"list the candidate {entry_id!r} under 'accepted' or 'rejected'"

    return parse


def related(
    entry: KnowledgeEntry, live: Iterable[KnowledgeEntry], limit: int = SHOWN
) -> list[KnowledgeEntry]:
    """The live entries most like the candidate (same kind first, then trigger overlap)."""
    terms = frozenset(entry.trigger)
    scored = [
        (e.kind == entry.kind, matched(e, terms), e.id, e)
        for e in live
        if e.id != entry.id and matched(e, terms) > 0
    ]
    scored.sort(key=lambda x: (not x[0], -x[1], x[2]))
    return [e for *_rest, e in scored[:limit]]


def judge_prompts(
    prompts: TemplateFile,
    entry: KnowledgeEntry,
    neighbours: Sequence[KnowledgeEntry],
    counts: dict[str, int],
    values: dict[str, str],
    prior_weight: float,
    trigger_fields: str,
) -> tuple[str, str]:
    """(system, user) of a ``curate`` call."""
    system = prompts.render("curate_system", {"TRIGGER_FIELDS": trigger_fields})
    summary = ", ".join(f"{n} {k}(s)" for k, n in sorted(counts.items())) or "empty"
    user = prompts.render(
        "curate_user",
        {
            **values,
            "CANDIDATE": entry.render(prior_weight),
            "STORE": summary,
            "RELATED": "\n".join(e.render(prior_weight) for e in neighbours) or "none",
        },
    )
    return system, user
