"""``mirrorcraft report``: the files it writes, escaping, the viewer, tables as CSV and Markdown."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mirrorcraft.analysis.loading import load_results
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.report.build import write_report
from mirrorcraft.report.render import Table, render_csv, render_markdown, render_text
from mirrorcraft.report.tables import build_tables
from mirrorcraft.report.viewer import page_name, page_path
from mirrorcraft.runner.records import EpisodeRecord, StepRecord
from tests.test_analysis_cli import run_cli
from tests.test_analysis_helpers import make_record, synthetic_study, write_db, write_jsonl


def small_study(seed: int) -> tuple[list[EpisodeRecord], dict[str, list[StepRecord]]]:
    return synthetic_study(
        seed=seed,
        models=("gemini", "deepseek"),
        agents=("react", "xenon"),
        worlds=("plains-1",),
        reps=1,
    )


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.srcs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for key, value in attrs:
            if key == "href" and value:
                self.hrefs.append(value)
            if key == "src" and value:
                self.srcs.append(value)


def parse(path: Path) -> Links:
    links = Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


@pytest.fixture(scope="module")
def db_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("report")
    records, steps = small_study(11)
    db = write_db(base / "results.db", records, steps)
    loaded = load_results(db)
    write_report(loaded, summarize(loaded.records), base / "out")
    return base / "out"


def test_report_files(db_report: Path) -> None:
    for name in ("index.html", "episodes.html", "report.md", "summary.json"):
        assert (db_report / name).is_file(), name
    loaded = load_results(db_report.parent / "results.db")
    tables = build_tables(summarize(loaded.records))
    for t in tables:
        assert (db_report / "tables" / f"{t.key}.md").is_file()
        assert (db_report / "tables" / f"{t.key}.csv").is_file()
    pages = list((db_report / "episodes").glob("*/*.html"))
    assert len(pages) == len(loaded.records)
    assert sorted(str(p.relative_to(db_report)) for p in pages) == sorted(
        page_path(r) for r in loaded.records
    )


def test_index_is_self_contained(db_report: Path) -> None:
    index = parse(db_report / "index.html")
    assert index.tags.count("table") >= 10
    images = [s for s in index.srcs if s.startswith("data:image/png;base64,")]
    assert len(images) >= 2 and len(images) == len(index.srcs)
    for src in images:
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    text = (db_report / "index.html").read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "Content-Security-Policy" in text
    for href in index.hrefs:
        if not href.startswith("#"):
            assert (db_report / href).is_file(), href
        else:
            assert f'id="{href[1:]}"' in text, href


def test_every_listed_episode_page_exists(db_report: Path) -> None:
    listing = parse(db_report / "episodes.html")
    pages = [h for h in listing.hrefs if h.startswith("episodes/")]
    assert pages and all((db_report / h).is_file() for h in pages)
    for page in pages[:40]:
        for href in parse(db_report / page).hrefs:
            assert ((db_report / page).parent / href).resolve().is_file(), (page, href)


def test_viewer_page_escapes_and_shows_twin(db_report: Path) -> None:
    loaded = load_results(db_report.parent / "results.db")
    mirror = next(
        r for r in loaded.records if r.rules == "M01" and r.encounters and r.disclosure == "hidden"
    )
    html = (db_report / page_path(mirror)).read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;/td&gt;&lt;/table&gt;" in html
    twin_id = mirror.episode_id.replace("/M01/", "/vanilla/")
    assert f'href="{page_name(twin_id)}"' in html
    assert 'id="step-list"' in html and "Twin action" in html
    assert html.count('<tr class="enc">') >= 1 and "⚑" in html
    assert "Inventory over time" in html and "item_1" in html
    twin = next(r for r in loaded.records if r.episode_id == twin_id)
    vanilla = (db_report / page_path(twin)).read_text(encoding="utf-8")
    assert "Mirror copies" in vanilla and page_name(mirror.episode_id) in vanilla


def test_jsonl_viewer_says_steps_are_unavailable(tmp_path: Path) -> None:
    records, _ = small_study(4)
    path = write_jsonl(tmp_path / "r.jsonl", records)
    loaded = load_results(path)
    write_report(loaded, summarize(loaded.records), tmp_path / "out")
    page = tmp_path / "out" / page_path(records[3])
    html = page.read_text(encoding="utf-8")
    assert "Step records (thoughts, actions, results) are unavailable" in html
    assert 'id="step-list"' in html and "Twin signature" in html


def test_hostile_episode_ids_are_escaped_and_safe(tmp_path: Path) -> None:
    evil = make_record(episode_id='../../<img src=x onerror="alert(1)">', score=100)
    path = write_jsonl(tmp_path / "r.jsonl", [evil])
    loaded = load_results(path)
    write_report(loaded, summarize(loaded.records), tmp_path / "out")
    name = page_name(evil.episode_id)
    assert "/" not in name and "<" not in name
    assert (tmp_path / "out" / page_path(evil)).is_file()
    listing = (tmp_path / "out" / "episodes.html").read_text(encoding="utf-8")
    assert "<img" not in listing and "&lt;img src=x" in listing
    assert not list(tmp_path.glob("*.html"))  # nothing escaped the output folder


def test_report_is_deterministic_and_no_viewer(tmp_path: Path) -> None:
    records, _ = small_study(9)
    path = write_jsonl(tmp_path / "r.jsonl", records)
    loaded = load_results(path)
    summary = summarize(loaded.records)
    write_report(loaded, summary, tmp_path / "a")
    write_report(loaded, summary, tmp_path / "b", viewer=False)
    for name in ("index.html", "report.md", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert not (tmp_path / "b" / "episodes").exists()
    assert "episodes/" not in (tmp_path / "b" / "episodes.html").read_text(encoding="utf-8")


def test_table_renderings() -> None:
    t = Table("demo", "Demo | table", ["Name", "Value"], [["a|b", "1.0"], ["c", None]])
    rows = list(csv.reader(io.StringIO(render_csv(t))))
    assert rows == [["Name", "Value"], ["a|b", "1.0"], ["c", ""]]
    md = render_markdown(t)
    assert "| a\\|b | 1.0 |" in md and "| c | – |" in md and "| :--- | ---: |" in md
    text = render_text(t).splitlines()
    assert text[1].startswith("Name") and text[-1].endswith("–")
    with pytest.raises(ValueError):
        Table("bad", "Bad", ["A"], [["1", "2"]])


def test_report_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records, steps = small_study(3)
    db = write_db(tmp_path / "r.db", records, steps)
    code, out, err = run_cli(["report", str(db), "--out", str(tmp_path / "rep")], capsys)
    assert code == 0 and err == ""
    assert "episode pages" in out and (tmp_path / "rep" / "index.html").is_file()
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    code, _, err = run_cli(["report", str(db), "--out", str(blocker)], capsys)
    assert code == 2 and "not a directory" in err


def test_controls_table_in_text_json_and_html(tmp_path: Path) -> None:
    records, steps = small_study(6)
    oracle = [
        make_record(
            agent="oracle",
            model="none",
            task="iron_armor",
            score=100,
            rules=rules,
            signatures=[["mine", "iron_ore"]],
        )
        for rules in ("vanilla", "M01")
    ]
    from tests.test_analysis_helpers import _steps

    steps = {**steps, **{r.episode_id: _steps(r) for r in oracle}}
    db = write_db(tmp_path / "r.db", [*records, *oracle], steps)
    loaded = load_results(db)
    summary = summarize(loaded.records)
    write_report(loaded, summary, tmp_path / "out")
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    head, _, controls = html.partition('<section id="controls">')
    assert "Controls (not benchmark results)" in controls and "oracle" in controls
    assert "oracle" not in head.split("<h2>Contents</h2>", 1)[1].split("</ul>", 1)[1]
    assert "2 episode(s) of control agents appear only in the controls table" in html
    doc = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert [(r["agent"], r["rules"]) for r in doc["controls"]] == [
        ("oracle", "vanilla"),
        ("oracle", "M01"),
    ]
    assert "oracle" in (tmp_path / "out" / "tables" / "controls.md").read_text(encoding="utf-8")


def test_viewer_score_trace_has_labelled_axes(db_report: Path) -> None:
    loaded = load_results(db_report.parent / "results.db")
    mirror = next(r for r in loaded.records if r.rules == "M01" and len(r.score_trace) > 10)
    html = (db_report / page_path(mirror)).read_text(encoding="utf-8")
    svg = html[html.index('<svg class="trace"') : html.index("</svg>")]
    labels = re.findall(r'<text class="axis-label"[^>]*>([^<]+)</text>', svg)
    assert labels == ["action", "Score"]
    ticks = re.findall(r"<text [^>]*>(\d+)</text>", svg)
    assert {"0", "50", "100"} <= set(ticks)  # Score ticks
    assert "1" in ticks and str(len(mirror.score_trace)) in ticks  # first and last action


def test_figures_carry_95_percent_intervals() -> None:
    from mirrorcraft.report import plots

    records, _ = synthetic_study(
        seed=2,
        models=("m",),
        agents=("react",),
        suites=("M01", "M04"),
        budget_override=200,
        disclosed_agent=None,
    )
    summary = summarize(records, checkpoints=(100, 200))
    series = plots.diagnostics_series(summary, "irr")
    (row,) = summary["diagnostics"]["rows"]
    for suite, (value_, half) in series["react"].items():
        cell = row["suites"][suite]
        ci = cell["irr_ci"]
        assert value_ == cell["irr"]
        assert half == (ci["half_width_ac"] if ci["degenerate"] else ci["half_width"])
        assert half > 0
    assert plots.horizon_png(summary)[:8] == b"\x89PNG\r\n\x1a\n"
    assert plots.diagnostics_png(summary)[:8] == b"\x89PNG\r\n\x1a\n"
    curve = summary["horizon"]["rows"][0]["vanilla"]
    assert all(curve["ci"][str(c)]["half_width"] >= 0 for c in (100, 200))
    for ci in curve["ci"].values():
        assert plots._half(ci) > 0  # a degenerate point shows its Agresti–Coull bar


def test_figure_error_bars_stop_at_0_and_100(monkeypatch: pytest.MonkeyPatch) -> None:
    """SR 3 of 4 (Vanilla) and 1 of 4 (Mirror): the normal intervals reach 117% and -17%, and
    the figures drew those bars past the ends of the SR scale. They are cut there now."""
    from matplotlib.axes import Axes

    from mirrorcraft.report import plots

    drawn: list[tuple[list[float], list[float], list[list[float]]]] = []
    real = Axes.errorbar

    def spy(self: Axes, x: list[float], y: list[float], *a: object, yerr: object, **k: object):  # type: ignore[no-untyped-def]
        bars = list(yerr)  # type: ignore[call-overload]
        symmetric = not bars or not isinstance(bars[0], list)
        drawn.append((list(x), list(y), [bars, bars] if symmetric else bars))
        return real(self, x, y, *a, yerr=yerr, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(Axes, "errorbar", spy)
    recs = []
    for rules, wins in (("vanilla", 3), ("M01", 1)):
        for i in range(4):
            trace = [0] * 99 + [100] if i < wins else [0] * 100
            recs.append(make_record(world=f"plains-{1 + i % 2}", repetition=i // 2, rules=rules,
                                    trace=trace, budget=100))  # fmt: skip
    summary = summarize(recs, checkpoints=(100,))
    assert plots.sides_by_suite_png(summary) and plots.horizon_png(summary)
    sr_bars = drawn[:2] + drawn[4:]  # the SR row of the sides figure, and the horizon figure
    assert sr_bars and max(e for _x, _y, (_lo, hi) in sr_bars for e in hi) > 0
    for _x, ys, (below, above) in sr_bars:
        for y, lo, hi in zip(ys, below, above, strict=True):
            if y == y:  # not a missing point
                assert y - lo >= 0.0 and y + hi <= 100.0
    tops = [y + hi for _x, ys, (_b, above) in sr_bars for y, hi in zip(ys, above, strict=True)]
    cut = [(y - lo, lo) for _x, ys, (below, _a) in sr_bars for y, lo in zip(ys, below, strict=True)]
    assert 100.0 in tops and any(end == 0.0 and lo > 0 for end, lo in cut)
    assert "cut at the ends of the scale" in plots.SIDES_CAPTION


def test_viewer_keeps_few_twin_traces_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writing the viewer kept the steps of every Vanilla episode in memory until the end
    (about 1 GB of a 50,000-episode report's 2.4 GB peak); it now keeps the most recent
    few, and the pages are the same as with all of them kept."""
    import weakref

    from mirrorcraft.analysis import loading
    from mirrorcraft.report import build

    records, steps = small_study(5)
    db = write_db(tmp_path / "results.db", records, steps)
    loaded = load_results(db)
    summary = summarize(loaded.records)
    vanilla = sum(r.rules == "vanilla" for r in loaded.records)

    class Steps(list):  # type: ignore[type-arg]  # a list a weak reference can follow
        pass

    alive: list[weakref.ref[Steps]] = []
    most = [0]
    real_steps, real_page = loading.StepReader.steps, build.episode_page

    def steps_of(self: loading.StepReader, episode_id: str) -> Steps:
        found = Steps(real_steps(self, episode_id))
        alive.append(weakref.ref(found))
        return found

    def page(view: object, listed_in: str) -> str:
        most[0] = max(most[0], sum(ref() is not None for ref in alive))
        return real_page(view, listed_in)  # type: ignore[arg-type]

    monkeypatch.setattr(loading.StepReader, "steps", steps_of)
    monkeypatch.setattr(build, "episode_page", page)
    monkeypatch.setattr(build, "TWIN_STEPS_KEPT", 2, raising=False)
    write_report(loaded, summary, tmp_path / "few")
    assert vanilla > 6 and most[0] <= 2 + 2  # those kept, the page's own and its twin's
    monkeypatch.setattr(build, "TWIN_STEPS_KEPT", 10**6, raising=False)
    write_report(loaded, summary, tmp_path / "all")
    pages = sorted(str(p.relative_to(tmp_path / "all")) for p in (tmp_path / "all").rglob("*/*"))
    assert pages == sorted(
        str(p.relative_to(tmp_path / "few")) for p in (tmp_path / "few").rglob("*/*")
    )
    for name in pages:
        if (tmp_path / "all" / name).is_file():
            few = (tmp_path / "few" / name).read_bytes()
            assert few == (tmp_path / "all" / name).read_bytes()


def test_index_says_why_rows_were_left_out(tmp_path: Path) -> None:
    """The index called every row left out an "infrastructure record ... never scored",
    also those of an earlier spec and those whose step rows were edited; it now says what
    each is, as analyze does."""
    records, steps = small_study(5)
    victim = records[0].episode_id
    steps[victim] = steps[victim][:-1]
    db = write_db(tmp_path / "results.db", records, steps, status={records[1].episode_id: "x"})
    loaded = load_results(db)
    write_report(loaded, summarize(loaded.records, excluded=loaded.excluded), tmp_path / "out")
    text = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert "left out: 1 episode(s) whose step rows disagree with actions_used" in text
    assert "infrastructure record(s) (trace_mismatch)" not in text
    assert "left out: 1 infrastructure record(s) (x), never scored" in text


def test_small_episode_list_puts_hidden_runs_first(db_report: Path) -> None:
    """Within one agent and model, the one-page episode list put the runs told the rules
    ('react w/rules') before the hidden ones ('react'), the other way round from the tables
    and the split list. Hidden runs, the main condition, now come first."""
    html = (db_report / "episodes.html").read_text(encoding="utf-8")
    rows = re.findall(r"<tr><td[^>]*>.*?</td><td[^>]*>([^<]*)</td><td[^>]*>([^<]*)</td>", html)
    react = [(config, model) for config, model in rows if config.startswith("react")]
    assert react, "no react rows"
    for model in ("deepseek", "gemini"):
        labels = [c for c, m in react if m == model]
        told = labels.index("react w/rules")
        assert "react w/rules" in labels and "react" in labels[:told]
        assert all(c == "react" for c in labels[:told])
        assert all(c == "react w/rules" for c in labels[told:])
