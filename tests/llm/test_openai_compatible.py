"""The OpenAI-compatible provider (self-hosted models) against the fake `/v1/chat/completions`."""

from __future__ import annotations

import logging
from decimal import Decimal

import pytest

from llm.models import Usage
from llm.providers import get_provider
from llm.structured import complete_with_repair, schema_validator
from tests.fakes import FAKE_OPENAI_KEY
from tests.fakes.messages_api import bad_request, broken_json, server_error, text, tool_use
from tests.llm.support import QUESTION, RULES, SOURCES, answer_request, valid

pytestmark = pytest.mark.django_db


@pytest.fixture
def openai(fake_llm, settings):
    settings.LLM_PROVIDER = "openai"
    settings.LLM_FAST_MODEL = "qwen2.5-7b-instruct"
    return fake_llm


def test_a_valid_json_reply_comes_back_as_data(openai, bot):
    openai.script(tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.ok and result.data == valid() and result.provider == "openai"
    sent = openai.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {FAKE_OPENAI_KEY}"
    assert sent.body["model"] == "qwen2.5-7b-instruct"
    assert sent.body["response_format"]["type"] == "json_schema"
    assert sent.body["response_format"]["json_schema"]["schema"]["required"][0] == "intent"
    assert sent.body["messages"] == [
        {"role": "system", "content": f"{RULES}\n\n{SOURCES}"},
        {"role": "user", "content": QUESTION},
    ]


def test_a_500_is_retried(openai, bot):
    openai.script(server_error(), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.ok and result.attempts == 2


def test_a_400_is_not_retried(openai, bot):
    openai.script(bad_request(), tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert (result.error, result.attempts, openai.pending) == ("client_error", 1, 1)


def test_text_that_is_not_json_is_repaired(openai, bot):
    openai.script(text("Доставка стоит 300 ₽"), tool_use(valid()))
    request = answer_request()

    result = complete_with_repair(get_provider(bot), request, schema_validator(request.schema))

    assert result.data == valid()
    note = openai.requests[1].body["messages"][-1]["content"]
    assert "- $: invalid_json" in note and "300" not in note


def test_streaming_shows_only_the_answer_text(openai, bot):
    openai.script(tool_use(valid(), chunk_chars=5))
    deltas: list[str] = []

    result = get_provider(bot).stream_structured(answer_request(), deltas.append)

    assert result.data == valid() and "".join(deltas) == valid()["answer"] and len(deltas) > 2
    assert openai.requests[0].body["stream"] is True


def test_streamed_broken_json_is_reported(openai, bot):
    openai.script(broken_json('{"answer": "x", oops'))

    result = get_provider(bot).stream_structured(answer_request(), lambda delta: None)

    assert result.data is None and result.parse_error == "invalid_json"


def test_a_self_hosted_model_is_billed_at_zero_with_one_warning(openai, bot, caplog):
    openai.script(tool_use(valid()), tool_use(valid()))

    with caplog.at_level(logging.WARNING, logger="spravka.llm"):
        get_provider(bot).complete_structured(answer_request())
        get_provider(bot).complete_structured(answer_request())

    assert list(Usage.objects.values_list("provider", "input_tokens", "cost_usd")) == [
        ("openai", 120, Decimal(0)), ("openai", 120, Decimal(0))
    ]
    assert sum("qwen2.5-7b-instruct" in record.getMessage() for record in caplog.records) <= 1
