"""The price table: packaged file, overrides, lookups, arithmetic and clear errors."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mirrorcraft.llm import prices
from mirrorcraft.llm.base import LLMConfigError
from mirrorcraft.llm.prices import PRICES_ENV, load_prices

PAPER_MODELS = ["gemini-3.1-flash-lite", "deepseek-v4-flash", "gpt-5.6-luna", "gpt-5.6-sol"]
"""The models the MirrorCraft paper names."""


@pytest.fixture(autouse=True)
def no_user_prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    monkeypatch.setattr(prices, "_WARNED", set())


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_packaged_table_has_a_dated_sourced_price_for_every_paper_model() -> None:
    table = load_prices()
    for name in PAPER_MODELS:
        price = table.lookup(name)
        assert price is not None, name
        assert price.as_of and "http" in price.source, name
        assert "PLACEHOLDER" not in price.source, name
        if price.verified:
            assert table.cost(name, 1_000_000, 0) == pytest.approx(price.input_per_mtok)
        else:
            assert table.cost(name, 1_000_000, 0) is None, name  # unconfirmed: unknown
    verified = {n for n in PAPER_MODELS if table.lookup(n).verified}  # type: ignore[union-attr]
    # read from the provider's own page: DeepSeek's pricing page, OpenAI's model pages
    assert verified == {"deepseek-v4-flash", "gpt-5.6-luna", "gpt-5.6-sol"}
    assert table.cost("deepseek-v4-flash", 1_000_000, 1_000_000) == pytest.approx(0.14 + 0.28)
    assert table.cost("gpt-5.6-luna", 1_000_000, 1_000_000, 1_000_000) == pytest.approx(0.02 + 1.20)
    for free in ("none", "mock"):
        assert table.cost(free, 10_000, 5_000) == 0.0


def test_unknown_model_costs_none_not_zero() -> None:
    assert load_prices().cost("a-model-nobody-priced", 1000, 1000) is None


def test_arithmetic_cached_prompts_aliases_and_prefixes(tmp_path: Path) -> None:
    table = load_prices(
        write(
            tmp_path / "p.yaml",
            """
schema_version: 1
models:
  alpha:
    input_per_mtok: 1.0
    output_per_mtok: 4.0
    cached_input_per_mtok: 0.25
    verified: true
    aliases: [alpha-latest]
  beta:
    input_per_mtok: 2.0
    output_per_mtok: 2.0
    verified: true
""",
        )
    )
    assert table.cost("alpha", 1_000_000, 500_000) == pytest.approx(3.0)
    assert table.cost("alpha", 1_000_000, 0, cached_prompt_tokens=400_000) == pytest.approx(0.7)
    assert table.cost("beta", 100, 0, cached_prompt_tokens=100) == pytest.approx(0.0002)
    assert table.cost("alpha", 10, 0, cached_prompt_tokens=50) == pytest.approx(2.5e-6)
    assert table.cost("ALPHA-latest", 1_000_000, 0) == pytest.approx(1.0)
    assert table.cost("provider/beta", 1_000_000, 0) == pytest.approx(2.0)


def test_env_variable_and_parameter_choose_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = write(
        tmp_path / "env.yaml",
        "schema_version: 1\nmodels:\n  envm: {input_per_mtok: 1, output_per_mtok: 1}\n",
    )
    param_file = write(
        tmp_path / "param.yaml",
        "schema_version: 1\nmodels:\n  parm: {input_per_mtok: 1, output_per_mtok: 1}\n",
    )
    monkeypatch.setenv(PRICES_ENV, str(env_file))
    assert load_prices().lookup("envm") is not None
    assert load_prices().lookup("gemini-3.1-flash-lite") is None
    assert load_prices(param_file).lookup("parm") is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("schema_version: 2\nmodels: {}\n", "schema_version"),
        (
            "schema_version: 1\nmodels:\n  m: {input_per_mtok: 1, output_per_mtok: 1, tip: 3}\n",
            "models.m.tip",
        ),
        ("schema_version: 1\nmodels:\n  m: {input_per_mtok: -1, output_per_mtok: 1}\n", "m"),
        # Infinite rates gave records whose cost was Infinity or NaN: not JSON, so analyze
        # refused the whole results file.
        ("schema_version: 1\nmodels:\n  m: {input_per_mtok: .inf, output_per_mtok: 1}\n", "finite"),
        (
            "schema_version: 1\nmodels:\n  m: {input_per_mtok: 1, output_per_mtok: 1,\n"
            "      cached_input_per_mtok: .inf}\n",
            "cached_input_per_mtok",
        ),
        ("schema_version: [1\n", "not valid YAML"),
        (
            "schema_version: 1\nmodels:\n  a: {input_per_mtok: 1, output_per_mtok: 1}\n"
            "  b: {input_per_mtok: 1, output_per_mtok: 1, aliases: [A]}\n",
            "listed twice",
        ),
    ],
)
def test_bad_files_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "bad.yaml", text)
    with pytest.raises(LLMConfigError, match=message) as caught:
        load_prices(path)
    assert "bad.yaml" in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(LLMConfigError, match="cannot read price file"):
        load_prices(tmp_path / "absent.yaml")


def test_unverified_price_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    table = load_prices()
    with caplog.at_level(logging.WARNING, logger="mirrorcraft.llm"):
        first = table.cost("gemini-3.1-flash-lite", 1000, 100)
        table.cost("gemini-3.1-flash-lite", 1000, 100)
    assert first is None  # an unconfirmed price gives an unknown cost, never an estimate
    assert caplog.text.count("unverified") == 1


def test_unverified_price_warns_once_per_run_not_once_per_episode(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every episode's client loads its own table: a run of Gemini episodes printed the
    warning once per episode (thousands of lines in a paper-sized run)."""
    with caplog.at_level(logging.WARNING, logger="mirrorcraft.llm"):
        for _episode in range(3):
            assert load_prices().cost("gemini-3.1-flash-lite", 1000, 100) is None
    assert caplog.text.count("unverified") == 1
