"""sources/ (list, create, retrieve, crawl), documents/ (upload), search/, ask/."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from answers import pipeline
from api.authentication import request_bot
from api.filters import SourceFilter
from api.problems import PayloadTooLarge
from api.serializers import (
    AskSerializer,
    CrawlRunSerializer,
    DocumentUploadSerializer,
    ImportResultSerializer,
    SourceSerializer,
)
from api.views.base import BotScopedViewSet
from chat.contracts import chain_reply_json, reply_json
from chat.exceptions import ChatError
from chat.frames import MAX_QUESTION_CHARS
from chat.services import conversation_ask_once
from knowledge.crawler import source_crawl
from knowledge.exceptions import DocumentTooLarge
from knowledge.importing import document_import
from knowledge.indexing import embedding_request
from knowledge.models import Source
from knowledge.search import answer_dict, search_entries
from knowledge.selectors import crawl_runs, latest_run_ids, sources_of
from knowledge.services import source_create

MULTIPART_OVERHEAD = 64 * 1024  # boundaries and the other fields of an upload


class SourceViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, BotScopedViewSet):
    queryset = Source.objects.none()  # the schema's model; requests use get_queryset
    serializer_class = SourceSerializer
    filterset_class = SourceFilter

    def get_queryset(self) -> Any:
        return sources_of(bot=self.bot)

    def _with_runs(self, sources: list[Source]) -> list[Source]:
        latest = latest_run_ids(sources=sources)
        runs = crawl_runs(bot=self.bot, run_ids=latest.values())
        for source in sources:
            source.api_last_run = runs.get(latest.get(source.pk, 0))  # type: ignore[attr-defined]
        return sources

    def list(self, request: Request) -> Response:
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(SourceSerializer(self._with_runs(list(page or [])), many=True).data)

    def retrieve(self, request: Request, pk: str | None = None) -> Response:
        return Response(SourceSerializer(self._with_runs([self.get_object()])[0]).data)

    def create(self, request: Request) -> Response:
        serializer = SourceSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        source = source_create(bot=self.bot, **serializer.validated_data)
        return Response(SourceSerializer(self._with_runs([source])[0]).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={202: CrawlRunSerializer}, filters=False,
                   description="Ставит обход в очередь (после записи в базу); ход — в last_run источника.")
    @action(detail=True, methods=["post"], filterset_class=None)
    def crawl(self, request: Request, pk: str | None = None) -> Response:
        run = source_crawl(source=self.get_object())
        return Response(CrawlRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class DocumentViewSet(BotScopedViewSet):
    parser_classes = [MultiPartParser]
    serializer_class = DocumentUploadSerializer

    @extend_schema(request={"multipart/form-data": DocumentUploadSerializer},
                   responses={201: ImportResultSerializer},
                   description="PDF, DOCX, TXT или Markdown; те же проверки, что у manage.py importdocs.")
    def create(self, request: Request) -> Response:
        limit = settings.UPLOAD_MAX_BYTES
        declared = str(request.META.get("CONTENT_LENGTH") or "")
        if declared.isdigit() and int(declared) > limit + MULTIPART_OVERHEAD:
            raise PayloadTooLarge(DocumentTooLarge("файл", int(declared), limit).message)
        serializer = DocumentUploadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        if upload.size > limit:
            raise DocumentTooLarge(upload.name, upload.size, limit)
        result = document_import(
            bot=self.bot, filename=upload.name, data=upload.read(), url=serializer.validated_data["url"]
        )
        embedding_request(bot_id=self.bot.pk)  # vectors on the embed queue, after commit
        data = {"source": result.source, "created": result.created, "updated": result.updated,
                "unchanged": result.unchanged, "deactivated": result.deactivated}
        return Response(ImportResultSerializer(data).data, status=status.HTTP_201_CREATED)


class SearchQuery(serializers.Serializer):
    q = serializers.CharField(max_length=MAX_QUESTION_CHARS)
    k = serializers.IntegerField(min_value=1, max_value=50, default=5)


class SearchViewSet(BotScopedViewSet):
    @extend_schema(
        parameters=[OpenApiParameter("q", OpenApiTypes.STR, required=True, description="вопрос"),
                    OpenApiParameter("k", OpenApiTypes.INT, description="сколько результатов (1..50, 5)")],
        responses={200: OpenApiTypes.OBJECT},
        description="Ранжированные записи, как `manage.py search --json`: question, answerable, results.",
    )
    def list(self, request: Request) -> Response:
        query = SearchQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        bot, question = request_bot(request), query.validated_data["q"]
        results = search_entries(bot, question, k=query.validated_data["k"])
        return Response(answer_dict(bot, question, results))


class AskViewSet(BotScopedViewSet):
    throttle_scopes = ("api", "api_ask")  # every call runs the answer chain: a smaller rate of its own

    @extend_schema(request=AskSerializer, responses={200: OpenApiTypes.OBJECT},
                   description="Ответ бота, как `manage.py ask --json`: text, links, buttons, cards, "
                               "intent, source, flags, timings. Каждый вопрос — отдельный разговор "
                               "(он виден в conversations/); с record=false — только ответ цепочки, "
                               "ничего не сохраняется.")
    def create(self, request: Request) -> Response:
        serializer = AskSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        question = serializer.validated_data["question"]
        if not serializer.validated_data["record"]:
            return Response(chain_reply_json(pipeline.answer(bot=self.bot, text=question, history=[])))
        key = request.auth
        visitor = f"api:{getattr(key, 'prefix', 'key')}:{uuid.uuid4().hex[:16]}"
        try:
            reply = conversation_ask_once(bot=self.bot, text=question, visitor_id=visitor)
        except ChatError as exc:
            raise serializers.ValidationError({"question": [exc.message_in(self.bot.language)]}) from exc
        if reply is None:  # a fresh conversation always gets an answer; say so rather than send nothing
            raise serializers.ValidationError({"question": ["Бот не ответил: разговор передан оператору."]})
        return Response(reply_json(reply))
