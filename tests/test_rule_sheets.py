"""The disclosed condition gets the rule sheet of packaged suites and of suite manifest files."""

from __future__ import annotations

import shutil
from pathlib import Path

from mirrorcraft.datapack.suites import compiled, find_suite
from mirrorcraft.runner.executor import rule_sheet_for


def test_sheets_for_packaged_and_file_suites(tmp_path: Path) -> None:
    packaged = compiled(find_suite("M04")).render_sheet()  # type: ignore[arg-type]
    assert rule_sheet_for("M04") == packaged
    from importlib import resources

    source = Path(str(resources.files("mirrorcraft") / "data" / "suites" / "M04.yaml"))
    copy = tmp_path / "my_suite.yaml"
    shutil.copyfile(source, copy)
    assert rule_sheet_for(str(copy)) == packaged
    assert rule_sheet_for("vanilla") is None
    assert rule_sheet_for(str(tmp_path / "missing.yaml")) is None
