"""The report at scale: a split episode list, viewer pages in folders, links that resolve,
and a rewrite that removes the earlier report's stale files and nothing else."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from mirrorcraft.analysis.loading import load_results
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.report import episode_list
from mirrorcraft.report.build import write_report
from mirrorcraft.report.files import MANIFEST
from mirrorcraft.report.viewer import page_path
from mirrorcraft.runner.records import EpisodeRecord
from tests.test_analysis_cli import run_cli
from tests.test_analysis_helpers import synthetic_study, write_db
from tests.test_report_build import parse


def _report(tmp: Path, records: list[EpisodeRecord], out: Path, **kw: object) -> None:
    _, steps = synthetic_study(
        seed=3, agents=("react", "xenon"), worlds=("plains-1",), reps=1, budget_override=40
    )
    db = tmp / f"r{len(list(tmp.glob('r*.db')))}.db"
    write_db(db, records, {r.episode_id: steps[r.episode_id] for r in records})
    loaded = load_results(db)
    write_report(loaded, summarize(loaded.records), out, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def study() -> list[EpisodeRecord]:
    records, _ = synthetic_study(
        seed=3, agents=("react", "xenon"), worlds=("plains-1",), reps=1, budget_override=40
    )
    return records


def _links(folder: Path) -> dict[Path, list[str]]:
    """Each HTML page's links to files (no #anchors, no data: URIs)."""
    out: dict[Path, list[str]] = {}
    for page in folder.rglob("*.html"):
        found = parse(page)
        out[page] = [
            h.split("#")[0]
            for h in found.hrefs + found.srcs
            if not h.startswith(("#", "data:")) and h.split("#")[0]
        ]
    return out


def test_a_large_report_splits_its_list_and_every_link_resolves(
    tmp_path: Path, study: list[EpisodeRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 8,640 episodes the list was one page of every episode and the viewer one folder
    of 8,640 pages; above LIST_PAGE_ROWS the list is an index of per-configuration, model
    and rule-set lists, and the pages sit in a folder per agent, model and task."""
    monkeypatch.setattr(episode_list, "LIST_PAGE_ROWS", 2)  # groups of 3: two pages each
    _report(tmp_path, study, tmp_path / "out")
    moved = tmp_path / "moved" / "copy"
    shutil.copytree(tmp_path / "out", moved)  # relative links work wherever the folder goes
    links = _links(moved)
    for page, hrefs in links.items():
        for href in hrefs:
            assert "://" not in href and not href.startswith("/"), (page, href)
            target = (page.parent / href).resolve()
            assert target.is_file(), (page, href)
            assert moved.resolve() in target.parents, (page, href)
    index = parse(moved / "episodes.html")
    lists = [h for h in index.hrefs if h.startswith("lists/")]
    assert lists and 'id="episode-lists"' in (moved / "episodes.html").read_text("utf-8")
    second = next(h for h in lists if h.endswith("-2.html"))
    assert "Previous page" in (moved / second).read_text("utf-8")
    assert "Next page" in (moved / second.replace("-2.html", ".html")).read_text("utf-8")
    labels = (moved / "episodes.html").read_text("utf-8").split("<tr>")[2:4]
    assert "react<" in labels[0] and "react w/rules" not in labels[0]  # hidden runs first
    listed: list[str] = []
    for name in lists:
        rows = [h for h in parse(moved / name).hrefs if h.startswith("../episodes/")]
        assert 0 < len(rows) <= 2
        listed += [h.removeprefix("../") for h in rows]
    assert sorted(listed) == sorted(page_path(r) for r in study)
    folders = [p for p in (moved / "episodes").iterdir()]
    assert len(folders) == len({(r.agent, r.model, r.task) for r in study}) > 1
    # a viewer page's "Episode list" goes to the list that shows it
    first = moved / listed[0]
    assert any(h.startswith("../../lists/") for h in parse(first).hrefs)


def test_a_small_report_keeps_one_list(tmp_path: Path, study: list[EpisodeRecord]) -> None:
    _report(tmp_path, study, tmp_path / "out")
    listing = parse(tmp_path / "out" / "episodes.html")
    assert sorted(h for h in listing.hrefs if h.startswith("episodes/")) == sorted(
        page_path(r) for r in study
    )
    assert not (tmp_path / "out" / "lists").exists()


def test_a_rewrite_removes_stale_pages_and_never_a_users_file(
    tmp_path: Path, study: list[EpisodeRecord]
) -> None:
    """Writing a report over an earlier one left the earlier pages of episodes no longer in
    the results (they still opened); now the manifest's leftovers go, other files stay."""
    out = tmp_path / "out"
    _report(tmp_path, study, out)
    notes = out / "notes.txt"
    notes.write_text("mine", encoding="utf-8")
    kept = study[: len(study) // 2]
    gone = study[len(study) // 2 :]
    mine = out / Path(page_path(gone[0])).parent / "annotated.html"
    mine.write_text("mine", encoding="utf-8")
    _report(tmp_path, kept, out, comparison=None)
    assert all((out / page_path(r)).is_file() for r in kept)
    assert not any((out / page_path(r)).exists() for r in gone)
    assert notes.read_text("utf-8") == "mine" and mine.read_text("utf-8") == "mine"
    manifest = json.loads((out / MANIFEST).read_text("utf-8"))["files"]
    assert "notes.txt" not in manifest and page_path(gone[0]) not in manifest
    # without the viewer no page is left, only the user's file and its folder
    _report(tmp_path, kept, out, viewer=False)
    pages = [p for p in (out / "episodes").rglob("*") if p.is_file()]
    assert pages == [mine]


def test_a_folder_that_holds_no_report_is_refused(
    tmp_path: Path, study: list[EpisodeRecord], capsys: pytest.CaptureFixture[str]
) -> None:
    _, steps = synthetic_study(
        seed=3, agents=("react", "xenon"), worlds=("plains-1",), reps=1, budget_override=40
    )
    db = write_db(tmp_path / "r.db", study, steps)
    home = tmp_path / "project"
    home.mkdir()
    (home / "thesis.tex").write_text("x", encoding="utf-8")
    (home / "index.html").write_text("my page", encoding="utf-8")
    code, _, err = run_cli(["report", str(db), "--out", str(home)], capsys)
    assert code == 2 and "thesis.tex" in err and "choose an empty or new folder" in err
    assert sorted(p.name for p in home.iterdir()) == ["index.html", "thesis.tex"]
    assert (home / "index.html").read_text("utf-8") == "my page"
    # refused before the results load (minutes at scale): a missing database is not reached
    code, _, err = run_cli(["report", str(tmp_path / "none.db"), "--out", str(home)], capsys)
    assert code == 2 and "thesis.tex" in err


def test_an_older_reports_flat_pages_go_on_rewrite(
    tmp_path: Path, study: list[EpisodeRecord]
) -> None:
    """A report written before the manifest (every page in episodes/) is rewritten in place;
    its flat viewer pages are removed, not left beside the new folders."""
    out = tmp_path / "out"
    (out / "episodes").mkdir(parents=True)
    (out / "index.html").write_text("old", encoding="utf-8")
    old = out / "episodes" / "plains-1_M01_diamond-0123456789.html"
    old.write_text("old", encoding="utf-8")
    _report(tmp_path, study, out)
    assert not old.exists() and (out / page_path(study[0])).is_file()


def test_a_manifest_never_leads_outside_the_report(
    tmp_path: Path, study: list[EpisodeRecord]
) -> None:
    """A hand-edited manifest naming files outside the report, or not a report's, removes
    none of them."""
    out = tmp_path / "out"
    _report(tmp_path, study, out)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    (out / "mine.txt").write_text("keep", encoding="utf-8")
    doc = json.loads((out / MANIFEST).read_text("utf-8"))
    doc["files"] += ["../victim.txt", str(victim), "episodes/../../victim.txt", "mine.txt"]
    (out / MANIFEST).write_text(json.dumps(doc), encoding="utf-8")
    _report(tmp_path, study, out)
    assert victim.read_text("utf-8") == "keep" and (out / "mine.txt").is_file()


def test_an_interrupted_rewrite_keeps_every_file_listed(
    tmp_path: Path, study: list[EpisodeRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewrite stopped half way (Ctrl-C) removes nothing and lists the earlier report's
    files and its own, so the next complete rewrite still removes the stale ones."""
    from mirrorcraft.report import build

    out = tmp_path / "out"
    _report(tmp_path, study, out)
    real = build.episode_page
    written = [0]

    def stop(view: object, listed_in: str) -> str:
        written[0] += 1
        if written[0] > 3:
            raise KeyboardInterrupt
        return real(view, listed_in)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "episode_page", stop)
    half = study[: len(study) // 2]
    with pytest.raises(KeyboardInterrupt):
        _report(tmp_path, half, out)
    assert all((out / page_path(r)).is_file() for r in study)
    listed = set(json.loads((out / MANIFEST).read_text("utf-8"))["files"])
    assert {page_path(r) for r in study} <= listed
    monkeypatch.setattr(build, "episode_page", real)
    _report(tmp_path, half, out)
    assert not any((out / page_path(r)).exists() for r in study[len(half) :])


def test_runs_own_report_says_why_it_was_not_written(
    tmp_path: Path, study: list[EpisodeRecord]
) -> None:
    from mirrorcraft.commands import run_cmd

    _, steps = synthetic_study(
        seed=3, agents=("react", "xenon"), worlds=("plains-1",), reps=1, budget_override=40
    )
    loaded = load_results(write_db(tmp_path / "r.db", study, steps))
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "draft.md").write_text("mine", encoding="utf-8")
    said = run_cmd._report(tmp_path, loaded, summarize(loaded.records))
    assert said.startswith("not written:") and "draft.md" in said
    assert [p.name for p in (tmp_path / "report").iterdir()] == ["draft.md"]


def test_runs_own_report_says_how_to_write_the_pages_it_skipped(
    tmp_path: Path,
    study: list[EpisodeRecord],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Above VIEWER_LIMIT the run said only 'use mirrorcraft report'; it now gives the
    command, which rewrites the run's own report folder in place."""
    from mirrorcraft.commands import run_cmd

    _, steps = synthetic_study(
        seed=3, agents=("react", "xenon"), worlds=("plains-1",), reps=1, budget_override=40
    )
    db = write_db(tmp_path / "results.sqlite", study, steps)
    loaded = load_results(db)
    monkeypatch.setattr(run_cmd, "VIEWER_LIMIT", 5)
    said = run_cmd._report(tmp_path, loaded, summarize(loaded.records))
    capsys.readouterr()
    command = shlex.split(said.split("to write them: ")[1].removesuffix(")"))
    assert command[:2] == ["mirrorcraft", "report"] and command[3:] == [
        "--out",
        str(tmp_path / "report"),
    ]
    assert not (tmp_path / "report" / "episodes").exists()
    code, _, err = run_cli(command[1:], capsys)
    assert code == 0, err
    assert all((tmp_path / "report" / page_path(r)).is_file() for r in study)
