"""What the API shows and takes. Field names are a contract (integrations rely on them): add, never
rename. Writes go through the services; serializers only check shapes and types."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext_lazy as _
from rest_framework import serializers

from api.fields import StrictBooleanField, StrictCharField, StrictFloatField, StrictIntegerField, StrictSerializer
from chat.frames import MAX_QUESTION_CHARS
from core.validators import validate_link
from knowledge.models import CrawlRun, Entry, Source
from knowledge.services import TEXT_MAX, TITLE_MAX

KIND_CHOICES = [(Entry.Kind.QA.value, Entry.Kind.QA.label), (Entry.Kind.CHUNK.value, Entry.Kind.CHUNK.label)]


class EntrySerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    kind = serializers.ChoiceField(choices=Entry.Kind.choices, default=Entry.Kind.QA)
    title = StrictCharField(max_length=TITLE_MAX, allow_blank=True, default="", trim_whitespace=True)
    text = StrictCharField(max_length=TEXT_MAX)
    url = StrictCharField(max_length=2000, allow_blank=True, default="", validators=[validate_link])
    weight = StrictFloatField(min_value=0.0, max_value=1.0, required=False)
    active = StrictBooleanField(default=True)
    review_needed = serializers.BooleanField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def validate_kind(self, value: str) -> str:
        if self.instance is not None:  # a PUT without "kind" keeps it; another kind is refused
            if "kind" in getattr(self, "initial_data", {}) and value != self.instance.kind:
                raise serializers.ValidationError(_("Вид записи не меняется: создайте новую запись."))
            return str(self.instance.kind)
        if self.instance is None and value not in dict(KIND_CHOICES):
            raise serializers.ValidationError(_("Через API создаются записи вида qa (вопрос-ответ) или chunk."))
        return value


class EntryVersionSerializer(serializers.Serializer):
    history_id = serializers.IntegerField()
    date = serializers.DateTimeField(source="history_date")
    change = serializers.SerializerMethodField()
    reason = serializers.CharField(source="history_change_reason", allow_null=True)
    kind = serializers.CharField()
    title = serializers.CharField()
    text = serializers.CharField()
    url = serializers.CharField()
    weight = serializers.FloatField()
    active = serializers.BooleanField()

    def get_change(self, record: Any) -> str:
        return {"+": "created", "~": "changed", "-": "deleted"}.get(record.history_type, "changed")


class RevertSerializer(StrictSerializer):
    history_id = StrictIntegerField(min_value=1, max_value=2**62)


class CrawlRunSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    message = serializers.CharField(source="message_shown", read_only=True)  # in the request's language

    class Meta:
        model = CrawlRun
        fields = ["id", "status", "percent", "pages_total", "pages_done", "fetched", "unchanged", "skipped",
                  "failed", "entries_created", "entries_updated", "entries_deactivated", "message",
                  "started_at", "finished_at"]
        read_only_fields = fields


class SourceSerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    kind = serializers.ChoiceField(choices=Source.Kind.choices)
    title = StrictCharField(max_length=300, allow_blank=True, default="")
    url = StrictCharField(max_length=2000)
    max_pages = StrictIntegerField(min_value=1, max_value=settings.CRAWL_MAX_PAGES, required=False)
    recrawl_hours = StrictIntegerField(min_value=1, max_value=24 * 365, required=False, allow_null=True)
    last_crawled_at = serializers.DateTimeField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    last_run = serializers.SerializerMethodField()

    def get_last_run(self, source: Source) -> dict[str, Any] | None:
        run = getattr(source, "api_last_run", None)
        return dict(CrawlRunSerializer(run).data) if run is not None else None


class DocumentUploadSerializer(StrictSerializer):
    file = serializers.FileField(allow_empty_file=False)
    url = StrictCharField(max_length=2000, allow_blank=True, default="")


class ImportResultSerializer(serializers.Serializer):
    source = SourceSerializer()  # type: ignore[assignment]  # a field named like Field.source
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    deactivated = serializers.IntegerField()


class AskSerializer(StrictSerializer):
    question = StrictCharField(max_length=MAX_QUESTION_CHARS)
    # false: the chain's answer alone, nothing stored (a probe: no conversation, gap or review item).
    record = StrictBooleanField(default=True)


class MessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    role = serializers.CharField()
    text = serializers.CharField()
    intent = serializers.CharField()
    source = serializers.IntegerField(source="source_entry_id", allow_null=True)  # type: ignore[assignment]
    confidence = serializers.FloatField(allow_null=True)
    links = serializers.JSONField()
    buttons = serializers.JSONField()
    cards = serializers.JSONField()
    rating = serializers.IntegerField()
    flags = serializers.JSONField()
    author_name = serializers.CharField()
    created_at = serializers.DateTimeField()


class ConversationSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    visitor_id = serializers.CharField()
    state = serializers.CharField()
    outcome = serializers.CharField()
    variant = serializers.CharField()
    page_url = serializers.CharField()
    visitor_name = serializers.CharField()
    visitor_contact = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    closed_at = serializers.DateTimeField(allow_null=True)


class ConversationDetailSerializer(ConversationSerializer):
    messages = serializers.SerializerMethodField()

    def get_messages(self, conversation: Any) -> list[dict[str, Any]]:
        return [dict(MessageSerializer(m).data) for m in getattr(conversation, "api_messages", [])]


class LeadSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    conversation = serializers.IntegerField(source="conversation_id", allow_null=True)
    visitor_id = serializers.CharField()
    name = serializers.CharField()
    phone = serializers.CharField()
    email = serializers.CharField()
    question = serializers.CharField()
    consent_text = serializers.CharField()
    consent_policy_url = serializers.CharField()
    consented_at = serializers.DateTimeField()
    created_at = serializers.DateTimeField()


class GapSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField()
    count = serializers.IntegerField()
    first_seen = serializers.DateTimeField()
    last_seen = serializers.DateTimeField()
    entry = serializers.IntegerField(source="entry_id", allow_null=True)
    answered_at = serializers.DateTimeField(allow_null=True)


class ReviewItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    message = serializers.IntegerField(source="message_id")
    conversation = serializers.IntegerField(source="message.conversation_id")
    reasons = serializers.ListField(child=serializers.CharField())
    question = serializers.CharField()
    answer = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)
    cited_entry = serializers.IntegerField(source="cited_entry_id", allow_null=True)
    status = serializers.CharField()
    decision = serializers.CharField()
    corrected_text = serializers.CharField()
    entry = serializers.IntegerField(source="entry_id", allow_null=True)
    answered_at = serializers.DateTimeField()
    decided_at = serializers.DateTimeField(allow_null=True)
