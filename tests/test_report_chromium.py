"""The report as a real browser sees it: headless Chromium's DOM of the index, list and viewer.

Needs ``/usr/bin/chromium`` (Debian package ``chromium``); skipped without it.
"""

from __future__ import annotations

import base64
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from mirrorcraft.analysis.compare import compare
from mirrorcraft.analysis.loading import load_results
from mirrorcraft.analysis.reference import load_reference
from mirrorcraft.analysis.summary import summarize
from mirrorcraft.report.build import write_report
from mirrorcraft.report.viewer import page_path
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


BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


def dump_dom(page: Path, profile: Path) -> Dom:
    done = subprocess.run(
        [
            str(CHROMIUM),
            *BROWSER_FLAGS,
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
    comparison = compare(loaded.records, load_reference())
    write_report(loaded, summarize(loaded.records), base / "out", comparison=comparison)
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
    page = report / page_path(mirror)
    assert page_path(mirror) in pages
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


def test_the_side_by_side_page_renders_and_its_screenshot_shows_the_table(
    report: Path, tmp_path: Path
) -> None:
    """compare.html in a real browser: every comparison table is in the DOM, and a screenshot
    of the page's top shows the title and the first rows of Table 2 (dark text on white)."""
    from matplotlib import image

    page = report / "compare.html"
    dom = dump_dom(page, tmp_path / "profile")
    text = " ".join(dom.text)
    assert len(dom.all("table")) >= 7
    for title in (
        "Table 2: Results by configuration and disclosure condition, beside yours",
        "Table 4: ReAct SR with hidden or disclosed rules by suite, beside yours",
        "Table 11: Estimates with 95% intervals",
        "Cochran's Q tests, beside yours",
    ):
        assert title in text, title
    assert "paper only" in text and "both" in text and "Paper in your CI" in text
    index = dump_dom(report / "index.html", tmp_path / "profile")
    assert "compare.html" in [a["href"] for a in index.all("a")]

    shot = tmp_path / "compare.png"
    done = subprocess.run(
        [
            str(CHROMIUM),
            *BROWSER_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--hide-scrollbars",
            "--window-size=1200,900",
            f"--screenshot={shot}",
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    assert _png_size("data:image/png;base64," + base64.b64encode(shot.read_bytes()).decode()) == (
        1200,
        900,
    )
    pixels = image.imread(str(shot))[:, :, :3]
    dark = (pixels.mean(axis=2) < 0.5).mean()
    assert 0.01 < dark < 0.5  # text and table rules drawn on a white page, not a blank one
    rows = (pixels.mean(axis=2) < 0.5).any(axis=1).sum()
    assert rows > 300  # many lines of text: the table's rows are on screen


def _screenshot(url: str, shot: Path, profile: Path, size: str = "1200,900") -> Any:
    from matplotlib import image

    done = subprocess.run(
        [
            str(CHROMIUM),
            *BROWSER_FLAGS,
            f"--user-data-dir={profile}",
            "--hide-scrollbars",
            f"--window-size={size}",
            f"--screenshot={shot}",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    return image.imread(str(shot))[:, :, :3]


def _share(pixels: Any, rgb: tuple[int, int, int], tol: float = 0.08) -> float:
    target = [c / 255 for c in rgb]
    close = (abs(pixels - target) < tol).all(axis=2)
    return float(close.mean())


def test_the_first_figure_is_vanilla_against_mirror_and_it_renders(
    report: Path, tmp_path: Path
) -> None:
    """The figure a reader of the paper expects first: Vanilla and Mirror SR and Score per
    configuration and suite; a screenshot at its anchor shows the red Mirror and grey
    Vanilla points, and an episode page renders its Score trace with labelled axes."""
    index = dump_dom(report / "index.html", tmp_path / "profile")
    figures = [a for a in index.all("section") if a.get("id", "").startswith("fig-")]
    assert figures and figures[0]["id"] == "fig-vanilla-mirror"
    text = " ".join(index.text)
    assert "Figure: Vanilla and Mirror SR and Score by suite" in text
    assert "reference agents (no model)" not in text  # a model ran: its name titles the RIE plot
    url = (report / "index.html").resolve().as_uri() + "#fig-vanilla-mirror"
    pixels = _screenshot(url, tmp_path / "fig.png", tmp_path / "profile")
    assert _share(pixels, (0xD6, 0x27, 0x28)) > 0.0005  # Mirror points and bars
    assert _share(pixels, (0x7F, 0x7F, 0x7F)) > 0.0005  # Vanilla points and bars

    records = load_results(report.parent / "results.db").records
    mirror = next(r for r in records if r.rules == "M04" and r.disclosure == "hidden")
    page = report / page_path(mirror)
    viewer = dump_dom(page, tmp_path / "profile")
    svg_text = " ".join(viewer.text)
    assert "Score" in svg_text and "action" in svg_text.lower()
    pixels = _screenshot(page.resolve().as_uri(), tmp_path / "page.png", tmp_path / "profile")
    dark = (pixels.mean(axis=2) < 0.5).mean()
    assert 0.01 < dark < 0.5  # a drawn page, not a blank one
