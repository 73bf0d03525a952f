"""Estimated cost of a call, from a price table keyed by model-name prefix.

An estimate for the owner's usage page, not an invoice: list prices in USD per million tokens.
Cache reads cost a tenth of input and 5-minute cache writes a quarter more, as Anthropic bills
them. A model missing from the table costs 0 and is logged once, so a self-hosted model does not
flood the log and a new hosted model does not silently look free for long.
"""

from __future__ import annotations

import logging
from decimal import Decimal

log = logging.getLogger("spravka.llm")

MILLION = Decimal(1_000_000)
CACHE_READ_FACTOR = Decimal("0.1")
CACHE_WRITE_FACTOR = Decimal("1.25")

# (prefix, input, output) in USD per million tokens; the longest matching prefix wins.
PRICES: tuple[tuple[str, Decimal, Decimal], ...] = (
    ("claude-haiku-4-5", Decimal("1"), Decimal("5")),
    ("claude-3-5-haiku", Decimal("0.8"), Decimal("4")),
    ("claude-3-haiku", Decimal("0.25"), Decimal("1.25")),
    ("claude-sonnet-4", Decimal("3"), Decimal("15")),
    ("claude-3-7-sonnet", Decimal("3"), Decimal("15")),
    ("claude-3-5-sonnet", Decimal("3"), Decimal("15")),
    ("claude-opus-4-5", Decimal("5"), Decimal("25")),
    ("claude-opus-4-6", Decimal("5"), Decimal("25")),
)

_warned: set[str] = set()


def price_for(model: str) -> tuple[Decimal, Decimal] | None:
    matches = [row for row in PRICES if model.startswith(row[0])]
    if not matches:
        return None
    _prefix, input_price, output_price = max(matches, key=lambda row: len(row[0]))
    return input_price, output_price


def estimate_cost(
    model: str, *, input_tokens: int, output_tokens: int, cache_read_tokens: int = 0, cache_write_tokens: int = 0
) -> Decimal:
    prices = price_for(model)
    if prices is None:
        if model and model not in _warned:
            _warned.add(model)
            log.warning("No price for model %r: its usage is recorded with cost 0", model)
        return Decimal(0)
    input_price, output_price = prices
    cost = (
        input_price * input_tokens
        + input_price * CACHE_READ_FACTOR * cache_read_tokens
        + input_price * CACHE_WRITE_FACTOR * cache_write_tokens
        + output_price * output_tokens
    ) / MILLION
    return cost.quantize(Decimal("0.000001"))
