"""Which provider a bot talks to: the bot's own override if it has one, else the installation's
settings. A provider asked for but not configured (no key, no URL) falls back to none with a
warning, so a missing secret degrades to retrieval-only instead of failing every message. While
the bot's monthly budget is spent (budget.py), the chain talks to none at all."""

from __future__ import annotations

import logging
from typing import ClassVar

from django.conf import settings

from bots.models import Bot
from llm.base import LLMRequest, LLMResult, ModelClasses, Provider, TextSink
from llm.budget import over_budget
from llm.models import BotLLMSettings
from llm.none import NoneProvider
from llm.openai_compatible import OpenAICompatibleProvider

log = logging.getLogger("spravka.llm")

PROVIDERS = ("anthropic", "openai", "none")


def _overrides(bot: Bot) -> BotLLMSettings | None:
    try:
        return bot.llm_settings
    except BotLLMSettings.DoesNotExist:
        return None


def get_provider(bot: Bot) -> Provider:
    own = _overrides(bot)
    name = (own.provider if own and own.provider else settings.LLM_PROVIDER) or "none"
    models = ModelClasses(
        fast=(own.fast_model if own else "") or settings.LLM_FAST_MODEL,
        strong=(own.strong_model if own else "") or settings.LLM_STRONG_MODEL,
    )
    if name == "anthropic" and settings.ANTHROPIC_API_KEY:
        # The SDK is imported on first use, not when the chain is imported: a process starts fast and
        # assistant/startup.py's warm-up imports it before the first question.
        from llm.anthropic_provider import AnthropicProvider

        return AnthropicProvider(bot_id=bot.pk, models=models)
    if name == "openai" and settings.LLM_OPENAI_BASE_URL:
        return OpenAICompatibleProvider(bot_id=bot.pk, models=models)
    if name != "none":
        log.warning("LLM provider %r for bot %s is not configured; running retrieval-only", name, bot.pk)
    return NoneProvider(bot_id=bot.pk)


class OverBudgetProvider:
    """What the chain talks to while the month's budget is spent: no call, no bill, at once; the
    chain then answers from the knowledge base as with no model at all (error "over_budget")."""

    name: ClassVar[str] = "none"
    streams: ClassVar[bool] = False

    def __init__(self, *, bot_id: int) -> None:
        self.bot_id = bot_id

    def complete_structured(self, request: LLMRequest) -> LLMResult:
        return LLMResult(data=None, raw_text="", model="", provider=self.name, attempts=0, error="over_budget")

    def stream_structured(self, request: LLMRequest, on_text_delta: TextSink) -> LLMResult:
        return self.complete_structured(request)


def provider_within_budget(bot: Bot) -> Provider:
    """The bot's provider (`get_provider`), or none while its monthly budget is spent."""
    provider = get_provider(bot)
    if provider.name == "none" or not over_budget(bot):  # no model, no bill: nothing to check
        return provider
    return OverBudgetProvider(bot_id=bot.pk)
