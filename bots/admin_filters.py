"""A list filter for a column of machine codes that has no choices on its model (a webhook event, an
LLM route, a messenger API method): each code found among the user's own rows is offered by its
words, never as the code («handoff.waiting» reads «посетитель ждёт оператора»).

What must stay true: the codes offered come from `model_admin.get_queryset(request)`, so a filter
lists only what the user's bots hold (bots/admin_scoping.py), as Django's own filters do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest


def worded_filter(field: str, words: Callable[[str], str]) -> type[admin.SimpleListFilter]:
    """A filter over `field`, each value shown as `words(value)`."""

    class WordedFilter(admin.SimpleListFilter):
        parameter_name = field

        def __init__(self, request: HttpRequest, params: dict[str, Any], model: type[Model],
                     model_admin: admin.ModelAdmin[Any]) -> None:
            self.title = getattr(model._meta.get_field(field), "verbose_name", field)
            super().__init__(request, params, model, model_admin)

        def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin[Any]) -> list[tuple[str, str]]:
            values = model_admin.get_queryset(request).order_by().values_list(field, flat=True).distinct()
            return sorted(((value, words(value)) for value in values if value), key=lambda pair: pair[1].lower())

        def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
            return queryset.filter(**{field: self.value()}) if self.value() else queryset

    WordedFilter.__name__ = f"WordedFilter_{field}"
    return WordedFilter
