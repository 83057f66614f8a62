"""The report as a real browser sees it: headless Chromium's DOM of the index, list and viewer.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``); skipped without it.
"""

from __future__ import annotations

import base64
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mirrorcraft.analysis.loading import load_results
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.report.build import write_report
from mirrorcraft.report.viewer import page_name
from tests.test_analysis_helpers import synthetic_study, write_db

CHROMIUM = Path("/usr/bin/chromium")

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="headless browser check needs /usr/bin/chromium (apt-get install -y chromium)",
)


class Dom(HTMLParser):
    """Counts what the browser's serialized DOM holds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self._stack: list[str] = []
        self.step_rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        self.tags.append((tag, attr))
        if tag == "table":
            self._stack.append(attr.get("id", ""))
        if tag == "tr" and self._stack and self._stack[-1] == "step-list":
            self.step_rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag]


def dump_dom(page: Path, profile: Path) -> Dom:
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            "--dump-dom",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Dom()
    dom.feed(done.stdout)
    return dom


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("chromium")
    records, steps = synthetic_study(
        seed=21, models=("gemini",), agents=("react", "xenon"), worlds=("plains-1",), reps=1
    )
    db = write_db(base / "results.db", records, steps)
    loaded = load_results(db)
    write_report(loaded, summarize(loaded.records), base / "out")
    return base / "out"


def _png_size(src: str) -> tuple[int, int]:
    data = base64.b64decode(src.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_index_list_and_viewer_render(report: Path, tmp_path: Path) -> None:
    index = dump_dom(report / "index.html", tmp_path / "profile")
    tables = index.all("table")
    assert len(tables) >= 10
    images = index.all("img")
    assert len(images) >= 2
    for img in images:
        width, height = _png_size(img["src"])
        assert width > 100 and height > 100
    text = " ".join(index.text)
    assert "Results by configuration and model" in text
    assert "Disclosure split for react" in text
    hrefs = [a["href"] for a in index.all("a")]
    assert "episodes.html" in hrefs

    listing = dump_dom(report / "episodes.html", tmp_path / "profile")
    pages = [a["href"] for a in listing.all("a") if a["href"].startswith("episodes/")]
    records = load_results(report.parent / "results.db").records
    assert len(pages) == len(records)
    assert all((report / p).is_file() for p in pages)

    mirror = next(r for r in records if r.rules == "M04" and r.disclosure == "hidden")
    page = report / "episodes" / page_name(mirror.episode_id)
    assert f"episodes/{page.name}" in pages
    viewer = dump_dom(page, tmp_path / "profile")
    # one header row plus one row per action: escaped thoughts did not break the table
    assert viewer.step_rows == 1 + mirror.actions_used
    assert not viewer.all("script")
    assert not [i for i in viewer.all("img") if i.get("src") == "x"]
    text = " ".join(viewer.text)
    assert "<script>alert(1)</script>" in text  # shown as text, never run
    assert "Milestones reached" in text and "Inventory over time" in text
    for a in viewer.all("a"):
        assert (page.parent / a["href"]).resolve().is_file(), a["href"]
