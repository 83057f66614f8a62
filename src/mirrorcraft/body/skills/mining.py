"""mine and prepare_access: reach blocks, digging through what owned tools can harvest."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mirrorcraft.body import results as r
from mirrorcraft.body.body import Body
from mirrorcraft.body.paths import Blocked
from mirrorcraft.body.results import ActionResult, failure
from mirrorcraft.rules.items import ItemStack, item_totals


def unknown_block(body: Body, skill: str, args: Mapping[str, Any], name: str) -> ActionResult:
    if body.is_item(name):
        return failure(skill, args, r.INVALID_ARGS, f"{name!r} is an item, not a block id")
    return failure(skill, args, r.INVALID_ARGS, f"{name!r} is not a known block id")


def blocked_result(
    skill: str, args: Mapping[str, Any], target: str, blocked: Blocked
) -> ActionResult:
    if blocked.needs_blocks:
        return failure(
            skill,
            args,
            r.MISSING_ITEM,
            f"the way to {target} climbs {blocked.needs_blocks} blocks straight up: pillaring "
            f"needs as many disposable blocks (such as dirt or cobblestone), and fewer are owned",
            needs_blocks=blocked.needs_blocks,
        )
    if blocked.too_far:
        return failure(
            skill,
            args,
            r.TARGET_UNREACHABLE,
            f"the way to {target} is too long to dig in one call",
            blocked_by=blocked.block,
        )
    return failure(
        skill,
        args,
        r.TARGET_UNREACHABLE,
        f"the way to the nearest {target} is blocked by {blocked.block}, which no owned tool can harvest",
        blocked_by=blocked.block,
    )


def stopped_result(
    body: Body, skill: str, args: Mapping[str, Any], target: str, stopped: Blocked
) -> ActionResult:
    """A way walked only in part: too long for one call, or a tool broke on it."""
    if stopped.too_far:
        return failure(
            skill,
            args,
            r.TARGET_UNREACHABLE,
            f"the way to {target} is too long to dig in one call; dug {body.dug} blocks toward it",
            blocked_by=stopped.block,
            dug=body.dug,
        )
    return failure(
        skill,
        args,
        r.NEEDS_TOOL,
        f"the way to {target} goes on through {stopped.block}, which no owned tool can harvest now",
        blocked_by=stopped.block,
        dug=body.dug,
    )


def with_produced(result: ActionResult, produced: Mapping[str, int]) -> ActionResult:
    """A result that also reports items picked up on the way (a failed call can gain some)."""
    if not produced:
        return result
    return replace(result, produced=dict(produced))


def mine(body: Body, args: Mapping[str, Any]) -> ActionResult:
    target, count = args["block"], args["count"]
    names = body.block_names(target)
    if names is None:
        return unknown_block(body, "mine", args, target)
    mined: list[str] = []
    target_drops: list[ItemStack] = []
    path_drops: list[ItemStack] = []
    problem: ActionResult | None = None
    refused: set[str] = set()
    for i in range(count):
        hits = body.state.nearest(names, body.pos, body.config.mine_radius, k=8)
        if not hits:
            problem = failure(
                "mine",
                args,
                r.NO_TARGET_NEARBY,
                f"no {target} within {body.config.mine_radius:g} blocks",
            )
            break
        chosen = None
        for hit in hits:
            name = body.state.loaded.world.palette.names[hit.block_id]
            if not body.can_harvest_now(name):
                if name not in refused:
                    refused.add(name)
                    body.harvest_refused(name)
                problem = problem or failure(
                    "mine", args, r.NEEDS_TOOL, f"no owned tool can harvest {name}", block=name
                )
                continue
            plan = body.approach(hit.pos)
            if isinstance(plan, Blocked):
                if problem is None or problem.reason == r.NEEDS_TOOL:
                    problem = blocked_result("mine", args, name, plan)
                continue
            chosen = (hit, name, plan)
            break
        if chosen is None:
            break
        hit, name, plan = chosen
        problem = None
        walked = body.walk(plan, sub=f"m{i}")
        path_drops.extend(walked.drops)
        if walked.stopped is not None:
            problem = stopped_result(body, "mine", args, name, walked.stopped)
            break
        if not body.can_harvest_now(name):  # the tool for it broke on the way
            problem = failure(
                "mine", args, r.NEEDS_TOOL, f"no owned tool can harvest {name} now", block=name
            )
            break
        target_drops.extend(body.break_block(hit.pos, sub=f"m{i}"))
        mined.append(name)
    if not mined:
        assert problem is not None
        return with_produced(problem, body.gain(path_drops))
    gained = body.gain(target_drops + path_drops)
    message = f"mined {len(mined)} of {count} {target}"
    if problem is not None:
        message += f"; stopped: {problem.message}"
    return ActionResult(
        "mine",
        args,
        True,
        "",
        message,
        produced=gained,
        details={
            "blocks": mined,
            "drops": item_totals(target_drops),
            "path_drops": item_totals(path_drops),
            "requested": count,
        },
    )


def prepare_access(body: Body, args: Mapping[str, Any]) -> ActionResult:
    target = args["target"]
    names = body.block_names(target)
    if names is None:
        return unknown_block(body, "prepare_access", args, target)
    hits = body.state.nearest(names, body.pos, body.config.mine_radius, k=4)
    if not hits:
        return failure(
            "prepare_access",
            args,
            r.NO_TARGET_NEARBY,
            f"no {target} within {body.config.mine_radius:g} blocks",
        )
    first_block: Blocked | None = None
    for hit in hits:
        plan = body.approach(hit.pos)
        if isinstance(plan, Blocked):
            first_block = first_block or plan
            continue
        if not plan.digs and plan.stand == body.pos:
            return ActionResult(
                "prepare_access",
                args,
                True,
                "",
                f"{target} is already within reach",
                details={"distance": round(hit.distance, 1)},
            )
        walked = body.walk(plan, sub="access")
        gained = body.gain(walked.drops)
        if walked.stopped is not None:
            return with_produced(
                stopped_result(body, "prepare_access", args, target, walked.stopped), gained
            )
        return ActionResult(
            "prepare_access",
            args,
            True,
            "",
            f"cleared {len(plan.digs)} blocks and moved next to {target}",
            produced=gained,
            details={"cleared": len(plan.digs)},
        )
    assert first_block is not None
    return blocked_result("prepare_access", args, target, first_block)
