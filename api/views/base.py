from __future__ import annotations

from typing import Any

from rest_framework import viewsets

from api.authentication import request_bot
from bots.models import ApiKey, Bot
from knowledge.versions import REASON_API, REASON_API_KEY, reason_written


class BotScopedViewSet(viewsets.GenericViewSet):
    """Every queryset of a view comes from `get_queryset`, which starts from the key's bot: another
    bot's id is not in it and answers 404 exactly like an id that does not exist. Ids are digits of
    a bigint: anything else names no resource (404, not a database error)."""

    lookup_value_regex = r"[0-9]{1,18}"

    @property
    def bot(self) -> Bot:
        return request_bot(self.request)

    def change_reason(self) -> str:
        key = self.request.auth
        return reason_written(REASON_API_KEY, prefix=key.prefix) if isinstance(key, ApiKey) else REASON_API

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "bot": self.bot}
