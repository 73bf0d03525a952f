"""Admin for the Knowledge layer: sources with a crawl button, crawl runs with live progress
bars, pages with the reason each was skipped, and entries with version history and rollback."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL
from django.http import HttpRequest, JsonResponse
from django.template.loader import render_to_string
from django.urls import URLPattern, path
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from bots.admin_scoping import BotScopedAdmin, ScopedHistoryAdmin
from knowledge.admin_history import ReadableHistory
from knowledge.models import CrawlRun, Entry, Page, Source, Wording
from knowledge.versions import REASON_ADMIN


def progress_bar(run: CrawlRun | None) -> SafeString:
    return SafeString(render_to_string("admin/knowledge/progress.html", {"run": run}))


@admin.register(Source)
class SourceAdmin(BotScopedAdmin):
    list_display = ["__str__", "bot", "kind", "url", "recrawl_hours", "last_crawled_at", "last_run"]
    list_filter = ["kind", "bot"]
    search_fields = ["title", "url"]
    list_select_related = ["bot"]
    actions = ["crawl_now"]

    @admin.display(description=_("Последний обход"))
    def last_run(self, obj: Source) -> SafeString:
        return progress_bar(obj.runs.order_by("-started_at").first())

    @admin.action(description=_("Обойти сейчас"))
    def crawl_now(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        from knowledge.crawler import crawl_start

        crawlable = [s for s in queryset if s.kind in (Source.Kind.SITE, Source.Kind.SITEMAP)]
        for source in crawlable:
            crawl_start(source=source)
        skipped = queryset.count() - len(crawlable)
        self.message_user(
            request,
            ngettext("Обход запущен для %d источника.", "Обход запущен для %d источников.", len(crawlable))
            % len(crawlable),
            messages.SUCCESS,
        )
        if skipped:
            self.message_user(request, _("Документы и ручные записи не обходятся."), messages.WARNING)


@admin.register(CrawlRun)
class CrawlRunAdmin(BotScopedAdmin):
    list_display = ["source", "status", "progress", "fetched", "unchanged", "pages_embedded", "skipped", "failed",
                    "entries_created", "entries_updated", "entries_deactivated", "started_at"]
    list_filter = ["status", "bot"]
    list_select_related = ["source", "bot"]
    # The message in the reader's language in place of its two stored columns.
    readonly_fields = (*[("shown_message" if f.name == "message" else f.name) for f in CrawlRun._meta.fields
                         if f.name != "message_stored"], "progress")
    fields = readonly_fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("сообщение"))
    def shown_message(self, obj: CrawlRun) -> str:
        return obj.message_shown

    @admin.display(description=_("Ход"))
    def progress(self, obj: CrawlRun) -> SafeString:
        return progress_bar(obj)

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view(self.progress_json)
        return [path("<int:run_id>/progress/", view, name="knowledge_crawlrun_progress"), *super().get_urls()]

    def progress_json(self, request: HttpRequest, run_id: int) -> JsonResponse:
        """Polled by the progress bars while a run is going."""
        run = self.get_queryset(request).filter(pk=run_id).first()
        if run is None:  # another bot's run answers exactly like a missing one
            return JsonResponse({"error": "not found"}, status=404)
        return JsonResponse({
            "status": run.status, "status_display": run.get_status_display(), "percent": run.percent,
            "pages_done": run.pages_done, "pages_total": run.pages_total, "message": run.message_shown,
            "pages_indexed": run.pages_indexed, "pages_embedded": run.pages_embedded,
            "embeddings_done": run.embeddings_done, "embeddings_total": run.embeddings_total,
        })


@admin.register(Page)
class PageAdmin(BotScopedAdmin):
    list_display = ["url", "title", "status", "shown_reason", "http_status", "fetched_at", "review_needed", "active"]
    list_filter = ["status", "review_needed", "active", "bot"]
    search_fields = ["url", "title", "reason"]
    list_select_related = ["bot"]
    exclude = ["reason"]  # the crawler's words, shown in the reader's language below
    readonly_fields = ["shown_reason", "content_hash", "etag", "last_modified", "fetched_at", "http_status"]

    @admin.display(description=_("причина"), ordering="reason")
    def shown_reason(self, obj: Page) -> str:
        return obj.reason_shown


# The reason of the versions the admin writes (the dashboard's is "dashboard", the API's "API").
ADMIN_REASON = REASON_ADMIN
LISTED_TITLES = 20  # entries named in an action's message; the rest are counted


class EntryAdminForm(forms.ModelForm):
    """The admin's entry form refuses what the services would: the same checks as an entry written
    through the dashboard or the API (`entry_problems`), and a question already asked by another
    pair of the bot, each shown at its field."""

    class Meta:
        model = Entry
        fields = ["bot", "kind", "title", "heading_path", "text", "url", "weight", "review_needed", "active", "source"]

    def clean(self) -> dict[str, Any]:
        from knowledge.services import entry_problems, entry_title_twin

        data = super().clean() or {}
        kind = data.get("kind", self.instance.kind)
        problems = entry_problems(kind=kind, title=data.get("title", ""), text=data.get("text", ""),
                                  url=data.get("url", ""), weight=data.get("weight", 0.5))
        for field, problem in problems.items():
            if field in data:  # a field that failed its own check shows that error already
                self.add_error(field, problem)
        if "title" in data and not problems.get("title"):
            twin = entry_title_twin(entry_id=self.instance.pk, kind=kind, title=data["title"])
            if twin is not None:
                self.add_error("title", _("Такой вопрос уже есть в знаниях: запись №%(entry)s.") % {"entry": twin})
        return data


def _named(entries: list[tuple[Entry, str]]) -> str:
    """«title» (what is wrong); … for an action's message, the first LISTED_TITLES of them."""
    parts = [f"«{(entry.title or entry.text)[:80] or f'№{entry.pk}'}» ({problem})"
             for entry, problem in entries[:LISTED_TITLES]]
    if len(entries) > LISTED_TITLES:
        parts.append(_("и ещё %(n)s") % {"n": len(entries) - LISTED_TITLES})
    return "; ".join(parts)


class WordingInline(admin.TabularInline):
    """The ways visitors ask an owner answer's question (knowledge.Wording): the owner adds one (its
    vector is computed at once) or deletes one; the question's own wording follows the entry's title."""

    model = Wording
    fields = ["text", "origin"]
    readonly_fields = ["origin"]
    extra = 1
    verbose_name = _("формулировка вопроса")
    verbose_name_plural = _("Другие формулировки вопроса: поправка отвечает на них и их перефразировки")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a wording is added or deleted, never rewritten: its vector is its text's

    def _entry_editable(self, request: HttpRequest, obj: Any) -> bool:
        """Whoever may change the entry (its bot's owner) may see, add and delete its wordings."""
        return bool(self.admin_site._registry[Entry].has_change_permission(request, obj))

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._entry_editable(request, obj)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._entry_editable(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return self._entry_editable(request, obj)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return super().get_queryset(request).exclude(origin=Wording.Origin.QUESTION).defer("embedding")


@admin.register(Entry)
class EntryAdmin(ReadableHistory, ScopedHistoryAdmin):
    list_display = ["short_title", "kind", "url", "weight", "review_needed", "corrected_by", "active", "embedded",
                    "updated_at"]
    list_filter = ["kind", "active", "review_needed", "bot"]
    search_fields = ["title", "text", "url"]
    list_select_related = ["bot"]
    list_per_page = 50
    readonly_fields = ["embedding_model", "created_at", "updated_at", "page", "key"]
    fields = ["bot", "kind", "title", "heading_path", "text", "url", "weight", "review_needed", "active",
              "source", "page", "key", "embedding_model", "created_at", "updated_at"]
    actions = ["mark_reviewed", "deactivate", "activate"]
    form = EntryAdminForm
    history_list_display = ["kind", "weight", "active"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        # The questions of the active corrections that name the entry as a culprit: the owner sees the
        # page text flagged for review with the correction beside it, and fixes the text or clears the
        # flag («Отметить как проверенные»).
        corrected_by = RawSQL(
            "SELECT string_agg('«' || c.title || '»', ' · ' ORDER BY c.id) FROM knowledge_entry c "
            "WHERE c.bot_id = knowledge_entry.bot_id AND c.active AND c.kind = 'correction' "
            "AND knowledge_entry.id = ANY(c.supersedes)", [],
        )
        return super().get_queryset(request).defer("embedding").annotate(corrected_by_questions=corrected_by)

    @admin.display(description=_("Исправлена поправкой"))
    def corrected_by(self, obj: Entry) -> str:
        return getattr(obj, "corrected_by_questions", None) or ""

    @admin.display(description=_("Запись"), ordering="title")
    def short_title(self, obj: Entry) -> str:
        return (obj.title or obj.text)[:80]

    @admin.display(description=_("Вектор"), boolean=True)
    def embedded(self, obj: Entry) -> bool:
        return bool(obj.embedding_model)

    def save_model(self, request: HttpRequest, obj: Entry, form: Any, change: bool) -> None:
        from knowledge.services import entry_save_from_admin

        entry_save_from_admin(entry=obj, changed_fields=list(form.changed_data), reason=ADMIN_REASON)

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        # A correction's wordings decide which questions it answers (knowledge/paraphrase.py).
        return [WordingInline] if obj is not None and obj.kind == Entry.Kind.CORRECTION else []

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        """Wordings through knowledge.services, their one writer: new ones with their vectors."""
        from knowledge.services import entry_wordings_add, entry_wordings_delete

        if formset.model is not Wording:
            super().save_formset(request, form, formset, change)
            return
        entry = form.instance
        gone = [f.instance for f in formset.deleted_forms if f.instance.pk]
        new = [(f.cleaned_data["text"], Wording.Origin.OWNER) for f in formset.extra_forms
               if f.has_changed() and f.cleaned_data.get("text") and not f.cleaned_data.get("DELETE")]
        entry_wordings_delete(entry=entry, wording_ids=[w.pk for w in gone])
        # What formset.save() would have set: the admin's history message names them.
        formset.new_objects = entry_wordings_add(entry=entry, wordings=new)
        formset.changed_objects, formset.deleted_objects = [], gone

    @admin.action(description=_("Отметить как проверенные"))
    def mark_reviewed(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        from bots.models import Bot
        from knowledge.services import entries_review_clear

        by_bot: dict[int, list[int]] = {}
        for bot_id, entry_id in queryset.values_list("bot_id", "pk"):  # the user's bots only (get_queryset)
            by_bot.setdefault(bot_id, []).append(entry_id)
        changed = sum(entries_review_clear(bot=bot, entry_ids=by_bot[bot.pk], reason=ADMIN_REASON)
                      for bot in Bot.objects.filter(pk__in=by_bot))
        self._report(request, changed=changed, unchanged=sum(map(len, by_bot.values())) - changed, invalid=[])

    @admin.action(description=_("Отключить"))
    def deactivate(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        self._switch(request, queryset, active=False)

    @admin.action(description=_("Включить"))
    def activate(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        self._switch(request, queryset, active=True)

    def _switch(self, request: HttpRequest, queryset: QuerySet[Entry], *, active: bool) -> None:
        """Each entry through `entry_edit`, as the dashboard and the API switch one: a version with
        the admin's reason, its words counted out of or into the bot's lexicon. An entry that fails
        the checks every write passes is left as it is and named in the message."""
        from knowledge.exceptions import EntryInvalid
        from knowledge.services import entry_edit

        changed, unchanged, invalid = 0, 0, []
        for entry in queryset.defer("embedding").order_by("pk"):
            if entry.active == active:
                unchanged += 1
                continue
            try:
                entry_edit(entry=entry, changes={"active": active}, reason=ADMIN_REASON)
            except EntryInvalid as exc:
                invalid.append((entry, "; ".join(exc.problems.values())))
            else:
                changed += 1
        self._report(request, changed=changed, unchanged=unchanged, invalid=invalid)

    def _report(self, request: HttpRequest, *, changed: int, unchanged: int,
                invalid: list[tuple[Entry, str]]) -> None:
        self.message_user(request, _("Изменено записей: %d") % changed, messages.SUCCESS)
        if unchanged:
            self.message_user(request, _("Уже были такими, не изменены: %d") % unchanged, messages.INFO)
        if invalid:
            self.message_user(
                request,
                _("Не изменены записи с ошибками — исправьте их в форме записи: %(entries)s") % {
                    "entries": _named(invalid)},
                messages.WARNING,
            )
