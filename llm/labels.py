"""Words for the route names that usage lines and journal rows store («chat», «review_reply»), for
the pages that list them. `llm` knows no route: each app that calls a model names its own routes
here when it starts (its AppConfig.ready), and a name nobody described is shown as it is.
"""

from __future__ import annotations

from typing import Any

from llm.models import BotLLMSettings

_ROUTE_WORDS: dict[str, Any] = {}


def route_words_add(route: str, words: Any) -> None:
    """Describe `route` (a lazy translated text, so each reader gets their language)."""
    _ROUTE_WORDS[route] = words


def route_words(route: str) -> str:
    return str(_ROUTE_WORDS.get(route, route)) if route else "—"


def provider_words(provider: str) -> str:
    """«anthropic» → «Anthropic», «none» → «без модели (только поиск по справке)»."""
    if provider in BotLLMSettings.Provider.values and provider:
        return str(BotLLMSettings.Provider(provider).label)
    return provider or "—"
