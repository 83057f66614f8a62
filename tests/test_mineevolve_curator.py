"""MineEvolve's curator: each rejection reason, merging, retirement, and budgeted retrieval."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorcraft.agents.mineevolve.agent import EXTRA_FAILURE_TYPES
from mirrorcraft.agents.mineevolve.config import make_config
from mirrorcraft.agents.mineevolve.curator import Curator, Vocabulary
from mirrorcraft.agents.mineevolve.entries import KnowledgeEntry, estimate_tokens
from mirrorcraft.agents.mineevolve.knowledge_base import KnowledgeBase
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.body.actions import skill_specs

CFG = make_config()
V = vanilla_rules()
VOCAB = Vocabulary(
    frozenset(V.game.items),
    frozenset(V.game.blocks),
    frozenset(skill_specs()),
    frozenset((*CFG.failure_types, *EXTRA_FAILURE_TYPES)),
    frozenset(V.game.entities),
)
TABLE = {
    "condition": "place a crafting table",
    "action": {"skill": "place", "args": {"block": "crafting_table"}},
    "checks": [{"type": "facility", "block": "crafting_table"}],
}
PICK = {
    "condition": "craft a wooden pickaxe",
    "action": {
        "skill": "craft_grid",
        "args": {
            "station": "crafting_table",
            "grid": [["oak_planks"] * 3, [None, "stick", None], [None, "stick", None]],
        },
    },
    "checks": [{"type": "inv_gain", "item": "wooden_pickaxe", "n": 1}],
}


def remedy(**changes: Any) -> dict[str, Any]:
    doc = {
        "trigger_context": ["target:wooden_pickaxe", "failure:MISSING_STATION"],
        "failure_type": "MISSING_STATION",
        "risk_pattern": "crafting a tool without a placed crafting table fails",
        "repair_action": [TABLE],
        "scope": "unfinished_plan_suffix",
        "confidence": 0.7,
    }
    doc.update(changes)
    return doc


def skill(**changes: Any) -> dict[str, Any]:
    doc = {
        "trigger_context": ["goal:wooden_pickaxe", "target:wooden_pickaxe"],
        "preconditions": ["have:stick"],
        "steps": [TABLE, PICK],
        "verification": {"type": "inv_ge", "item": "wooden_pickaxe", "n": 1},
        "confidence": 0.8,
    }
    doc.update(changes)
    return doc


def curator(enabled: bool = True) -> Curator:
    return Curator(CFG.curator, VOCAB, enabled=enabled)


def build(doc: dict[str, Any], kind: str = "remedy", eid: str = "r1") -> KnowledgeEntry:
    entry, problem = curator().build(doc, kind, eid, ["0:e_001"])
    assert entry is not None, problem
    return entry


def verdict(
    doc: dict[str, Any],
    kind: str = "remedy",
    kb: KnowledgeBase | None = None,
    failing: str = "",
    eid: str = "r1",
) -> tuple[bool, str]:
    v = curator().admit(build(doc, kind, eid), kb or KnowledgeBase(), failing)
    return v.accepted, v.reason


def test_accepts_a_complete_specific_remedy_and_skill() -> None:
    kb = KnowledgeBase()
    assert verdict(remedy(), kb=kb) == (True, "")
    assert verdict(skill(), "skill", kb=kb, eid="s1") == (True, "")
    assert kb.counts() == {"skill": 1, "remedy": 1, "reflection": 0}


def test_schema_rejections_name_the_field() -> None:
    c = curator()
    for doc, kind, field in (
        (remedy(trigger_context=[]), "remedy", "trigger_context"),
        (remedy(repair_action=[]), "remedy", "repair_action"),
        (remedy(scope="everywhere"), "remedy", "scope"),
        (remedy(risk_pattern=""), "remedy", "risk_pattern"),
        (skill(steps="do it"), "skill", "steps"),
        (skill(verification=None), "skill", "verification"),
        ({"text": ""}, "reflection", "trigger_context"),
    ):
        entry, problem = c.build(doc, kind, "x1", [])
        assert entry is None and field in problem, (field, problem)
    assert c.build("not an object", "remedy", "x", [])[0] is None


def test_match_rejects_terms_not_grounded_in_observation_fields() -> None:
    assert verdict(remedy(trigger_context=["when things go wrong"])) == (False, "match")
    assert verdict(remedy(trigger_context=["mood:sad", "target:stick"])) == (False, "match")
    assert verdict(remedy(trigger_context=["have:unobtainium"])) == (False, "match")
    assert verdict(remedy(trigger_context=["failure:SOMETHING_ELSE", "target:stick"])) == (
        False,
        "match",
    )


def test_exec_rejects_steps_the_body_cannot_run() -> None:
    fly = {**TABLE, "action": {"skill": "fly", "args": {}}}
    assert verdict(remedy(repair_action=[fly])) == (False, "exec")
    no_check = {k: v for k, v in PICK.items() if k != "checks"}
    assert verdict(skill(steps=[TABLE, no_check]), "skill") == (False, "exec")
    assert verdict(skill(verification={"type": "vibes"}), "skill") == (False, "exec")


def test_specificity_rejects_generic_advice_and_plain_retries() -> None:
    assert verdict(remedy(risk_pattern="try again and be careful")) == (False, "specificity")
    assert verdict(remedy(trigger_context=["failure:MISSING_STATION"])) == (False, "specificity")
    entry = build(remedy(repair_action=[PICK]))
    failing = entry.repair_subgoals()[0].signature()
    assert verdict(remedy(repair_action=[PICK]), failing=failing) == (False, "specificity")


def test_conflict_with_high_confidence_knowledge_and_merge_of_the_same() -> None:
    kb = KnowledgeBase()
    strong = build(remedy(confidence=0.95), eid="r_strong")
    assert curator().admit(strong, kb).accepted
    other_fix = {
        **TABLE,
        "action": {"skill": "explore", "args": {"target": "crafting_table"}},
        "checks": [{"type": "visible", "target": "crafting_table"}],
    }
    assert verdict(remedy(repair_action=[other_fix]), kb=kb) == (False, "conflict")
    same = curator().admit(build(remedy(), eid="r_same"), kb)
    assert same.accepted and same.reason == "merged" and same.detail == "r_strong"
    assert kb.entries["r_strong"].support == 2 and "r_same" not in kb.entries
    # A weakly held entry does not block an alternative.
    kb2 = KnowledgeBase()
    curator().admit(build(remedy(confidence=0.3), eid="r_weak"), kb2)
    assert verdict(remedy(repair_action=[other_fix]), kb=kb2) == (True, "")


def test_without_the_curator_everything_storable_goes_in() -> None:
    kb = KnowledgeBase()
    loose = curator(enabled=False)
    for i, doc in enumerate((remedy(risk_pattern="try again"), remedy(), remedy())):
        assert loose.admit(build(doc, eid=f"r{i}"), kb).accepted
    assert len(kb.entries) == 3


def test_confidence_follows_use_and_poor_entries_retire() -> None:
    kb = KnowledgeBase()
    c = curator()
    c.admit(build(remedy(confidence=0.5)), kb)
    for _ in range(CFG.curator.min_uses + 3):
        c.record_use(kb, "r1", False)
    entry = kb.entries["r1"]
    assert entry.retired and entry.confidence(CFG.curator.prior_weight) < CFG.curator.retire_below
    assert [op["op"] for op in kb.ops][:2] == ["add", "use"] and kb.ops[-1]["op"] in (
        "use",
        "retire",
    )


def test_read_only_knowledge_base_never_changes() -> None:
    kb = KnowledgeBase.of([build(remedy())], writable=False)
    curator().record_use(kb, "r1", True)
    kb.add(build(skill(), "skill", "s1"))
    assert kb.ops == [] and kb.entries["r1"].uses == 0 and "s1" not in kb.entries


def test_retrieval_prefers_matching_entries() -> None:
    c = curator()
    kb = KnowledgeBase()
    c.admit(build(remedy(), eid="r1"), kb)
    c.admit(build(skill(trigger_context=["goal:iron_pickaxe"]), "skill", "s1"), kb)
    ctx = frozenset({"target:wooden_pickaxe", "failure:missing_station", "goal:diamond"})
    found = c.retrieve(kb.live(), ctx, ["skill", "remedy"])
    assert [e.id for e in found.entries] == ["r1"]
    assert c.retrieve(kb.live(), ctx, ["skill"]).entries == ()


ITEMS = sorted(V.game.items)[:40]


@st.composite
def entries(draw: Any) -> list[KnowledgeEntry]:
    out = []
    for i in range(draw(st.integers(0, 25))):
        item = draw(st.sampled_from(ITEMS))
        steps = [PICK] * draw(st.integers(1, 4))
        doc = skill(
            trigger_context=[f"target:{item}", f"goal:{draw(st.sampled_from(ITEMS))}"],
            steps=steps,
            confidence=draw(st.floats(0, 1)),
        )
        out.append(build(doc, "skill", f"s{i}"))
    return out


@settings(max_examples=60, deadline=None)
@given(entries(), st.integers(0, 700), st.lists(st.sampled_from(ITEMS), max_size=6))
def test_retrieval_never_exceeds_its_budget(
    pool: list[KnowledgeEntry], budget: int, items: list[str]
) -> None:
    ctx = frozenset(f"target:{i}" for i in items) | frozenset(f"goal:{i}" for i in items)
    found = curator().retrieve(pool, ctx, ["skill"], budget=budget)
    assert found.tokens <= budget
    assert (
        sum(estimate_tokens(e.render(CFG.curator.prior_weight) + "\n") for e in found.entries)
        == found.tokens
    )
    assert len(found.entries) <= CFG.curator.top_k
    assert all(any(t in ctx for t in e.trigger) for e in found.entries)


def test_exec_rejects_actions_checks_and_verifications_naming_nothing_that_exists() -> None:
    """A skill mining "unobtainium" (or a grid cell, check or verification naming it) used to
    be admitted: the body parses any id, so it looked executable and was stored for good."""
    mine = {
        "condition": "mine it",
        "action": {"skill": "mine", "args": {"block": "unobtainium"}},
        "checks": [{"type": "inv_gain", "item": "cobblestone", "n": 1}],
    }
    grid = {
        **PICK,
        "action": {
            "skill": "craft_grid",
            "args": {
                "station": "crafting_table",
                "grid": [
                    ["oak_planks", "mithril", "oak_planks"],
                    [None, "stick", None],
                    [None, "stick", None],
                ],
            },
        },
    }
    check = {**TABLE, "checks": [{"type": "visible", "target": "dragon_of_doom"}]}
    for steps in ([mine], [TABLE, grid], [check]):
        assert verdict(skill(steps=steps), "skill", eid="s1") == (False, "exec"), steps
    unreal = {"type": "inv_ge", "item": "unobtainium", "n": 1}
    assert verdict(skill(verification=unreal), "skill", eid="s1") == (False, "exec")
    assert verdict(remedy(repair_action=[mine])) == (False, "exec")
    hunt = {
        "condition": "hunt a cow",
        "action": {"skill": "attack", "args": {"target": "cow"}},
        "checks": [{"type": "inv_gain", "item": "leather", "n": 1}],
    }
    trunk = {
        "condition": "find a tree",
        "action": {"skill": "explore", "args": {"target": "log"}},
        "checks": [{"type": "visible", "target": "log"}],
    }
    steps = [trunk, hunt]
    ok = skill(steps=steps, verification={"type": "inv_ge", "item": "leather", "n": 1})
    assert verdict(ok, "skill", eid="s1") == (True, "")


def test_an_entry_longer_than_the_retrieval_budget_is_refused_when_built() -> None:
    """An entry whose own text exceeds the budget can never be retrieved; it used to be
    stored anyway (and shown whole to the judge), growing the store with dead weight."""
    c = curator()
    wordy = {**TABLE, "rationale": "x" * 20_000}
    entry, problem = c.build(skill(steps=[wordy]), "skill", "s1", [])
    assert entry is None and "retrieval budget" in problem and "could never be retrieved" in problem
    long_risk = remedy(risk_pattern="lava " * 55, repair_action=[TABLE] * 12)
    assert c.build(long_risk, "remedy", "r1", [])[0] is None
    assert c.build(skill(), "skill", "s1", [])[0] is not None
    free = Curator(CFG.curator.model_copy(update={"budget_tokens": 0}), VOCAB)
    assert free.build(skill(steps=[wordy]), "skill", "s1", [])[0] is not None


def test_a_skill_whose_verification_does_not_hold_where_its_segment_ended_is_refused() -> None:
    """The paper induces a skill from a segment whose final state satisfies the skill's
    verification; a skill claiming 64 diamonds after crafting a pickaxe used to be stored,
    and its topic then kept any true diamond skill from being asked for."""
    from dataclasses import replace

    from tests.simtools import episode

    obs = episode().observe()
    final = replace(obs, inventory={"wooden_pickaxe": 1, "stick": 2})
    gained = {"wooden_pickaxe": 1, "oak_planks": -3, "stick": -2}
    c = curator()

    def screened(verification: dict[str, Any]) -> tuple[bool, str]:
        v = c.screen(
            build(skill(verification=verification), "skill", "s1"),
            KnowledgeBase(),
            final=(final, gained),
        )
        return v.accepted, v.reason

    assert screened({"type": "inv_ge", "item": "wooden_pickaxe", "n": 1}) == (True, "")
    assert screened({"type": "inv_gain", "item": "wooden_pickaxe", "n": 1}) == (True, "")
    assert screened({"type": "inv_ge", "item": "diamond", "n": 64}) == (False, "exec")
    assert screened({"type": "inv_gain", "item": "stick", "n": 1}) == (False, "exec")
    assert screened({"type": "facility", "block": "furnace"}) == (False, "exec")
    v = c.screen(
        build(skill(verification={"type": "inv_ge", "item": "diamond", "n": 64}), "skill", "s1"),
        KnowledgeBase(),
        final=(final, gained),
    )
    assert "does not hold where the segment ended" in v.detail


def test_triggers_written_with_the_minecraft_prefix_match_the_planning_context() -> None:
    """A model writing 'target:minecraft:wooden_pickaxe' passed 'match' (the check strips the
    prefix) but the term was stored as written, and the planning context never holds it: the
    entry could be retrieved only in part, or never."""
    kb = KnowledgeBase()
    c = curator()
    doc = remedy(trigger_context=["Target:minecraft:wooden_pickaxe", "failure:MISSING_STATION"])
    entry = build(doc)
    assert entry.trigger == ("target:wooden_pickaxe", "failure:missing_station")
    assert c.admit(entry, kb).accepted
    context = frozenset({"target:wooden_pickaxe", "failure:missing_station"})
    assert c.retrieve(kb.live(), context, ["remedy"]).entries == (kb.entries["r1"],)
    sk = build(
        skill(
            trigger_context=["goal:minecraft:wooden_pickaxe"],
            preconditions=["have:minecraft:stick"],
        ),
        "skill",
        "s1",
    )
    assert sk.trigger == ("goal:wooden_pickaxe",) and sk.preconditions == ("have:stick",)
    assert verdict(remedy(trigger_context=["have: stick", "target:stick"])) == (False, "match")


def test_a_judges_rejection_keeps_its_reason_as_the_model_wrote_it() -> None:
    """A judge that rejected with "Specificity" or "conflict: contradicts remedy_0002" was
    counted as an unusable judgement (reason "judge"), so the curation counts by reason
    misreported why candidates were kept out."""
    from mirrorcraft.agents.mineevolve.judge import UNUSABLE, parse_judgement

    parse = parse_judgement("skill_0001")

    def rejected(reason: Any) -> Any:
        return parse({"accepted": [], "rejected": [{"id": "skill_0001", "reason": reason}]})

    assert rejected("Specificity") == ((False, "specificity"), "")
    assert rejected(" conflict: contradicts remedy_0002") == ((False, "conflict"), "")
    assert rejected("EXEC") == ((False, "exec"), "")
    assert rejected("schema|match|exec|specificity|conflict") == ((False, UNUSABLE), "")
    assert rejected("too vague") == ((False, UNUSABLE), "")
    assert rejected(None) == ((False, UNUSABLE), "")
    assert parse({"accepted": ["skill_0001"]}) == ((True, ""), "")


def test_a_remedy_for_a_failure_type_the_monitor_never_reports_is_not_matchable() -> None:
    """A remedy's failure type is what ties it to the recent failures (retrieval's bonus); one
    the monitor never reports ("CRAFTING_FAILURE") was stored although no failure could ever
    match it, while the same name as a trigger term was refused as unmatchable."""
    assert verdict(remedy(failure_type="CRAFTING_FAILURE")) == (False, "match")
    assert verdict(remedy(failure_type="missing_station")) == (True, "")
    assert (
        curator(enabled=False)
        .admit(build(remedy(failure_type="CRAFTING_FAILURE")), KnowledgeBase())
        .accepted
    )
