"""Which provider a bot talks to: the bot's own override if it has one, else the installation's
settings. A provider asked for but not configured (no key, no URL) falls back to none with a
warning, so a missing secret degrades to retrieval-only instead of failing every message."""

from __future__ import annotations

import logging

from django.conf import settings

from bots.models import Bot
from llm.anthropic_provider import AnthropicProvider
from llm.base import ModelClasses, Provider
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
        return AnthropicProvider(bot_id=bot.pk, models=models)
    if name == "openai" and settings.LLM_OPENAI_BASE_URL:
        return OpenAICompatibleProvider(bot_id=bot.pk, models=models)
    if name != "none":
        log.warning("LLM provider %r for bot %s is not configured; running retrieval-only", name, bot.pk)
    return NoneProvider(bot_id=bot.pk)
