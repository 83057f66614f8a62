"""Malformed actions never raise: they get invalid_args with a message, and cost one action."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mirrorcraft.body.actions import Action, ActionError, parse_action, skill_listing, skill_specs
from tests.simtools import episode

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=300),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=20), inner, max_size=5)
    ),
    max_leaves=20,
)
skill_names = st.sampled_from([*skill_specs(), "fly", "", "MINE"])
actions = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {
            "skill": skill_names,
            "args": st.dictionaries(
                st.sampled_from(
                    [
                        "block",
                        "count",
                        "grid",
                        "station",
                        "item",
                        "target",
                        "input",
                        "option",
                        "height",
                        "ticks",
                        "give",
                        "get",
                        "with",
                        "x",
                    ]
                ),
                json_values,
                max_size=4,
            ),
        }
    ),
)


@settings(max_examples=300, deadline=None)
@given(actions)
def test_parse_never_raises(raw: object) -> None:
    out = parse_action(raw)
    assert isinstance(out, Action | ActionError)
    if isinstance(out, ActionError):
        assert out.message


EP = episode(budget=10_000)


@settings(max_examples=200, deadline=None)
@given(actions)
def test_stepping_garbage_never_raises_and_costs_one_action(raw: object) -> None:
    before = EP.used
    out = EP.step(raw)
    assert EP.used == before + 1
    assert out.result.ok or out.result.reason
    if not isinstance(parse_action(raw), Action):
        assert out.result.reason == "invalid_args"


def test_specific_malformed_cases() -> None:
    cases = [
        ({"skill": "mine", "args": {"block": "log", "count": "4"}}, "integer"),
        ({"skill": "mine", "args": {"block": "x" * 5000}}, "longer than"),
        ({"skill": "mine", "args": {}}, "needs argument"),
        (
            {
                "skill": "craft_grid",
                "args": {"station": "inventory", "grid": ["a", None, None, None]},
            },
            "flat list",
        ),
        (
            {"skill": "craft_grid", "args": {"station": "inventory", "grid": [["a"], ["b", "c"]]}},
            "same length",
        ),
        ({"skill": "smelt", "args": {"input": "raw_iron", "count": 7}}, "between 1 and 6"),
        ({"skill": "enchant", "args": {"item": "book", "option": "best"}}, "one of"),
        ({"skill": "mine", "args": {"block": "log", "speed": 3}}, "no argument"),
        ({"skill": "teleport"}, "unknown skill"),
        (["mine", "log"], "must be an object"),
        ({"skill": "mine", "args": {"block": "Robert'); DROP TABLE"}}, "not a valid id"),
    ]
    for raw, fragment in cases:
        out = parse_action(raw)
        assert isinstance(out, ActionError) and fragment in out.message, (raw, out)


def test_defaults_and_normalisation() -> None:
    out = parse_action({"skill": "mine", "args": {"block": "minecraft:Oak_Log"}})
    assert isinstance(out, Action) and out.args == {"block": "oak_log", "count": 1}
    assert isinstance(parse_action({"skill": "smelt", "args": {"input": "raw_iron"}}), Action)


def test_skill_listing_covers_all_thirteen_skills() -> None:
    listing = skill_listing()
    assert len(skill_specs()) == 13
    for name in (
        "mine",
        "explore",
        "prepare_access",
        "craft_grid",
        "smelt",
        "attack",
        "enchant",
        "place",
        "equip",
        "collect",
        "ascend",
        "trade",
        "wait",
    ):
        assert f"- {name}(" in listing


def test_a_fixed_count_is_refused_as_fixed() -> None:
    # The paper: craft_grid's "count is fixed to 1". Ours refused count=2 with "count must
    # be between 1 and 1".
    raw = {"station": "inventory", "grid": [["oak_planks"]], "count": 2}
    out = parse_action({"skill": "craft_grid", "args": raw})
    assert isinstance(out, ActionError) and "count is fixed to 1" in out.message
    assert isinstance(parse_action({"skill": "craft_grid", "args": {**raw, "count": 1}}), Action)
