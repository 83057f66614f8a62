"""The two kinds of design (mirror rule suites, biome specs) behind one small interface.

A kind knows its catalog, how to check a reply's spec against its schema, how to
build the static report, when a static-only candidate is good enough, how to run
the deterministic controls on an accepted candidate, and which files to write.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mirrorcraft.datapack.manifest import Manifest, ManifestError, parse_manifest
from mirrorcraft.datapack.suites import list_suites
from mirrorcraft.design.biome_catalog import biome_catalog, packaged_biomes
from mirrorcraft.design.biome_report import BiomeCandidate, biome_report
from mirrorcraft.design.diversity import accepted_suites, accepted_summary
from mirrorcraft.design.mirror_catalog import mirror_catalog
from mirrorcraft.design.mirror_report import MirrorCandidate, mirror_report
from mirrorcraft.design.report import StaticReport
from mirrorcraft.design.sampler import BiomeSampler, MirrorSampler
from mirrorcraft.world.registry import biome_spec, world_ids
from mirrorcraft.world.spec import BiomeSpec
from mirrorcraft.worldgen import compile_biome_pack

ENCOUNTERED = ("witness", "familiar", "mirror_route")


@dataclass
class Candidate:
    spec: dict[str, Any]
    report: StaticReport
    value: MirrorCandidate | BiomeCandidate


@dataclass
class ControlsResult:
    passed: bool
    failures: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)


def _summarise(report: Any, leaks: list[Any], *, suite_changes_fail: bool) -> ControlsResult:
    """Failures and a summary of a controls run on an accepted candidate.

    A designed suite must make every one of its changes observable and put each on a
    selected task's route (``suite_changes_fail``). A designed biome is judged only on
    its own worlds: every selected task solvable by the oracle within budget, with twins
    equal, under every rule set. How the packaged suites' changes sit in the new worlds
    (observable or not, on a selected route or not) is reported as information.
    """
    failures = []
    for r in report.rows:
        if r.passed:
            continue
        why = []
        if not r.route:
            why.append("no route")
        if not r.oracle_success or r.oracle_actions > r.budget:
            why.append(f"oracle {'failed' if not r.oracle_success else 'over budget'}")
        if not (r.twins_equal and r.neutral_equal):
            why.append("twins differ before a changed rule fires")
        failures.append(f"{r.world} {r.rules} {r.task}: {', '.join(why)}")
    about_changes = [
        f"{o.world} {o.rules} change {o.change} ({o.trigger}): not observable or not logged ({o.detail})"
        for o in report.observability
        if not o.passed
    ]
    about_changes += [
        f"{s} change {i} lies on no selected task's route" for s, i, _t in report.off_route
    ]
    if suite_changes_fail:
        failures += about_changes
    failures += [f"integrity: {leak.where} shows {leak.token!r}" for leak in leaks]
    oracle: dict[str, int] = {}
    for r in report.rows:
        oracle[r.task] = max(oracle.get(r.task, 0), r.oracle_actions)
    summary = {
        "passed": not failures,
        "rows": len(report.rows),
        "rows_passed": sum(r.passed for r in report.rows),
        "observable_changes": f"{sum(o.passed for o in report.observability)}/{len(report.observability)}",
        "integrity_leaks": len(leaks),
        "oracle_max_actions": oracle,
        "failures": failures[:20],
    }
    if not suite_changes_fail:
        summary["suite_changes"] = about_changes[:20]
    return ControlsResult(not failures, failures, summary)


def _dump_yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write beside ``path`` and rename over it: a killed run leaves the old file or the new
    one, never half of one that ``suites check`` or ``run`` would then trip on."""
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    os.replace(tmp, path)
    return path


class MirrorKind:
    name = "mirror"
    template = "design_mirror"

    def __init__(self, tasks: tuple[str, ...], suite_id: str) -> None:
        self.tasks = tasks
        self.suite_id = suite_id

    def catalog(self) -> dict[str, Any]:
        return mirror_catalog(self.tasks).to_prompt()

    def prompt_values(self) -> dict[str, str]:
        return {"SUITE_ID": self.suite_id}

    def judge_values(self) -> dict[str, str]:
        """The accepted suites the judge screens the candidate's diversity against."""
        return {"ACCEPTED_SUITES": accepted_summary(accepted_suites(self.suite_id))}

    def sampler(self, seed: int) -> MirrorSampler:
        return MirrorSampler(mirror_catalog(self.tasks), seed, self.suite_id)

    def check_spec(self, spec: dict[str, Any]) -> str:
        try:
            parse_manifest(spec, "spec")
        except ManifestError as exc:
            return str(exc)
        return ""

    def evaluate(self, spec: dict[str, Any], fail_fast: bool = False) -> Candidate:
        found = mirror_report(spec, self.tasks, fail_fast=fail_fast)
        if found.manifest is not None and found.manifest.id != self.suite_id:
            found.report.fail("bad_id", f"the suite id must be {self.suite_id!r}")
        return Candidate(spec, found.report, found)

    def static_accept(self, cand: Candidate) -> bool:
        changes = cand.report.sections.get("changes", [])
        return cand.report.ok and all(c["encounter"] in ENCOUNTERED for c in changes)

    def controls(self, cand: Candidate) -> ControlsResult:
        from mirrorcraft.runner.controls import run_controls
        from mirrorcraft.runner.integrity import scan_episode

        assert isinstance(cand.value, MirrorCandidate) and cand.value.manifest is not None
        manifest = cand.value.manifest
        worlds = world_ids()
        report = run_controls(worlds, [manifest], list(self.tasks))
        leaks = [leak for t in self.tasks for leak in scan_episode(worlds[-1], manifest, t)]
        return _summarise(report, leaks, suite_changes_fail=True)

    def write(self, cand: Candidate, out: Path) -> list[Path]:
        assert isinstance(cand.value, MirrorCandidate)
        manifest, suite = cand.value.manifest, cand.value.suite
        assert isinstance(manifest, Manifest) and suite is not None
        base = out / manifest.id
        # The manifest, the file a user points at, comes last.
        return [
            write_atomic(base.with_suffix(".zip"), suite.zip_bytes()),
            write_atomic(base.with_suffix(".sheet.txt"), suite.render_sheet() + "\n"),
            write_atomic(
                base.with_suffix(".yaml"),
                _dump_yaml(manifest.model_dump(mode="json", exclude_none=True)),
            ),
        ]


class BiomeKind:
    name = "biome"
    template = "design_biome"

    def __init__(self, tasks: tuple[str, ...], base: str, biome_name: str, worlds: int = 2) -> None:
        self.tasks = tasks
        self.base = base
        self.biome_name = biome_name
        self.worlds = worlds

    def catalog(self) -> dict[str, Any]:
        return biome_catalog(self.tasks).to_prompt()

    def prompt_values(self) -> dict[str, str]:
        return {"BASE": self.base, "NAME": self.biome_name}

    def judge_values(self) -> dict[str, str]:
        return {}

    def sampler(self, seed: int) -> BiomeSampler:
        return BiomeSampler(biome_spec(self.base), seed, self.biome_name)

    def base_spec(self) -> dict[str, Any]:
        doc = biome_spec(self.base).model_dump(mode="json")
        doc["biome"] = self.biome_name
        return doc

    def check_spec(self, spec: dict[str, Any]) -> str:
        try:
            BiomeSpec.model_validate(spec)
        except ValidationError as exc:
            first = exc.errors()[0]
            return f"field {'.'.join(str(p) for p in first['loc'])!r}: {first['msg']}"
        return ""

    def evaluate(self, spec: dict[str, Any], fail_fast: bool = False) -> Candidate:
        found = biome_report(spec, self.tasks, self.base, self.worlds)
        if found.spec is not None and found.spec.biome != self.biome_name:
            found.report.fail("bad_name", f"the biome name must be {self.biome_name!r}")
        return Candidate(spec, found.report, found)

    def static_accept(self, cand: Candidate) -> bool:
        return cand.report.ok

    def controls(self, cand: Candidate) -> ControlsResult:
        from mirrorcraft.backends.rulesets import VANILLA
        from mirrorcraft.runner.controls import run_controls

        assert isinstance(cand.value, BiomeCandidate)
        rule_sets = [VANILLA, *(m.id for m in list_suites())]
        report = run_controls(cand.value.worlds, rule_sets, list(self.tasks))
        return _summarise(report, [], suite_changes_fail=False)

    def write(self, cand: Candidate, out: Path) -> list[Path]:
        assert isinstance(cand.value, BiomeCandidate) and cand.value.spec is not None
        spec = cand.value.spec
        base = out / spec.biome
        doc = {"biome": spec.biome, "base": self.base, "worlds": cand.report.sections["worlds"]}
        # The spec, the file a user points at, comes last.
        return [
            write_atomic(
                base.with_suffix(".worlds.json"), json.dumps(doc, indent=2, sort_keys=True) + "\n"
            ),
            write_atomic(base.with_suffix(".worldgen.zip"), compile_biome_pack(spec).zip_bytes()),
            write_atomic(base.with_suffix(".yaml"), _dump_yaml(spec.model_dump(mode="json"))),
        ]


def known_biome(base: str) -> bool:
    return base in packaged_biomes()
