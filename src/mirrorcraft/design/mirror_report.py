"""The static report for a candidate rule suite (kind ``mirror``).

Order of checks: schema (``parse_manifest``), design rules (id, selected tasks,
catalog allowlist, sheets, counts), compilation (``compile_manifest``), then the
route analysis in every packaged world under the candidate's rules: a route for
every selected task, milestones, route length against Vanilla, and each change's
relevance and encounterability (``encounter.py``). Codes are listed in
``docs/design.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.datapack.compiler import CompiledSuite, compile_manifest
from mirrorcraft.datapack.manifest import (
    BlockDrops,
    CookingResult,
    EntityLoot,
    Manifest,
    ManifestError,
    RecipeOutput,
    parse_manifest,
)
from mirrorcraft.datapack.suites import find_suite
from mirrorcraft.design.dependency import (
    WorldRoutes,
    milestone_gaps,
    packaged_views,
    routes_in,
    vanilla_familiar,
    vanilla_routes,
)
from mirrorcraft.design.diversity import accepted_suites, check_diversity
from mirrorcraft.design.encounter import assess_changes
from mirrorcraft.design.mirror_catalog import (
    LARGE_COUNT,
    PREFERRED_CHANGES,
    MirrorCatalog,
    mirror_catalog,
)
from mirrorcraft.design.report import StaticReport
from mirrorcraft.rules.errors import RulesError
from mirrorcraft.rules.ids import full_id, normalize_id
from mirrorcraft.rules.ruleset import RuleSet
from mirrorcraft.runner.controls import NEUTRAL_SCRIPT

SHORTCUT_RATIO = 0.5
DETOUR_RATIO = 2.0
"""Mirror routes shorter than half, or longer than twice, the Vanilla route are flagged."""
MIN_SHEET = 12


@dataclass
class MirrorCandidate:
    report: StaticReport
    manifest: Manifest | None = None
    suite: CompiledSuite | None = None
    rules: RuleSet | None = None


@lru_cache(maxsize=1)
def neutral_rules() -> frozenset[str]:
    """Rules ("loot_tables/<table>", "recipes/<id>") the twin controls' neutral script consults.

    The script is run under Vanilla rules in every packaged world and every rule
    application it causes is recorded, path digging included (leaves cleared on
    the way to a sheep). A suite that rewrites one of these would make the
    neutral twin check fail, so the static report rejects it up front.
    """
    from mirrorcraft.backends.sim import SimEpisode
    from mirrorcraft.body.events import RuleApplication
    from mirrorcraft.evaluator.tasks import get_task
    from mirrorcraft.world.registry import load_world, world_ids

    vanilla = vanilla_rules()
    seen: set[str] = set()
    for world in world_ids():
        ep = SimEpisode(load_world(world), vanilla, vanilla, get_task("iron_armor"), seed=1)
        forward = ep.evaluator.rule_applied

        def record(app: RuleApplication, forward: Any = forward) -> None:
            seen.add(app.rule)
            forward(app)

        setattr(ep.evaluator, "rule_applied", record)  # noqa: B010 - observe, then pass on
        for action in NEUTRAL_SCRIPT:
            ep.step(action)
    return frozenset(seen)


def _id_or_none(raw: str) -> str | None:
    """The bare id, or None for text that is no resource id (``""``, ``"#"``, ``"#tag"``)."""
    try:
        return normalize_id(raw)
    except ValueError:
        return None


def _check_allowlist(report: StaticReport, m: Manifest, cat: MirrorCatalog) -> None:
    def outside(i: int, what: str, value: str) -> None:
        report.fail("not_in_catalog", f"{what} {value!r} is not in the catalog", change=i)

    def item_ok(i: int, raw: str, what: str = "output item") -> None:
        if raw != "{crafted}" and _id_or_none(raw) not in cat.outputs:
            outside(i, what, raw)

    for i, ch in enumerate(m.changes):
        if isinstance(ch, RecipeOutput):
            for t in ch.targets:
                recipe = _id_or_none(t)
                if recipe is None or full_id(recipe) not in cat.crafting:
                    outside(i, "crafting recipe", t)
            tag = ch.select.result_tag if ch.select is not None else None
            if tag is not None and _id_or_none(tag.removeprefix("#")) not in cat.result_tags:
                outside(i, "result tag", tag)
            if ch.item is not None:
                item_ok(i, ch.item)
        elif isinstance(ch, CookingResult):
            if _id_or_none(ch.input) not in cat.processing_inputs:
                outside(i, "processing input", ch.input)
            item_ok(i, ch.item)
        elif isinstance(ch, BlockDrops):
            for t in ch.targets:
                known = (
                    _id_or_none(t[1:]) in cat.block_tags
                    if t.startswith("#")
                    else _id_or_none(t) in cat.blocks
                )
                if not known:
                    outside(i, "block target", t)
        elif isinstance(ch, EntityLoot) and _id_or_none(ch.target) not in cat.entities:
            outside(i, "entity", ch.target)
        for d in getattr(ch, "drops", ()):
            item_ok(i, d.item)
        counts = [getattr(ch, "count", None) or 1, *(d.count for d in getattr(ch, "drops", ()))]
        if max(counts) > LARGE_COUNT:
            report.warn("extreme_count", f"a count of {max(counts)} is extreme", change=i)
        if len(ch.sheet.strip()) < MIN_SHEET:
            report.fail(
                "missing_sheet", "the rule-sheet sentence is missing or too short", change=i
            )


def id_problems(suite_id: str, allow_packaged: bool = False) -> list[str]:
    """Why a suite id cannot be a designed suite's (empty when it can)."""
    out = []
    if not allow_packaged and (find_suite(suite_id) is not None or suite_id.lower() == "vanilla"):
        out.append(f"id {suite_id!r} is already taken by a packaged rule set")
    vanilla = vanilla_rules()
    names = set(vanilla.game.items) | set(vanilla.game.blocks)
    if len(suite_id) < 3 or any(suite_id.lower() in n for n in names):
        out.append(f"id {suite_id!r} must be 3+ characters and not part of an item name")
    return out


def _check_design(
    report: StaticReport, m: Manifest, tasks: tuple[str, ...], allow_packaged: bool
) -> None:
    for problem in id_problems(m.id, allow_packaged):
        report.fail("bad_id", problem)
    if sorted(m.selected_tasks) != sorted(tasks):
        report.fail(
            "task_mismatch",
            f"selected_tasks must be exactly {list(tasks)} (got {list(m.selected_tasks)})",
        )
    lo, hi = PREFERRED_CHANGES
    if not lo <= len(m.changes) <= hi:
        report.warn("change_count", f"{len(m.changes)} changes; {lo} to {hi} are preferred")


def _check_effects(report: StaticReport, suite: CompiledSuite) -> None:
    neutral = neutral_rules()
    for i, written in sorted(suite.changed.items()):
        if i in suite.idle:
            report.fail(
                "no_effect",
                "the change leaves every rule it writes as Vanilla (or an earlier change) has it",
                change=i,
            )
        clash = sorted(f"{c}/{loc}" for c, loc in written if f"{c}/{loc}" in neutral)
        if clash:
            report.fail(
                "touches_neutral_script",
                f"rewrites {clash[0]}, which the twin controls' neutral script uses",
                change=i,
            )


def _route_sections(
    report: StaticReport,
    tasks: tuple[str, ...],
    van: tuple[WorldRoutes, ...],
    mir: list[WorldRoutes],
    mirror: RuleSet,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for task in tasks:
        missing = [w.world for w in mir if not w.routes[task].ok]
        for world in missing:
            report.fail("no_route", f"{task} has no route in {world}", task=task, world=world)
        gaps = sorted(
            {g for w in mir if w.routes[task].ok for g in milestone_gaps(mirror, w.reach, task)}
        )
        for g in gaps:
            report.warn("milestone_unreachable", f"{task}: milestone {g} cannot be met", task=task)
        v_len = min(len(w.routes[task].steps) for w in van)
        ok_lengths = [len(w.routes[task].steps) for w in mir if w.routes[task].ok]
        m_len = min(ok_lengths) if ok_lengths else 0
        if ok_lengths and m_len < SHORTCUT_RATIO * v_len:
            report.warn("route_shortcut", f"{task}: {m_len} steps instead of {v_len}", task=task)
        if ok_lengths and m_len > DETOUR_RATIO * v_len:
            report.warn("route_detour", f"{task}: {m_len} steps instead of {v_len}", task=task)
        reference = next((w for w in mir if w.routes[task].ok), None)
        out[task] = {
            "route_in_every_world": not missing,
            "missing_in": missing,
            "vanilla_steps": v_len,
            "mirror_steps": m_len,
            "mirror_route": reference.routes[task].text() if reference else [],
            "mirror_route_world": reference.world if reference else None,
            "unreachable_milestones": gaps,
        }
    return out


def mirror_report(
    raw: object,
    tasks: tuple[str, ...],
    *,
    allow_packaged: bool = False,
    fail_fast: bool = False,
    accepted: Sequence[Manifest] | None = None,
) -> MirrorCandidate:
    """Validate, compile and analyse a candidate manifest (a mapping or a ``Manifest``).

    ``accepted`` are the suites already accepted, for the diversity section (default:
    the packaged suites other than one with the candidate's id).
    """
    report = StaticReport("mirror")
    try:
        manifest = raw if isinstance(raw, Manifest) else parse_manifest(raw, "spec")
    except ManifestError as exc:
        report.invalid(str(exc))
        return MirrorCandidate(report)
    vanilla = vanilla_rules()
    catalog = mirror_catalog(tasks)
    _check_design(report, manifest, tasks, allow_packaged)
    _check_allowlist(report, manifest, catalog)
    try:
        suite = compile_manifest(manifest, vanilla)
        rules = RuleSet.load([suite.pack()], name=manifest.id)
    except (ManifestError, RulesError, ValueError) as exc:
        report.invalid(str(exc))
        return MirrorCandidate(report, manifest)
    report.compiled = True
    for note in suite.notes:
        report.warn("compiler_note", note)
    _check_effects(report, suite)
    check_diversity(
        report,
        suite,
        vanilla,
        rules,
        accepted_suites(manifest.id) if accepted is None else accepted,
    )
    views = packaged_views()
    mir: list[WorldRoutes] = []
    for view in views:
        mir.append(routes_in(rules, view, tasks))
        if fail_fast and not all(r.ok for r in mir[-1].routes.values()):
            report.fail("no_route", f"a selected task has no route in {view.world}")
            return MirrorCandidate(report, manifest, suite, rules)
    van = vanilla_routes(tasks)
    report.sections["tasks"] = _route_sections(report, tasks, van, mir, rules)
    evidence = assess_changes(
        suite, vanilla, rules, views, van, mir, vanilla_familiar(tasks), tasks
    )
    changes = []
    for ev, ch in zip(evidence, manifest.changes, strict=True):
        if not ev.relevant_to:
            report.fail(
                "off_route",
                "the change lies on no selected task's witness route (a change to variants "
                "only, such as one wood type, needs the whole tag or select)",
                change=ev.index,
            )
        elif ev.level == "shadowed":
            report.warn(
                "shadowed", "its trigger cannot be performed under the suite", change=ev.index
            )
        elif ev.level == "none":
            report.warn(
                "not_encounterable",
                "an agent pursuing a selected task is not expected to trigger it",
                change=ev.index,
            )
        changes.append({"index": ev.index, "op": ch.op, "sheet": ch.sheet, **ev.to_json()})
    report.sections["changes"] = changes
    return MirrorCandidate(report, manifest, suite, rules)
