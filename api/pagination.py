"""Cursor pagination: stable under inserts (a new row never shifts a page), and no COUNT(*) over
100k rows. `?limit=` sets the page size (at most 200)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.pagination import Cursor, CursorPagination


class IdCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200

    def decode_cursor(self, request: Any) -> Cursor | None:
        try:
            return super().decode_cursor(request)
        except exceptions.NotFound as exc:  # DRF says 404; a bad parameter is a 400
            raise exceptions.ValidationError(
                {self.cursor_query_param: [_("Неверный курсор: возьмите ссылку next или previous из ответа.")]}
            ) from exc


class VersionCursorPagination(IdCursorPagination):
    ordering = "-history_id"
