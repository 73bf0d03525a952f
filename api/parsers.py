"""JSON bodies with a size limit: an oversized body is refused before it is read into memory."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from api.problems import PayloadTooLarge


class LimitedJSONParser(JSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: Mapping[str, Any] | None = None) -> Any:
        limit = settings.API_MAX_JSON_BYTES
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and str(declared).isdigit() and int(declared) > limit:
            raise PayloadTooLarge(_too_large(int(declared), limit))
        data = stream.read(limit + 1) if stream is not None else b""
        if len(data) > limit:
            raise PayloadTooLarge(_too_large(len(data), limit))
        return super().parse(io.BytesIO(data), media_type, parser_context)


def _too_large(size: int, limit: int) -> str:
    from django.utils.translation import gettext as _

    return _("Тело запроса больше %(limit)d КБ (пришло не меньше %(size)d КБ). Разделите данные на части.") % {
        "limit": limit // 1024, "size": size // 1024,
    }
