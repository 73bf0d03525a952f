"""Filters of the list endpoints. An unknown value (kind=foo, active=maybe, a date that is not one)
is a 400 naming the parameter, never an empty page."""

from __future__ import annotations

from typing import Any

import django_filters as filters
from django.db.models import QuerySet

from chat.models import Conversation
from feedback.models import Gap
from knowledge.models import Entry, Source
from review.models import ReviewItem

BOOLEAN = [("true", "true"), ("false", "false")]


def _bool(value: str) -> bool:
    return value == "true"


def boolean_filter(field_name: str) -> filters.TypedChoiceFilter:
    return filters.TypedChoiceFilter(field_name=field_name, choices=BOOLEAN, coerce=_bool)


class EntryFilter(filters.FilterSet):
    kind = filters.ChoiceFilter(choices=Entry.Kind.choices)
    active = boolean_filter("active")
    review_needed = boolean_filter("review_needed")
    updated_after = filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="gte")
    updated_before = filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="lt")

    class Meta:
        model = Entry
        fields: list[str] = []


class SourceFilter(filters.FilterSet):
    kind = filters.ChoiceFilter(choices=Source.Kind.choices)

    class Meta:
        model = Source
        fields: list[str] = []


class ConversationFilter(filters.FilterSet):
    state = filters.ChoiceFilter(choices=Conversation.State.choices)
    visitor_id = filters.CharFilter(max_length=64)
    updated_after = filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="gte")
    updated_before = filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="lt")

    class Meta:
        model = Conversation
        fields: list[str] = []


class LeadFilter(filters.FilterSet):
    created_after = filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")


class GapFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=Gap.Status.choices)

    class Meta:
        model = Gap
        fields: list[str] = []


class ReviewItemFilter(filters.FilterSet):
    status = filters.ChoiceFilter(choices=ReviewItem.Status.choices)
    reason = filters.ChoiceFilter(choices=ReviewItem.Reason.choices, method="with_reason")

    class Meta:
        model = ReviewItem
        fields: list[str] = []

    def with_reason(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        return queryset.filter(reasons__contains=[value])
