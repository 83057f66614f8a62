"""The caches behind LLM prompts give exactly what computing afresh gives.

Recipe hypotheses are cached per inventory and refill only the grids whose inputs
changed; verified action effects keep their JSON text from when they were recorded;
templates are split once; system prompt values are rendered once per agent. Each
test compares against a plain computation, over changing state, so a stale cache
fails it.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from typing import Any

from mirrorcraft.agents.base import EpisodeContext
from mirrorcraft.agents.knowledge import concrete_grid
from mirrorcraft.agents.llm.direct import DirectAgent
from mirrorcraft.agents.llm.history import EFFECT_LIMIT, History, Step, j
from mirrorcraft.agents.llm.prior import FACILITIES, HYPOTHESIS_LIMIT, VanillaPrior
from mirrorcraft.agents.llm.render import render_fields
from mirrorcraft.agents.llm.templates import PLACEHOLDER, load_template, prompts_dir
from mirrorcraft.backends.rulesets import vanilla_rules
from mirrorcraft.backends.sim import SimEpisode
from mirrorcraft.body.results import ActionResult
from mirrorcraft.evaluator.tasks import get_task
from mirrorcraft.world.registry import load_world
from tests.llm_fakes import FakeClient


def reference_hypotheses(
    prior: VanillaPrior, inventory: dict[str, int], facilities: set[str]
) -> list[dict[str, Any]]:
    """The hypotheses computed the plain way, with ``knowledge.concrete_grid``."""
    out: list[dict[str, Any]] = []
    for option in prior.options:
        result = option.outputs[0][0]
        if result in inventory and result in FACILITIES:
            continue
        if not any(inventory.get(i, 0) > 0 for cell in option.inputs for i in cell):
            continue
        grid, missing = concrete_grid(option, inventory)
        ready = option.station == "inventory" or option.station in facilities
        out.append(
            {
                "output": result,
                "count": option.outputs[0][1],
                "station": option.station,
                "grid": grid,
                "missing": missing,
                "executable": not missing and ready,
                "stationReady": ready,
            }
        )
    out.sort(key=lambda h: (not h["executable"], len(h["missing"]), str(h["output"])))
    return out[:HYPOTHESIS_LIMIT]


def test_hypotheses_equal_the_plain_computation_as_the_inventory_changes() -> None:
    vanilla = vanilla_rules()
    shared = VanillaPrior.for_task(vanilla, "enchantment")
    prior = VanillaPrior(shared.belief, shared.relevant, shared.options, shared.singular)
    items = sorted({i for o in prior.options for cell in o.inputs for i in cell})
    items += ["crafting_table", "furnace", "dirt", "oak_log", "birch_log"]
    rng = random.Random(7)
    inventory: dict[str, int] = {}
    facilities: set[str] = set()
    seen: list[tuple[dict[str, int], set[str]]] = []
    for step in range(400):
        # A random walk: a few counts change per step (zeros kept sometimes), facilities
        # come and go, and now and then an earlier state comes back (a cache hit).
        if step % 37 == 36 and seen:
            old_inventory, old_facilities = rng.choice(seen)
            inventory, facilities = dict(old_inventory), set(old_facilities)
        else:
            for item in rng.sample(items, rng.randint(1, 3)):
                n = max(0, inventory.get(item, 0) + rng.choice((-3, -1, 1, 2, 4, 9)))
                if n == 0 and rng.random() < 0.5:
                    inventory.pop(item, None)
                else:
                    inventory[item] = n
            if rng.random() < 0.1:
                facilities ^= {"crafting_table"}
        seen.append((dict(inventory), set(facilities)))
        want = reference_hypotheses(prior, inventory, facilities)
        assert prior.hypotheses(inventory, facilities) == want, (step, inventory)
        known, text = prior.hypotheses_text(inventory, facilities)
        assert known == want and text == j(want)
    assert any(prior.hypotheses(i, f) for i, f in seen)


def test_hypotheses_handed_out_are_copies() -> None:
    prior = VanillaPrior.for_task(vanilla_rules(), "iron_armor")
    inventory = {"oak_planks": 3, "stick": 1}
    first = prior.hypotheses(inventory, set())
    assert first
    first[0]["grid"][0][0] = "bedrock"
    first[0]["missing"]["bedrock"] = 9
    first.append({"output": "bedrock"})
    again = prior.hypotheses(inventory, set())
    assert again == reference_hypotheses(prior, inventory, set())
    assert prior.hypotheses_text(inventory, set())[1] == j(again)


def step(index: int, action: dict[str, Any], produced: dict[str, int], ok: bool = True) -> Step:
    result = ActionResult(
        action["skill"], action["args"], ok, "" if ok else "missing_item", "m", produced, {}
    )
    return Step(index, "t", action, result, {}, dict(produced), 0, 0, False)


def test_effect_texts_follow_the_recorded_effects() -> None:
    history = History()
    rng = random.Random(3)
    for i in range(60):
        block = f"block_{rng.randrange(20)}"
        action = {"skill": "mine", "args": {"block": block, "count": rng.randrange(1, 4)}}
        history.record(step(i, action, {block: rng.randrange(1, 5)}, ok=rng.random() < 0.8))
        effects = history.verified_effects()
        copies, text = history.verified_effects_text()
        assert copies == effects and text == j(effects)
        assert len(effects) <= EFFECT_LIMIT
    assert len(history.verified_effects()) == EFFECT_LIMIT


def test_a_changed_field_is_encoded_again_not_taken_from_its_text() -> None:
    history = History()
    history.record(step(1, {"skill": "mine", "args": {"block": "stone"}}, {"cobblestone": 1}))
    effects, text = history.verified_effects_text()
    changed = [*effects, {"action": "x", "consumed": {}, "produced": {"a": 1}, "step": 2}]
    texts: dict[str, tuple[Any, str]] = {"verified_action_effects": (effects, text)}
    fields = agent_fields()
    fields["verified_action_effects"] = changed
    rendered = render_fields(fields, texts=texts)
    assert rendered == render_fields(fields) and j(changed) in rendered
    fields["verified_action_effects"] = effects
    assert render_fields(fields, texts=texts) == render_fields(fields)


def agent_fields() -> dict[str, Any]:
    vanilla = vanilla_rules()
    agent = DirectAgent("d", FakeClient(lambda m, meta: "{}"), vanilla)
    agent.start(EpisodeContext("iron_armor", "Iron", 100, 1))
    ep = SimEpisode(load_world("plains-1"), vanilla, vanilla, get_task("iron_armor"), seed=1)
    return dict(agent.fields(ep.observe()))


ACTIONS = [
    {"skill": "mine", "args": {"block": "log", "count": 1}},
    {
        "skill": "craft_grid",
        "args": {"station": "inventory", "grid": [["oak_log", None], [None, None]]},
    },
    {
        "skill": "craft_grid",
        "args": {"station": "inventory", "grid": [["oak_planks", None], ["oak_planks", None]]},
    },
    {"skill": "mine", "args": {"block": "stone", "count": 2}},
    {"skill": "wait", "args": {"ticks": 20}},
]


def test_prompts_equal_the_uncached_block_over_an_episode() -> None:
    """Every observation block equals the block rendered from the fields alone (no texts),
    and the hypotheses equal the plain computation."""
    vanilla = vanilla_rules()
    replies = iter(json.dumps(ACTIONS[(i * 3) % len(ACTIONS)]) for i in range(10_000))
    agent = DirectAgent("d", FakeClient(lambda m, meta: next(replies)), vanilla)
    agent.start(EpisodeContext("iron_armor", "Iron", 10_000, 1))
    task = get_task("iron_armor").with_budget(10_000)
    ep = SimEpisode(load_world("plains-1"), vanilla, vanilla, task, seed=1)
    obs = ep.observe()
    for _ in range(60):
        decision = asyncio.run(agent.act(obs))
        assert decision is not None
        fields = agent.fields(obs)
        assert agent.observation_text(obs) == render_fields(dict(fields))
        assert fields["vanilla_recipe_hypotheses"] == reference_hypotheses(
            agent.prior,  # type: ignore[arg-type]
            dict(obs.inventory),
            {f.id for f in obs.facilities},
        )
        obs = ep.step(decision.action).observation


def test_templates_render_like_a_plain_substitution() -> None:
    for path in sorted(prompts_dir().glob("*.md")):
        t = load_template(path.stem)
        for section, text in t.sections.items():
            names = sorted(set(PLACEHOLDER.findall(text)))
            values = {n: f" <{n.lower()}>\n" for n in names}
            want = PLACEHOLDER.sub(lambda m, v=values: v[m.group(1)], text).strip()
            assert t.render(section, values) == want, (path.stem, section)
            assert t.render(section, values) == want  # the second use, from the split form
            if names:
                missing = dict(values)
                missing.pop(names[0])
                try:
                    t.render(section, missing)
                except Exception as exc:
                    assert re.search("no value for", str(exc))
                else:
                    raise AssertionError("a missing value was not reported")


def test_system_prompt_values_are_not_shared_with_callers() -> None:
    agent = DirectAgent("d", FakeClient(lambda m, meta: "{}"), vanilla_rules())
    first = agent.system_common()
    first["SKILLS"] = "changed"
    assert agent.system_common()["SKILLS"] != "changed"


def test_xenon_graph_text_follows_every_change_of_the_graph() -> None:
    from mirrorcraft.agents.llm.xenon import XenonAgent, _j
    from mirrorcraft.agents.llm.xenon_graph import DependencyGraph

    agent = XenonAgent("x", FakeClient(lambda m, meta: "{}"), vanilla_rules())
    agent.start(EpisodeContext("iron_armor", "Iron", 100, 1))
    nodes = [
        {"item": "story/goal", "requirements": [{"item": "a", "count": 1}]},
        {"item": "a", "requirements": [{"item": "b", "count": 2}]},
        {"item": "b", "requirements": []},
    ]
    graph, problem = DependencyGraph.from_prior(
        "story/goal", {"root": "story/goal", "nodes": nodes}
    )
    assert not problem
    assert agent.graph_text(graph) == _j(graph.to_json())
    assert agent.graph_text(graph) == _j(graph.to_json())  # unchanged: the kept text
    graph.verify("b", {"skill": "mine", "args": {"block": "b"}}, 3, None, None)
    assert agent.graph_text(graph) == _j(graph.to_json())
    graph.nodes["b"].observed.append({"skill": "mine", "args": {"block": "c"}})  # in place
    assert agent.graph_text(graph) == _j(graph.to_json())
    graph.nodes["a"].requirements[0].count = 5  # in place, deep inside
    assert agent.graph_text(graph) == _j(graph.to_json())
    graph.needs_revision("a", 4)
    assert agent.graph_text(graph) == _j(graph.to_json())
