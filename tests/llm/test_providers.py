"""Which provider a bot gets, and how "no model" behaves."""

from __future__ import annotations

import logging

import pytest

from llm.models import BotLLMSettings, RunEvent, Usage
from llm.providers import get_provider
from llm.structured import complete_with_repair, schema_validator
from tests.fakes.messages_api import tool_use
from tests.llm.support import answer_request, valid

pytestmark = pytest.mark.django_db


def test_without_a_key_the_assistant_runs_without_a_model(bot, settings):
    settings.LLM_PROVIDER = "none"
    settings.ANTHROPIC_API_KEY = ""
    request = answer_request()

    provider = get_provider(bot)
    result = complete_with_repair(provider, request, schema_validator(request.schema))

    assert provider.name == "none"
    assert (result.data, result.error, result.attempts) == (None, "no_provider", 0)
    assert not Usage.objects.exists() and not RunEvent.objects.exists()


def test_a_provider_asked_for_but_not_configured_falls_back_to_none(bot, settings, caplog):
    settings.LLM_PROVIDER = "openai"
    settings.LLM_OPENAI_BASE_URL = ""

    with caplog.at_level(logging.WARNING, logger="spravka.llm"):
        provider = get_provider(bot)

    assert provider.name == "none" and "not configured" in caplog.text


def test_the_installation_provider_is_used_by_default(fake_llm, bot):
    assert get_provider(bot).name == "anthropic"


def test_a_bot_can_switch_its_model_off(fake_llm, bot, other_bot):
    BotLLMSettings.objects.create(bot=bot, provider="none")

    assert get_provider(bot).name == "none"
    assert get_provider(other_bot).name == "anthropic"


def test_a_bot_can_choose_its_own_models(fake_llm, bot):
    BotLLMSettings.objects.create(bot=bot, fast_model="claude-haiku-4-5-20251001")
    fake_llm.script(tool_use(valid()), tool_use(valid()))

    get_provider(bot).complete_structured(answer_request())
    get_provider(bot).complete_structured(answer_request(model_class="strong"))

    assert [r.body["model"] for r in fake_llm.requests] == ["claude-haiku-4-5-20251001", "claude-sonnet-4-6"]


def test_a_bot_can_use_the_self_hosted_provider(fake_llm, bot):
    BotLLMSettings.objects.create(bot=bot, provider="openai", fast_model="llama-3.1-8b")
    fake_llm.script(tool_use(valid()))

    result = get_provider(bot).complete_structured(answer_request())

    assert result.provider == "openai" and fake_llm.requests[0].path == "/v1/chat/completions"


def test_usage_belongs_to_the_bot_that_called(fake_llm, bot, other_bot):
    fake_llm.script(tool_use(valid()), tool_use(valid()))

    get_provider(bot).complete_structured(answer_request())
    get_provider(other_bot).complete_structured(answer_request())

    assert Usage.objects.filter(bot=bot).count() == 1 == Usage.objects.filter(bot=other_bot).count()
