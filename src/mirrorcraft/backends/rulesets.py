"""Naming rule sets: ``vanilla``, a suite id (``M04``) or a datapack path; loaded once per process."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from mirrorcraft.datapack.manifest import Manifest
from mirrorcraft.datapack.suites import ManifestError, find_suite, load_manifest_file, suite_pack
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.pack import MAX_FILES, MAX_PACK_BYTES, PackData, load_pack
from mirrorcraft.rules.ruleset import RuleSet, vanilla_ruleset

VANILLA = "vanilla"


class UnknownRuleSetError(RulesError):
    pass


def broken_routes(rules: RuleSet, tasks: tuple[str, ...]) -> list[str]:
    """Tasks without a route under these rules, in any packaged world ("task in world")."""
    import numpy as np

    from mirrorcraft.datapack.routes import analyse, task_route
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.world.registry import load_world, world_ids

    out = []
    for world in world_ids():
        w = load_world(world).world
        blocks = {w.palette.names[i] for i in np.unique(w.grid).tolist()}
        reach = analyse(rules, blocks, {m.type for m in w.mobs})
        out += [
            f"{t} in {world}"
            for t in tasks
            if not task_route(rules, reach, get_task(t).final.advancement)[0]
        ]
    return out


def is_manifest_path(path: Path) -> bool:
    return path.suffix in (".yaml", ".yml") or path.name.endswith(".manifest.json")


def manifest_pack(path: Path) -> tuple[Manifest, PackData]:
    """A manifest file and its compiled datapack; a compile error names the file too."""
    manifest = load_manifest_file(path)  # its errors name the file already
    try:
        return manifest, suite_pack(manifest)
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from None


def pack_layer(name: str) -> str | PackData:
    """One layer of ``rules --pack``: a suite id or manifest path compiled to its datapack,
    or a datapack folder/zip path as given (loaded, and checked, by ``RuleSet.load``)."""
    suite = find_suite(name)
    if suite is not None:
        return suite_pack(suite)
    path = Path(name)
    if path.exists() and is_manifest_path(path):
        return manifest_pack(path)[1]
    return name


def vanilla_rules() -> RuleSet:
    return vanilla_ruleset()


@lru_cache(maxsize=32)
def resolve_rules(name: str) -> RuleSet:
    """``vanilla``, a packaged suite id, or a path to a datapack (folder/zip) or suite manifest.

    Loaded once per process by name: a pack edited afterwards is not seen (``current_rules``
    is the form that sees it)."""
    return _load_rules(name)


def current_rules(name: str) -> RuleSet:
    """``resolve_rules``, except that a rule set named by a path is compiled afresh once
    what its files hold has changed (someone editing a pack and making environments from
    it again, in one process)."""
    if name == VANILLA or find_suite(name) is not None or not Path(name).exists():
        return resolve_rules(name)
    return _rules_version(name, _source_digest(Path(name)))


@lru_cache(maxsize=8)
def _rules_version(name: str, digest: str) -> RuleSet:
    return _load_rules(name)


def _source_digest(path: Path) -> str:
    """A digest of the names and bytes of the files under ``path`` (or of the file itself).
    It reads no further than the pack limits: the loader refuses a pack past them anyway."""
    digest = hashlib.sha256()
    try:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file())
        else:
            files = [path] if path.is_file() else []  # not a device or a pipe
        total = 0
        for count, file in enumerate(files, 1):
            size = file.stat().st_size
            total += size
            if count > MAX_FILES or total > MAX_PACK_BYTES:
                digest.update(
                    f"past the limits at {file}:{size}:{file.stat().st_mtime_ns}".encode()
                )
                break
            digest.update(f"{file.relative_to(path) if file != path else ''}\0{size}\0".encode())
            digest.update(file.read_bytes())
    except OSError as exc:
        digest.update(f"unreadable: {exc}".encode())  # the loader says what is wrong
    return digest.hexdigest()


def _load_rules(name: str) -> RuleSet:
    if name == VANILLA:
        return vanilla_rules()
    suite = find_suite(name)
    if suite is not None:
        return RuleSet.load([suite_pack(suite)], name=suite.id)
    path = Path(name)
    if path.exists():
        if is_manifest_path(path):
            manifest, pack = manifest_pack(path)
            rules = RuleSet.load([pack], name=manifest.id)
            broken = broken_routes(rules, manifest.selected_tasks)
            if broken:
                raise UnknownRuleSetError(f"suite {manifest.id} breaks a task route: {broken[0]}")
            return rules
        return RuleSet.load([path], name=path.stem)
    raise UnknownRuleSetError(
        f"unknown rule set {name!r}: not 'vanilla', a suite id (M01-M06) or an existing path"
    )


TITLE_NAMES = 6
"""How many changed resources a datapack's derived title names before "and N more"."""


@lru_cache(maxsize=32)
def rules_title(name: str) -> str | None:
    """What a user's rule set changes, in a line for the report (never for the agent): a
    manifest's ``name``, else the datapack's own ``pack.mcmeta`` description, else the
    resources it writes that differ from vanilla ("changes loot_tables: blocks/gravel").
    None for vanilla and the packaged suites (the analysis reads their manifests) and for
    a name that is not a readable rule set here."""
    if name == VANILLA or find_suite(name) is not None:
        return None
    path = Path(name)
    try:
        if not path.exists():
            return None
        if is_manifest_path(path):
            manifest = load_manifest_file(path)
            return (manifest.name or manifest.description).strip() or None
        description = load_pack(path).description.strip()
        if description:
            return " ".join(description.split())[:200]
        rules = resolve_rules(name)
    except (RulesError, ManifestError, OSError, ValueError):
        return None
    return _changes_line(rules)


def _changes_line(rules: RuleSet) -> str | None:
    """The resources the rule set's own (last) pack writes that differ from vanilla's."""
    vanilla = vanilla_rules().documents
    own = rules.packs[-1] if rules.packs else ""
    changed: dict[str, list[str]] = {}
    for (category, location), doc in sorted(rules.documents.items()):
        if (
            rules.sources.get((category, location)) == own
            and vanilla.get((category, location)) != doc
        ):
            changed.setdefault(category, []).append(location.removeprefix("minecraft:"))
    if not changed:
        return "no change from vanilla"
    names = [(c, n) for c, ns in changed.items() for n in ns]
    shown: dict[str, list[str]] = {}
    for category, location in names[:TITLE_NAMES]:
        shown.setdefault(category, []).append(location)
    line = "changes " + "; ".join(f"{c}: {', '.join(ns)}" for c, ns in shown.items())
    if len(names) > TITLE_NAMES:
        line += f" and {len(names) - TITLE_NAMES} more"
    return line
