"""The episode viewer: one small static HTML page per episode, beside its Vanilla twin.

Everything that came from an agent or a record (thoughts, actions, results, item
names, ids) is HTML-escaped here; nothing in a page is trusted markup.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from mirrorcraft.analysis.diagnostics import changed_rule, rule_encounters
from mirrorcraft.analysis.metrics import rule_change
from mirrorcraft.report.templating import fill
from mirrorcraft.runner.records import EpisodeRecord, StepRecord

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def page_name(episode_id: str) -> str:
    """A file name for the episode's page: readable, unique and safe on every file system."""
    digest = hashlib.sha1(episode_id.encode("utf-8")).hexdigest()[:10]
    return f"{_UNSAFE.sub('_', episode_id)[:80]}-{digest}.html"


def page_folder(r: EpisodeRecord) -> str:
    """The folder under ``episodes/`` of the episode's page: one per agent, model and task,
    so that a page's Vanilla twin and Mirror copies (same agent, model and task) sit beside
    it and no folder holds every page of a large study."""
    key = f"{r.agent}\0{r.model}\0{r.task}"
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:6]
    return f"{_UNSAFE.sub('_', f'{r.agent}-{r.model}-{r.task}')[:80]}-{digest}"


def page_path(r: EpisodeRecord) -> str:
    """The page's path from the report folder (``/``-separated, as in a link)."""
    return f"episodes/{page_folder(r)}/{page_name(r.episode_id)}"


def twin_key(r: EpisodeRecord) -> tuple[str, str, str, str, int, int, int]:
    """What an episode shares with its Vanilla twin (rules and disclosure aside)."""
    return (r.world, r.task, r.agent, r.model, r.budget, r.repetition, r.seed)


@dataclass
class EpisodeView:
    record: EpisodeRecord
    steps: list[StepRecord] | None
    """None when the results hold no step records (JSONL input)."""
    twin: EpisodeRecord | None = None
    twin_steps: list[StepRecord] | None = None
    mirror_twins: Sequence[EpisodeRecord] = ()
    """For a Vanilla episode: its Mirror copies."""


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _compact(value: Any, limit: int = 400) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _kv_table(rows: Sequence[tuple[str, str]]) -> str:
    body = "".join(f'<tr><th>{_e(k)}</th><td class="l">{v}</td></tr>' for k, v in rows)
    return f'<table class="data">{body}</table>'


def _link(r: EpisodeRecord, label: str | None = None) -> str:
    return f'<a href="{page_name(r.episode_id)}">{_e(label or r.episode_id)}</a>'


def _condition(v: EpisodeView) -> str:
    r = v.record
    rules = r.rules if r.rules == "vanilla" else f"{r.rules} {rule_change(r.rules, [r])}".strip()
    cost = "unknown" if r.cost_usd is None else f"{r.cost_usd:.4f}"
    rows = [
        ("World", _e(f"{r.world} ({r.biome})")),
        ("Rules", _e(rules)),
        ("Task", _e(r.task)),
        ("Agent", _e(r.agent)),
        ("Model", _e(r.model)),
        ("Disclosure", _e(r.disclosure)),
        ("Budget / repetition / seed", _e(f"{r.budget} / {r.repetition} / {r.seed}")),
        ("Score / success", _e(f"{r.score} / {'yes' if r.success else 'no'}")),
        ("Termination", _e(r.termination)),
        ("Actions used", _e(r.actions_used)),
        ("Cost (USD)", _e(cost)),
        ("Tokens (prompt / completion)", _e(f"{r.prompt_tokens} / {r.completion_tokens}")),
    ]
    if v.twin is not None:
        rows.append(("Vanilla twin", _link(v.twin)))
    elif r.rules != "vanilla":
        rows.append(("Vanilla twin", '<span class="muted">not in these results</span>'))
    if v.mirror_twins:
        rows.append(("Mirror copies", ", ".join(_link(m, m.rules) for m in v.mirror_twins)))
    return _kv_table(rows)


def _milestones(v: EpisodeView) -> str:
    mine, twin = v.record.milestones, v.twin.milestones if v.twin else {}
    names = list(
        dict.fromkeys([*sorted(mine, key=lambda k: mine[k]), *sorted(twin, key=lambda k: twin[k])])
    )
    if not names:
        return '<p class="note">No milestone was reached.</p>'
    head = "<tr><th>Advancement</th><th>Action (this)</th>"
    head += "<th>Action (Vanilla twin)</th></tr>" if v.twin else "</tr>"
    body = ""
    for name in names:
        cells = f'<td class="l">{_e(name)}</td><td class="n">{_e(mine.get(name, "–"))}</td>'
        if v.twin:
            cells += f'<td class="n">{_e(twin.get(name, "–"))}</td>'
        body += f"<tr>{cells}</tr>"
    return f'<table class="data">{head}{body}</table>'


def _ticks(n: int) -> list[int]:
    """Action numbers to label on the x axis: the first, the last and a few between."""
    if n <= 1:
        return [1]
    step = max(1, round(n / 5))
    marks = list(range(1, n + 1, step))
    if n - marks[-1] < step / 2:
        marks[-1] = n
    else:
        marks.append(n)
    return marks


def _trace_svg(v: EpisodeView) -> str:
    """The Score after each action (and the Vanilla twin's), with labelled axes."""
    r = v.record
    n = max(len(r.score_trace), len(v.twin.score_trace) if v.twin else 0, 1)
    width, height = 640, 190
    left, right, top, bottom = 52, 14, 12, 40
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(action: int) -> float:
        return left + plot_w * (action - 1) / max(n - 1, 1)

    def y_of(score: float) -> float:
        return top + plot_h - plot_h * score / 100

    def pts(trace: Sequence[int]) -> str:
        return " ".join(f"{x_of(i):.1f},{y_of(s):.1f}" for i, s in enumerate(trace, 1))

    parts = [
        f'<svg class="trace" width="{width}" height="{height}" role="img" '
        f'aria-label="Score after each action" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#444"/>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        'stroke="#444"/>',
    ]
    for score in (0, 25, 50, 75, 100):
        y = y_of(score)
        parts.append(
            f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
            f'stroke="#ddd"/><text x="{left - 7}" y="{y + 4:.1f}" font-size="11" '
            f'text-anchor="end">{score}</text>'
        )
    for action in _ticks(n):
        x = x_of(action)
        parts.append(
            f'<line x1="{x:.1f}" y1="{top + plot_h}" x2="{x:.1f}" y2="{top + plot_h + 4}" '
            f'stroke="#444"/><text x="{x:.1f}" y="{top + plot_h + 16}" font-size="11" '
            f'text-anchor="middle">{action}</text>'
        )
    parts.append(
        f'<text class="axis-label" x="{left + plot_w / 2:.1f}" y="{height - 4}" font-size="12" '
        'text-anchor="middle">action</text>'
        f'<text class="axis-label" x="14" y="{top + plot_h / 2:.1f}" font-size="12" '
        f'text-anchor="middle" transform="rotate(-90 14 {top + plot_h / 2:.1f})">Score</text>'
    )
    if v.twin is not None and v.twin.score_trace:
        parts.append(
            f'<polyline fill="none" stroke="#999" stroke-dasharray="4 3" '
            f'points="{pts(v.twin.score_trace)}"/>'
        )
    if r.score_trace:
        parts.append(f'<polyline fill="none" stroke="#1f77b4" points="{pts(r.score_trace)}"/>')
    for enc in rule_encounters(r):
        if 1 <= enc.step <= len(r.score_trace):
            parts.append(
                f'<circle cx="{x_of(enc.step):.1f}" cy="{y_of(r.score_trace[enc.step - 1]):.1f}" '
                f'r="4" fill="#d62728"><title>{_e(enc.rule)} at action {enc.step}</title></circle>'
            )
    parts.append("</svg>")
    legend = "Score (0–100) after each action; blue: this episode; red dots: rule encounters"
    legend += "; grey dashed: Vanilla twin" if v.twin else ""
    return "".join(parts) + f'<p class="note">{legend}.</p>'


def _encounter_runs(r: EpisodeRecord) -> list[tuple[list[int], Any, bool]]:
    """Encounters in action order, consecutive repeats of one outcome folded into one run.

    Each run is (its action indices, its first encounter, whether that is the rule's first).
    A run ends where another rule fires or the same rule gives another outcome.
    """
    runs: list[tuple[list[int], Any, bool]] = []
    seen: set[str] = set()
    for e in sorted(r.encounters, key=lambda e: e.step):
        key = (e.rule, e.kind, _compact(e.vanilla), _compact(e.actual))
        last = runs[-1][1] if runs else None
        if last is not None and key == (
            last.rule,
            last.kind,
            _compact(last.vanilla),
            _compact(last.actual),
        ):
            runs[-1][0].append(e.step)
            continue
        rule = changed_rule(r, e)
        runs.append(([e.step], e, rule not in seen))
        seen.add(rule)
    return runs


def _steps_label(steps: list[int]) -> str:
    if len(steps) == 1:
        return str(steps[0])
    return f"{steps[0]}–{steps[-1]} (×{len(steps)})"


def _encounters(r: EpisodeRecord) -> str:
    if not r.encounters:
        return '<p class="note">No action had an outcome different from vanilla.</p>'
    rows = ""
    runs = _encounter_runs(r)
    for steps, e, first in runs:
        rows += (
            f'<tr class="{"enc" if first else ""}"><td class="n">{_e(_steps_label(steps))}</td>'
            f'<td class="l">{_e(e.rule)}</td><td class="l">{_e(e.kind)}</td>'
            f'<td class="code">{_e(_compact(e.vanilla))}</td>'
            f'<td class="code">{_e(_compact(e.actual))}</td>'
            f'<td class="l">{"first" if first else ""}</td></tr>'
        )
    head = (
        "<tr><th>Action</th><th>Rule</th><th>Kind</th><th>Vanilla outcome</th>"
        "<th>Actual outcome</th><th>Encounter</th></tr>"
    )
    note = ""
    if len(runs) < len(r.encounters):
        note = (
            f'<p class="note">{len(r.encounters)} encounters in {len(runs)} rows: repeats of'
            " the same outcome in a row are folded (first–last action, ×count).</p>"
        )
    return f'{note}<table class="data">{head}{rows}</table>'


def _inventory(steps: list[StepRecord] | None) -> str:
    if steps is None:
        return '<p class="note">Step records are unavailable for these results.</p>'
    changed: list[StepRecord] = []
    previous: dict[str, int] = {}
    for s in steps:
        if s.inventory != previous:
            changed.append(s)
            previous = s.inventory
    if not changed:
        return '<p class="note">The inventory never changed.</p>'
    items = sorted({item for s in changed for item in s.inventory})
    head = "<tr><th>Item</th>" + "".join(f"<th>{s.step}</th>" for s in changed) + "</tr>"
    body = "".join(
        f'<tr><td class="l">{_e(item)}</td>'
        + "".join(f'<td class="n">{_e(s.inventory.get(item, ""))}</td>' for s in changed)
        + "</tr>"
        for item in items
    )
    note = '<p class="note">Counts after each action that changed the inventory.</p>'
    return note + f'<div class="scroll"><table class="data">{head}{body}</table></div>'


def _delta(before: dict[str, int], after: dict[str, int]) -> str:
    parts = []
    for item in sorted(set(before) | set(after)):
        d = after.get(item, 0) - before.get(item, 0)
        if d:
            parts.append(f"{d:+d} {item}")
    return ", ".join(parts)


def _action(action: Any) -> str:
    """``skill {args}`` for a well-formed action, the raw value otherwise."""
    skill = action.get("skill") if isinstance(action, dict) else None
    if isinstance(skill, str):
        args = action.get("args")
        return skill + (f" {_compact(args, 300)}" if args else "")
    return _compact(action)


def _result(result: dict[str, Any], rules: Sequence[str] = ()) -> str:
    """The result's outcome and message; its other fields folded away (HTML, escaped)."""
    head = "ok" if result.get("ok") else f"failed: {result.get('reason') or '?'}"
    text = _e(head + (f" — {result['message']}" if result.get("message") else ""))
    rest = {k: v for k, v in result.items() if k not in ("ok", "reason", "message")}
    if rest:
        text += (
            f'<details><summary>details</summary><span class="code">'
            f"{_e(_compact(rest, 3000))}</span></details>"
        )
    if rules:
        text += f'<div class="flag">changed rule: {_e(", ".join(rules))}</div>'
    return text


def _marks(r: EpisodeRecord) -> dict[int, list[str]]:
    """Action index -> rules first encountered there."""
    out: dict[int, list[str]] = {}
    for e in rule_encounters(r):
        out.setdefault(e.step, []).append(e.rule)
    return out


def _steps(v: EpisodeView) -> str:
    r = v.record
    if v.steps is None:
        return _signature_steps(v)
    twin = {s.step: s for s in v.twin_steps or []}
    marks = _marks(r)
    head = "<tr><th>#</th><th>Score</th><th>Thought</th><th>Action</th><th>Result</th><th>Inventory change</th>"
    head += "<th>Twin action</th><th>Twin result</th></tr>" if v.twin_steps is not None else "</tr>"
    rows: list[str] = []
    before: dict[str, int] = {}
    n = max([s.step for s in v.steps] + list(twin), default=0)
    mine = {s.step: s for s in v.steps}
    for i in range(1, n + 1):
        s, t = mine.get(i), twin.get(i)
        rules = marks.get(i, [])
        flag = f' <span class="flag" title="{_e(", ".join(rules))}">⚑</span>' if rules else ""
        cells = f'<td class="n">{i}{flag}</td>'
        if s is not None:
            ms = "".join(f' <span class="ms">★ {_e(m)}</span>' for m in s.new_milestones)
            cells += (
                f'<td class="l">{s.score}{ms}</td><td class="thought">{_e(s.thought)}</td>'
                f'<td class="code">{_e(_action(s.action))}</td><td class="res">{_result(s.result, rules)}</td>'
                f'<td class="l">{_e(_delta(before, s.inventory))}</td>'
            )
            before = s.inventory
        else:
            cells += '<td colspan="5" class="muted">–</td>'
        if v.twin_steps is not None:
            cells += (
                f'<td class="code">{_e(_action(t.action))}</td><td class="res">{_result(t.result)}</td>'
                if t is not None
                else '<td colspan="2" class="muted">–</td>'
            )
        rows.append(f'<tr class="{"enc" if i in marks else ""}">{cells}</tr>')
    note = ""
    if v.twin is not None and v.twin_steps is None:
        note = '<p class="note">The Vanilla twin has no step records.</p>'
    return note + f'<table class="data" id="step-list">{head}{"".join(rows)}</table>'


def _signature_steps(v: EpisodeView) -> str:
    r, t = v.record, v.twin
    marks = {step: ", ".join(rules) for step, rules in _marks(r).items()}
    n = max(len(r.signatures), len(r.score_trace), len(t.signatures) if t else 0)
    head = "<tr><th>#</th><th>Score</th><th>Signature</th><th>Encounter</th>"
    head += "<th>Twin score</th><th>Twin signature</th></tr>" if t else "</tr>"

    def get(seq: Sequence[Any], i: int) -> str:
        return _e(_compact(seq[i - 1])) if i <= len(seq) else "–"

    rows = []
    for i in range(1, n + 1):
        cells = f'<td class="n">{i}</td><td class="n">{get(r.score_trace, i)}</td>'
        cells += f'<td class="code">{get(r.signatures, i)}</td>'
        cells += f'<td class="l"><span class="flag">{_e(marks.get(i, ""))}</span></td>'
        if t:
            cells += f'<td class="n">{get(t.score_trace, i)}</td><td class="code">{get(t.signatures, i)}</td>'
        rows.append(f'<tr class="{"enc" if i in marks else ""}">{cells}</tr>')
    note = (
        '<p class="note">Step records (thoughts, actions, results) are unavailable for JSONL '
        "input; this list shows the action signatures and Score trace kept in the record.</p>"
    )
    return note + f'<table class="data" id="step-list">{head}{"".join(rows)}</table>'


def episode_page(v: EpisodeView, listed_in: str = "episodes.html") -> str:
    """The complete HTML page of one episode; ``listed_in``: the list page that links to
    it, from the report folder."""
    r = v.record
    twin_link = f"Vanilla twin: {_link(v.twin)}" if v.twin else ""
    return fill(
        "episode.html",
        title=_e(f"Episode {r.episode_id}"),
        episode_list=_e(f"../../{listed_in}"),
        twin_link=twin_link,
        condition=_condition(v),
        milestones=_milestones(v),
        trace=_trace_svg(v),
        encounters=_encounters(r),
        inventory=_inventory(v.steps),
        steps=_steps(v),
    )
