"""The Anthropic provider through the real SDK against the local fake Messages API."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from llm.models import RunEvent, Usage
from llm.providers import get_provider
from tests.fakes import FAKE_ANTHROPIC_KEY
from tests.fakes.messages_api import (
    bad_request,
    error,
    overloaded,
    rate_limited,
    server_error,
    text,
    tool_use,
)
from tests.llm.support import RULES, SOURCES, answer_request, valid

pytestmark = pytest.mark.django_db


def test_a_valid_tool_call_comes_back_as_data(fake_llm, bot):
    fake_llm.script(tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.ok and result.data == valid()
    assert (result.provider, result.model, result.attempts) == ("anthropic", "claude-haiku-4-5", 1)
    assert (result.input_tokens, result.output_tokens) == (120, 40)


def test_the_request_forces_the_tool_with_the_schema_and_caches_the_stable_prefix(fake_llm, bot):
    fake_llm.script(tool_use(valid()))

    get_provider(bot).complete_structured(answer_request())

    sent = fake_llm.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.body["tools"][0]["name"] == "answer"
    assert sent.body["tools"][0]["input_schema"]["properties"]["source"]["maximum"] == 1
    assert sent.body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert sent.body["system"] == [
        {"type": "text", "text": RULES, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": SOURCES},
    ]
    assert FAKE_ANTHROPIC_KEY in (sent.headers.get("x-api-key", ""), sent.headers.get("authorization", "")[7:])


def test_the_strong_class_uses_the_strong_model(fake_llm, bot):
    fake_llm.script(tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request(model_class="strong"))

    assert fake_llm.requests[0].body["model"] == "claude-sonnet-4-6" == result.model


def test_a_plain_text_reply_has_no_data_and_says_why(fake_llm, bot):
    fake_llm.script(text("Доставка стоит 300 ₽."))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.ok and result.data is None
    assert result.parse_error == "no_tool_call" and result.raw_text == "Доставка стоит 300 ₽."


@pytest.mark.parametrize("failure", [server_error, overloaded], ids=["500", "529"])
def test_a_server_error_or_overload_is_retried(fake_llm, bot, failure):
    fake_llm.script(failure(), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.ok and result.data == valid() and result.attempts == 2
    assert len(fake_llm.requests) == 2


def test_retries_stop_after_the_budget(fake_llm, bot, settings):
    fake_llm.script(server_error(), server_error(), server_error(), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert (result.error, result.status, result.attempts) == ("server_error", 500, settings.LLM_MAX_RETRIES + 1)
    assert fake_llm.pending == 1


def test_429_waits_as_long_as_retry_after_says(fake_llm, bot):
    fake_llm.script(rate_limited(retry_after=0.3), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.ok and result.attempts == 2
    first, second = fake_llm.requests
    assert second.at - first.at >= 0.3


def test_429_asking_for_a_longer_pause_than_we_wait_gives_up_at_once(fake_llm, bot):
    fake_llm.script(rate_limited(retry_after=60), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert (result.error, result.status, result.attempts) == ("rate_limited", 429, 1)


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(fake_llm, bot, status):
    fake_llm.script(error(status), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert (result.error, result.status, result.attempts) == ("client_error", status, 1)
    assert len(fake_llm.requests) == 1


def test_a_timeout_on_the_fast_route_fails_quickly_and_is_not_retried(fake_llm, bot, settings):
    settings.LLM_TIMEOUT = 0.3
    fake_llm.script(tool_use(valid(), delay=3), tool_use(valid()))

    started = time.monotonic()
    result = get_provider(bot).complete_structured(answer_request())

    assert result.error == "timeout" and result.data is None and result.attempts == 1
    assert time.monotonic() - started < 1.5
    assert len(fake_llm.requests) == 1


def test_a_timeout_where_nobody_waits_is_retried(fake_llm, bot, settings):
    settings.LLM_TIMEOUT = 0.3
    fake_llm.script(tool_use(valid(), delay=3), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request(route="review_reply", person_waits=False))

    assert result.ok and result.attempts == 2


def test_a_refused_connection_is_retried_then_reported(fake_llm, bot, settings):
    settings.ANTHROPIC_BASE_URL = "http://127.0.0.1:9"  # discard port: nothing listens

    result = get_provider(bot).complete_structured(answer_request())

    assert (result.error, result.attempts) == ("connection", settings.LLM_MAX_RETRIES + 1)


def test_every_call_writes_a_usage_line_and_a_journal_row(fake_llm, bot):
    fake_llm.script(tool_use(valid(), input_tokens=1000, output_tokens=200, cache_read_tokens=3000))

    get_provider(bot).complete_structured(answer_request(purpose="answer", conversation_id=77))

    usage = Usage.objects.get(bot=bot)
    assert (usage.route, usage.purpose, usage.provider, usage.model) == ("chat", "answer", "anthropic",
                                                                          "claude-haiku-4-5")
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (1000, 200, 3000)
    # Haiku 4.5: $1 in, $5 out per million; cache reads at a tenth of input.
    assert usage.cost_usd == Decimal("0.001000") + Decimal("0.001000") + Decimal("0.000300")
    assert usage.latency_ms >= 0
    event = RunEvent.objects.get(bot=bot)
    assert (event.kind, event.ok, event.conversation_id) == ("llm_call", True, 77)
    assert event.detail["input_tokens"] == 1000 and event.detail["attempts"] == 1


def test_a_failed_call_is_journaled_with_its_reason_and_costs_nothing(fake_llm, bot):
    fake_llm.script(bad_request())

    get_provider(bot).complete_structured(answer_request())

    usage = Usage.objects.get(bot=bot)
    assert (usage.input_tokens, usage.cost_usd) == (0, Decimal(0))
    event = RunEvent.objects.get(bot=bot)
    assert not event.ok and event.detail["error"] == "client_error" and event.detail["status"] == 400
