import logging
from decimal import Decimal

from llm.pricing import estimate_cost, price_for


def test_the_longest_matching_prefix_sets_the_price():
    assert price_for("claude-haiku-4-5-20251001") == (Decimal(1), Decimal(5))
    assert price_for("claude-sonnet-4-6") == (Decimal(3), Decimal(15))
    assert price_for("claude-opus-4-5") == (Decimal(5), Decimal(25))


def test_cost_counts_cache_reads_and_writes_at_their_rates():
    cost = estimate_cost("claude-sonnet-4-6", input_tokens=1_000_000, output_tokens=100_000,
                         cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert cost == Decimal("3") + Decimal("1.5") + Decimal("0.3") + Decimal("3.75")


def test_an_unknown_model_costs_zero_and_is_logged_once(caplog):
    with caplog.at_level(logging.WARNING, logger="spravka.llm"):
        assert estimate_cost("my-local-model-x", input_tokens=10, output_tokens=10) == 0
        assert estimate_cost("my-local-model-x", input_tokens=10, output_tokens=10) == 0
    assert caplog.text.count("my-local-model-x") == 1
