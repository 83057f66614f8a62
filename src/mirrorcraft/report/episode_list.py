"""The episode list: one page for a small report, split for a large one.

Up to ``LIST_PAGE_ROWS`` episodes, ``episodes.html`` lists them all. Above it,
``episodes.html`` is an index with one row per configuration, model and rule set,
linking to that group's list under ``lists/`` (a group larger than ``LIST_PAGE_ROWS``
is cut into numbered pages), so no page holds more than ``LIST_PAGE_ROWS`` rows.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from html import escape
from typing import Any

from mirrorcraft.analysis.metrics import agent_order, configuration_label, suite_order
from mirrorcraft.report.files import ReportWriter
from mirrorcraft.report.templating import fill
from mirrorcraft.report.viewer import page_path
from mirrorcraft.runner.records import EpisodeRecord

LIST_PAGE_ROWS = 2000
"""The most episodes one list page shows (8,640 for the paper's main study: split)."""

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HEAD = (
    "Episode",
    "Configuration",
    "Model",
    "World",
    "Task",
    "Rules",
    "Score",
    "Success",
    "Actions",
    "Encounters",
)


def _table(records: Sequence[EpisodeRecord], linked: bool, up: str) -> str:
    """The rows of ``records``; ``up`` leads from the list page to the report folder."""
    head = "".join(f"<th>{h}</th>" for h in _HEAD)
    rows = []
    for r in records:
        ident = escape(r.episode_id)
        name = f'<a href="{escape(up + page_path(r))}">{ident}</a>' if linked else ident
        cells = [
            name,
            escape(configuration_label(r.agent, r.disclosure)),
            escape(r.model),
            escape(r.world),
            escape(r.task),
            escape(r.rules),
        ]
        nums = [
            str(r.score),
            "yes" if r.success else "no",
            str(r.actions_used),
            str(len(r.encounters)),
        ]
        rows.append(
            "<tr>"
            + "".join(f'<td class="l">{c}</td>' for c in cells)
            + "".join(f'<td class="n">{c}</td>' for c in nums)
            + "</tr>"
        )
    return (
        f'<table class="data" id="episodes"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _group_order(key: tuple[str, str, str, str]) -> tuple[Any, ...]:
    agent, disclosure, model, rules = key
    return (
        agent_order(agent),
        disclosure != "hidden",  # an agent's hidden runs first, then those told the rules
        model,
        (0, "") if rules == "vanilla" else suite_order(rules),
    )


def _slug(key: tuple[str, str, str, str]) -> str:
    digest = hashlib.sha1("\0".join(key).encode("utf-8")).hexdigest()[:6]
    return f"{_UNSAFE.sub('_', '-'.join(key))[:80]}-{digest}"


def write_lists(
    writer: ReportWriter, records: Sequence[EpisodeRecord], linked: bool
) -> dict[str, str]:
    """Write the episode list (split above ``LIST_PAGE_ROWS``); each episode id -> the
    list page that shows it, from the report folder."""
    what = (
        "rule encounters are marked in each page's step list"
        if linked
        else ("viewer pages were not written")
    )
    if len(records) <= LIST_PAGE_ROWS:
        writer.write(
            "episodes.html",
            fill(
                "episodes.html",
                title="Episodes",
                nav='<a href="index.html">Back to the report</a>',
                meta=escape(f"{len(records)} episodes; {what}."),
                table=_table(records, linked, ""),
            ),
        )
        return {r.episode_id: "episodes.html" for r in records}
    groups: dict[tuple[str, str, str, str], list[EpisodeRecord]] = {}
    for r in records:
        groups.setdefault((r.agent, r.disclosure, r.model, r.rules), []).append(r)
    where: dict[str, str] = {}
    index_rows = []
    for key in sorted(groups, key=_group_order):
        members = groups[key]
        agent, disclosure, model, rules = key
        label = f"{configuration_label(agent, disclosure)}, {model}, {rules}"
        chunks = [members[i : i + LIST_PAGE_ROWS] for i in range(0, len(members), LIST_PAGE_ROWS)]
        names = [
            f"lists/{_slug(key)}{'' if k == 0 else f'-{k + 1}'}.html" for k in range(len(chunks))
        ]
        for k, chunk in enumerate(chunks):
            nav = '<a href="../index.html">Report</a> <a href="../episodes.html">All episode lists</a>'
            if k > 0:
                nav += f' <a href="{escape(names[k - 1][6:])}">Previous page</a>'
            if k + 1 < len(chunks):
                nav += f' <a href="{escape(names[k + 1][6:])}">Next page</a>'
            first = k * LIST_PAGE_ROWS + 1
            part = f" (page {k + 1} of {len(chunks)})" if len(chunks) > 1 else ""
            writer.write(
                names[k],
                fill(
                    "episodes.html",
                    title=escape(f"Episodes: {label}{part}"),
                    nav=nav,
                    meta=escape(
                        f"Episodes {first}–{first + len(chunk) - 1} of {len(members)} in "
                        f"{label}; {what}."
                    ),
                    table=_table(chunk, linked, "../"),
                ),
            )
            where.update((r.episode_id, names[k]) for r in chunk)
        pages = " ".join(
            f'<a href="{escape(n)}">{k + 1 if len(names) > 1 else "list"}</a>'
            for k, n in enumerate(names)
        )
        cells = [configuration_label(agent, disclosure), model, rules]
        index_rows.append(
            "<tr>"
            + "".join(f'<td class="l">{escape(c)}</td>' for c in cells)
            + f'<td class="n">{len(members)}</td>'
            + f'<td class="n">{sum(r.success for r in members)}</td>'
            + f'<td class="l">{pages}</td></tr>'
        )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("Configuration", "Model", "Rules", "Episodes", "Successes", "Episode list")
    )
    writer.write(
        "episodes.html",
        fill(
            "episodes.html",
            title="Episodes",
            nav='<a href="index.html">Back to the report</a>',
            meta=escape(
                f"{len(records)} episodes in {len(groups)} lists, one per configuration, model "
                f"and rule set (at most {LIST_PAGE_ROWS} episodes a page); {what}."
            ),
            table=(
                f'<table class="data" id="episode-lists"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(index_rows)}</tbody></table>"
            ),
        ),
    )
    return where
