"""Reads of what visitors did: conversations/ (with messages), leads/, gaps/, review-items/."""

from __future__ import annotations

from typing import Any

from rest_framework import mixins
from rest_framework.request import Request
from rest_framework.response import Response

from api.filters import ConversationFilter, GapFilter, LeadFilter, ReviewItemFilter
from api.serializers import (
    ConversationDetailSerializer,
    ConversationSerializer,
    GapSerializer,
    LeadSerializer,
    ReviewItemSerializer,
)
from api.views.base import BotScopedViewSet
from chat.models import Conversation, Lead
from chat.selectors import conversation_messages, conversations_of, leads_of
from feedback.gaps import gaps_of
from feedback.models import Gap
from review.models import ReviewItem
from review.selectors import review_items_of


class ReadOnlyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, BotScopedViewSet):
    pass


class ConversationViewSet(ReadOnlyViewSet):
    queryset = Conversation.objects.none()  # the schema's model; requests use get_queryset
    filterset_class = ConversationFilter

    def get_serializer_class(self) -> Any:
        return ConversationDetailSerializer if self.action == "retrieve" else ConversationSerializer

    def get_queryset(self) -> Any:
        return conversations_of(bot=self.bot)

    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        conversation = self.get_object()
        conversation.api_messages = conversation_messages(conversation=conversation)
        return Response(ConversationDetailSerializer(conversation).data)


class LeadViewSet(ReadOnlyViewSet):
    queryset = Lead.objects.none()
    serializer_class = LeadSerializer
    filterset_class = LeadFilter

    def get_queryset(self) -> Any:
        return leads_of(bot=self.bot)


class GapViewSet(ReadOnlyViewSet):
    queryset = Gap.objects.none()
    serializer_class = GapSerializer
    filterset_class = GapFilter

    def get_queryset(self) -> Any:
        return gaps_of(bot=self.bot)


class ReviewItemViewSet(ReadOnlyViewSet):
    queryset = ReviewItem.objects.none()
    serializer_class = ReviewItemSerializer
    filterset_class = ReviewItemFilter

    def get_queryset(self) -> Any:
        return review_items_of(bot=self.bot)
