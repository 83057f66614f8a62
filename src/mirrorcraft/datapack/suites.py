"""The packaged rule suites (M01-M06) and user suites: manifests, compiled packs, sheets."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

from mirrorcraft.datapack.compiler import CompiledSuite, compile_manifest
from mirrorcraft.datapack.manifest import Manifest, ManifestError, load_manifest_file
from mirrorcraft.rules.pack import PackData
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset

__all__ = [
    "ManifestError",
    "compiled",
    "find_suite",
    "list_suites",
    "load_manifest_file",
    "rule_sheet",
    "suite_pack",
]


def _suite_dir() -> Path:
    return Path(str(resources.files("mirrorcraft") / "data" / "suites"))


@lru_cache(maxsize=1)
def _packaged() -> dict[str, Manifest]:
    out = {}
    for path in sorted(_suite_dir().glob("*.yaml")):
        manifest = load_manifest_file(path)
        out[manifest.id] = manifest
    return out


def list_suites() -> list[Manifest]:
    return list(_packaged().values())


def find_suite(suite_id: str) -> Manifest | None:
    return _packaged().get(suite_id)


@lru_cache(maxsize=32)
def _compiled(manifest: Manifest) -> CompiledSuite:
    suite = compile_manifest(manifest, vanilla_ruleset())
    suite.check_effective()
    return suite


def compiled(manifest: Manifest, vanilla: RuleSet | None = None) -> CompiledSuite:
    """A suite to check, show or run; a change that changes nothing is a ManifestError."""
    if vanilla is None:
        return _compiled(manifest)
    suite = compile_manifest(manifest, vanilla)
    suite.check_effective()
    return suite


@lru_cache(maxsize=32)
def rule_sheet(manifest: Manifest) -> str:
    """The disclosed rule sheet (prose, then structured overrides) of a suite, computed once."""
    return _compiled(manifest).render_sheet(vanilla_ruleset())


def suite_pack(manifest: Manifest) -> PackData:
    return _compiled(manifest).pack()
