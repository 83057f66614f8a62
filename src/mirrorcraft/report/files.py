"""The report folder's files: what a report wrote (its manifest) and what a rewrite removes.

Every report lists the files it wrote in ``report-files.json``. Writing a report into a
folder that holds an earlier one removes the earlier report's files that the new one did
not write (viewer pages of episodes no longer in the results, a ``compare.html`` now
turned off), and only those: a file the manifest does not list is never touched. A
non-empty folder without a manifest is written into only when everything in it has a
report's name (a report of a version before the manifest); any other folder is refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path, PurePosixPath

MANIFEST = "report-files.json"

REPORT_NAMES = frozenset(
    {
        "index.html",
        "episodes.html",
        "compare.html",
        "compare.md",
        "compare.json",
        "report.md",
        "summary.json",
        "tables",
        "episodes",
        "lists",
        MANIFEST,
        MANIFEST + ".tmp",
    }
)
"""Everything a report puts at the top of its folder."""


class ReportFolderError(Exception):
    """The folder holds files that are not a report's; nothing was written."""


def check_folder(out: Path) -> set[str]:
    """The files the earlier report in ``out`` wrote (empty without one); refuses a
    folder that holds anything but a report."""
    if not out.is_dir():
        return set()
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        files = doc["files"] if isinstance(doc, dict) else None
        if isinstance(files, list) and all(isinstance(f, str) for f in files):
            return set(files)
    except (OSError, ValueError, KeyError):
        pass
    foreign = sorted(p.name for p in out.iterdir() if p.name not in REPORT_NAMES)
    if foreign:
        shown = ", ".join(foreign[:3]) + (
            f" and {len(foreign) - 3} more" if len(foreign) > 3 else ""
        )
        raise ReportFolderError(
            f"{out} is not empty and holds no earlier report ({shown}); choose an empty or new "
            "folder for --out (a report's folder is rewritten in place, its own files only)"
        )
    # a report of a version before the manifest kept every viewer page in episodes/ itself
    flat = out / "episodes"
    pages = flat.iterdir() if flat.is_dir() else iter(())
    return {f"episodes/{p.name}" for p in pages if _OLD_PAGE.fullmatch(p.name) and p.is_file()}


_OLD_PAGE = re.compile(r"[A-Za-z0-9._-]*-[0-9a-f]{10}\.html")


def _owned(out: Path, rel: str) -> Path | None:
    """``out/rel`` when ``rel`` names a file a report writes (inside the folder), else None."""
    parts = PurePosixPath(rel).parts
    if not parts or parts[0] not in REPORT_NAMES or any(p in ("", ".", "..") for p in parts):
        return None
    if PurePosixPath(rel).is_absolute() or "\\" in rel:
        return None
    return out.joinpath(*parts)


class ReportWriter:
    """Writes a report's files into ``out`` and keeps their list.

    ``finish`` removes the earlier report's files not written again and saves the new
    manifest; ``abandon`` (after a failure) keeps every file and lists old and new.
    """

    def __init__(self, out: Path) -> None:
        self.out = out
        self.earlier = check_folder(out)
        self.written: list[str] = []
        out.mkdir(parents=True, exist_ok=True)

    def write(self, rel: str, text: str) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.written.append(rel)

    def record(self, rel: str) -> None:
        """List a file written by someone else (``compare.html``)."""
        self.written.append(rel)

    def _save(self, files: set[str]) -> None:
        tmp = self.out / (MANIFEST + ".tmp")
        doc = {"mirrorcraft_report": 1, "files": sorted(files)}
        tmp.write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")
        os.replace(tmp, self.out / MANIFEST)

    def abandon(self) -> None:
        self._save(self.earlier | set(self.written))

    def finish(self) -> int:
        """Remove the earlier report's files this one did not write; the count removed."""
        kept = set(self.written)
        removed = 0
        folders: set[Path] = set()
        for rel in sorted(self.earlier - kept - {MANIFEST}):
            path = _owned(self.out, rel)
            if path is None or path.is_symlink() or not path.is_file():
                continue
            path.unlink()
            removed += 1
            folders.update(p for p in path.parents if self.out in p.parents)
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):  # only an empty one: a user's file keeps it
                folder.rmdir()
        self._save(kept)
        return removed
