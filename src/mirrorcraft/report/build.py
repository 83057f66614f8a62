"""Writing the static report directory: HTML, figures, tables as Markdown and CSV, viewer pages.

Layout of ``DIR``::

    index.html            every table and figure (PNG figures inlined as data URIs)
    episodes.html         the episode list, linking to the viewer pages; above
                          ``episode_list.LIST_PAGE_ROWS`` episodes, an index of
    lists/<group>.html    one list per configuration, model and rule set
    episodes/<agent-model-task>/<id>.html   one viewer page per episode
    report.md             every table as Markdown
    tables/<key>.md|csv   each table on its own
    summary.json          the analysis document (as ``mirrorcraft analyze --json``)
    report-files.json     every file above (``files.py``: a rewrite removes the rest)

Pages load nothing from the network (a content security policy forbids it).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from mirrorcraft import __version__
from mirrorcraft.analysis.coverage import writing_run
from mirrorcraft.analysis.loading import LoadedResults, StepReader
from mirrorcraft.analysis.metrics import (
    HIDDEN,
    agent_order,
    suite_order,
    task_order,
)
from mirrorcraft.report import plots
from mirrorcraft.report.episode_list import write_lists
from mirrorcraft.report.files import ReportWriter
from mirrorcraft.report.render import Table, render_csv, render_html, render_markdown
from mirrorcraft.report.tables import build_tables, excluded_notes, skipped, unfinished_note
from mirrorcraft.report.templating import fill
from mirrorcraft.report.viewer import EpisodeView, episode_page, page_path, twin_key
from mirrorcraft.runner.records import EpisodeRecord, StepRecord


@dataclass
class ReportFiles:
    out: Path
    tables: list[Table]
    figures: list[str] = field(default_factory=list)
    episode_pages: int = 0


@dataclass(frozen=True)
class Figure:
    ident: str
    title: str
    caption: str
    png: bytes

    def html(self) -> str:
        return (
            f'<section id="{self.ident}"><h2>{escape(self.title)}</h2><figure>'
            f'<img alt="{escape(self.title)}" src="{plots.data_uri(self.png)}">'
            f"<figcaption>{escape(self.caption)}</figcaption></figure></section>"
        )


def _figures(summary: dict[str, Any]) -> list[Figure]:
    out: list[Figure] = []
    png = plots.sides_by_suite_png(summary)
    if png:
        out.append(
            Figure(
                "fig-vanilla-mirror",
                "Figure: Vanilla and Mirror SR and Score by suite",
                plots.SIDES_CAPTION,
                png,
            )
        )
    caption, _ = plots.rie_by_suite_series(summary)
    png = plots.rie_by_suite_png(summary)
    if png:
        out.append(Figure("fig-rie-by-suite", "Figure: RIE_SR by suite", caption, png))
    png = plots.horizon_png(summary)
    if png:
        caption = (
            "Cumulative SR at action checkpoints (solid: Vanilla, dashed: Mirror), averaged "
            "over tasks, with 95% intervals (binomial, stratified by task; Agresti–Coull where "
            "a task's SR is 0% or 100%)." + plots.CUT_CAPTION
        )
        out.append(Figure("fig-horizon", "Figure: SR at horizon checkpoints", caption, png))
    png = plots.diagnostics_png(summary)
    if png:
        caption = (
            "IRR and RL by suite for each configuration (pooled over models), with 95% "
            "intervals treating encounters as independent (Agresti–Coull where IRR is 0% or 100%)."
            + plots.CUT_CAPTION
        )
        out.append(Figure("fig-diagnostics", "Figure: IRR and RL by suite", caption, png))
    return out


def _index_html(
    loaded: LoadedResults,
    summary: dict[str, Any],
    tables: Sequence[Table],
    figures: Sequence[Figure],
    pages: Sequence[tuple[str, str]] = (),
) -> str:
    counts = summary["episodes"]
    meta = (
        f"{counts['total']} episodes ({counts['vanilla']} Vanilla, {counts['mirror']} Mirror, "
        f"{counts['disclosed']} with disclosed rules) from {loaded.path.name} "
        f"({'results database' if loaded.kind == 'sqlite' else 'JSONL records'}); "
        f"mirrorcraft {__version__}."
    )
    notes = excluded_notes(counts["excluded"])
    left = unfinished_note(summary)
    if left:
        notes.insert(0, left)
    running = writing_run(loaded.path)
    if running:
        notes.insert(0, running)
    if counts["invalid"]:
        notes.append(
            f"{len(counts['invalid'])} inconsistent record(s) left out (--skip-invalid; "
            "listed in summary.json)"
        )
    if counts["controls"]:
        notes.append(
            f"{counts['controls']} episode(s) of control agents appear only in the controls table"
        )
    notes += skipped(summary)
    links = [(f"#{f.ident}", f.title) for f in figures]
    links += [(f"#{t.key}", t.title) for t in tables]
    links += list(pages)
    contents = "".join(f'<li><a href="{escape(k)}">{escape(t)}</a></li>' for k, t in links)
    return fill(
        "report.html",
        title="MirrorCraft results",
        meta=escape(meta),
        notes="".join(f'<p class="note">{escape(n)}.</p>' for n in notes),
        contents=f'<h2>Contents</h2><ul id="contents">{contents}</ul>',
        figures="".join(f.html() for f in figures),
        tables="".join(render_html(t) for t in tables),
    )


def _episode_order(r: EpisodeRecord) -> tuple[Any, ...]:
    return (
        agent_order(r.agent),
        r.disclosure
        != HIDDEN,  # an agent's hidden runs (the main condition) first, as in the tables
        r.model,
        task_order(r.task),
        r.world,
        r.repetition,
        (0, "") if r.rules == "vanilla" else suite_order(r.rules),
        r.episode_id,
    )


TWIN_STEPS_KEPT = 64
"""Vanilla episodes whose steps the viewer keeps in memory while writing their twins' pages."""


def _write_episodes(
    loaded: LoadedResults,
    records: Sequence[EpisodeRecord],
    writer: ReportWriter,
    listed_in: dict[str, str],
) -> int:
    vanilla: dict[tuple[Any, ...], EpisodeRecord] = {}
    mirrors: dict[tuple[Any, ...], list[EpisodeRecord]] = defaultdict(list)
    for r in records:
        if r.rules == "vanilla":
            if r.disclosure == "hidden":
                vanilla.setdefault(twin_key(r), r)
        else:
            mirrors[twin_key(r)].append(r)
    reader = StepReader(loaded.path) if loaded.has_steps else None
    cache: dict[str, list[StepRecord]] = {}

    def steps_of(r: EpisodeRecord) -> list[StepRecord] | None:
        """The episode's steps; a Vanilla episode's are kept for the Mirror twins that
        follow it (``_episode_order``), the most recent ``TWIN_STEPS_KEPT`` only, so memory
        does not grow with the results (one twin read again costs one query)."""
        if reader is None:
            return None
        if r.episode_id not in cache:
            found = reader.steps(r.episode_id)
            if r.rules != "vanilla":
                return found
            if len(cache) >= TWIN_STEPS_KEPT:
                del cache[next(iter(cache))]
            cache[r.episode_id] = found
        return cache[r.episode_id]

    try:
        for r in records:
            twin = vanilla.get(twin_key(r)) if r.rules != "vanilla" else None
            view = EpisodeView(
                record=r,
                steps=steps_of(r),
                twin=twin,
                twin_steps=steps_of(twin) if twin is not None else None,
                mirror_twins=mirrors.get(twin_key(r), []) if r.rules == "vanilla" else (),
            )
            writer.write(page_path(r), episode_page(view, listed_in[r.episode_id]))
    finally:
        if reader is not None:
            reader.close()
    return len(records)


def write_report(
    loaded: LoadedResults,
    summary: dict[str, Any],
    out: Path,
    *,
    viewer: bool = True,
    comparison: dict[str, Any] | None = None,
) -> ReportFiles:
    """Write the whole report directory for ``loaded`` (summarized as ``summary``).

    ``comparison`` (``analysis.compare.compare``) adds the side-by-side page
    ``compare.html`` and an overview table in the index.
    """
    writer = ReportWriter(out)
    try:
        files = _write_all(loaded, summary, writer, viewer, comparison)
    except BaseException:
        writer.abandon()  # every file of the earlier report and this one stays listed
        raise
    writer.finish()
    return files


def _write_all(
    loaded: LoadedResults,
    summary: dict[str, Any],
    writer: ReportWriter,
    viewer: bool,
    comparison: dict[str, Any] | None,
) -> ReportFiles:
    out = writer.out
    tables = build_tables(summary)
    links: list[tuple[str, str]] = []
    if comparison is not None:
        from mirrorcraft.report.compare_tables import summary_table, write_compare_page

        for name in ("compare.html", "compare.md", "compare.json"):
            writer.record(name)
        compared = write_compare_page(comparison, out)
        tables.append(summary_table(comparison))
        links = [("compare.html", "Your results beside the paper (compare.html)")]
        links += [(f"compare.html#{t.key}", t.title) for t in compared]
    for t in tables:
        writer.write(f"tables/{t.key}.md", render_markdown(t))
        writer.write(f"tables/{t.key}.csv", render_csv(t))
    markdown = "# MirrorCraft results\n\n" + "\n".join(render_markdown(t) for t in tables)
    writer.write("report.md", markdown)
    writer.write("summary.json", json.dumps(summary, indent=1, allow_nan=False) + "\n")
    figures = _figures(summary)
    writer.write("index.html", _index_html(loaded, summary, tables, figures, links))
    records = sorted(loaded.records, key=_episode_order)
    listed_in = write_lists(writer, records, viewer)
    pages = _write_episodes(loaded, records, writer, listed_in) if viewer else 0
    return ReportFiles(out, tables, [f.ident for f in figures], pages)
