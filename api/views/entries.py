"""entries/: list, create, retrieve, update, delete (switches off), history and revert."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from api.filters import EntryFilter
from api.pagination import VersionCursorPagination
from api.serializers import EntrySerializer, EntryVersionSerializer, RevertSerializer
from api.views.base import BotScopedViewSet
from knowledge.exceptions import EntryVersionNotFound
from knowledge.models import Entry
from knowledge.selectors import entries_of, entry_versions
from knowledge.services import EDITABLE_FIELDS, entry_create, entry_edit, entry_restore_version


class EntryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, BotScopedViewSet):
    queryset = Entry.objects.none()  # the schema's model; requests use get_queryset
    serializer_class = EntrySerializer
    filterset_class = EntryFilter

    def get_queryset(self) -> Any:
        return entries_of(bot=self.bot)

    def create(self, request: Request) -> Response:
        serializer = EntrySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        entry = entry_create(bot=self.bot, reason=self.change_reason(), **serializer.validated_data)
        location = request.build_absolute_uri(f"{request.path.rstrip('/')}/{entry.pk}/")
        return Response(EntrySerializer(entry).data, status=status.HTTP_201_CREATED, headers={"Location": location})

    def update(self, request: Request, pk: str | None = None, partial: bool = False) -> Response:
        entry = self.get_object()
        serializer = EntrySerializer(entry, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        changes = {
            name: value for name, value in serializer.validated_data.items()
            if name in EDITABLE_FIELDS and getattr(entry, name) != value
        }
        if changes:
            entry = entry_edit(entry=entry, changes=changes, reason=self.change_reason())
        return Response(EntrySerializer(entry).data)

    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        return self.update(request, pk, partial=True)

    @extend_schema(responses={204: None}, description="Выключает запись (active=false): она остаётся в истории "
                   "и возвращается PATCH {\"active\": true} или откатом.")
    def destroy(self, request: Request, pk: str | None = None) -> Response:
        entry = self.get_object()
        if entry.active:
            entry_edit(entry=entry, changes={"active": False}, reason=self.change_reason())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(responses=EntryVersionSerializer(many=True), filters=False)
    @action(detail=True, methods=["get"], pagination_class=VersionCursorPagination, filterset_class=None)
    def history(self, request: Request, pk: str | None = None) -> Response:
        entry: Entry = self.get_object()
        page = self.paginate_queryset(entry_versions(entry=entry))
        return self.get_paginated_response(EntryVersionSerializer(page, many=True).data)

    @extend_schema(request=RevertSerializer, responses=EntrySerializer, filters=False)
    @action(detail=True, methods=["post"], filterset_class=None)
    def revert(self, request: Request, pk: str | None = None) -> Response:
        entry: Entry = self.get_object()
        serializer = RevertSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            entry = entry_restore_version(entry=entry, history_id=serializer.validated_data["history_id"])
        except EntryVersionNotFound as exc:
            from rest_framework.exceptions import NotFound

            raise NotFound(exc.message) from exc
        return Response(EntrySerializer(entry).data)
