"""Admin of the routes: the approval queue of review replies (approve / edit / reject, keyboard
1/2/3, Ctrl+Enter, J/K), one run as a timeline of its journal, reviews and the owner's settings.

Scope: the bots the user owns (BotScopedAdmin); another bot's run id answers 404 like a missing one.
Views parse, call one service and render (routes/approval.py decides)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from bots.admin_filters import worded_filter
from bots.admin_scoping import BotScopedAdmin
from llm.labels import route_words
from llm.selectors import run_events, run_usage
from routes import approval
from routes.journal import journal_row, reason_text
from routes.models import CustomerReview, ReviewReplySettings, RouteRun


class ReadOnly(BotScopedAdmin):
    list_select_related = ["bot"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(CustomerReview)
class CustomerReviewAdmin(ReadOnly):
    list_display = ["written_on", "bot", "author", "rating", "product", "source"]
    list_filter = ["bot", "rating", "source"]
    search_fields = ["author", "text", "product"]


@admin.register(ReviewReplySettings)
class ReviewReplySettingsAdmin(BotScopedAdmin):
    list_display = ["bot", "auto_pass", "auto_pass_min_rating", "auto_pass_min_score", "auto_pass_no_facts"]
    list_select_related = ["bot"]
    readonly_fields = ["intake_secret"]


@admin.register(RouteRun)
class RouteRunAdmin(ReadOnly):
    list_display = ["started_at", "bot", "route_shown", "review_author", "status", "manual", "score", "repairs",
                    "timeline"]
    list_filter = ["bot", worded_filter("route", route_words), "status", "manual"]
    list_select_related = ["bot", "review"]
    change_list_template = "admin/routes/routerun/change_list.html"
    exclude = ["publish_error"]
    readonly_fields = ["shown_publish_error"]

    @admin.display(description=gettext_lazy("ошибка публикации"))
    def shown_publish_error(self, run: RouteRun) -> str:
        return run.publish_error_shown

    @admin.display(description=gettext_lazy("маршрут"), ordering="route")
    def route_shown(self, run: RouteRun) -> str:
        return route_words(run.route)

    @admin.display(description=gettext_lazy("отзыв"))
    def review_author(self, run: RouteRun) -> str:
        return f"{run.review.author} ({run.review.rating}★)" if run.review else "—"

    @admin.display(description=gettext_lazy("ход прогона"))
    def timeline(self, run: RouteRun) -> str:
        return format_html('<a href="{}">{}</a>', reverse("admin:routes_routerun_timeline", args=[run.pk]),
                           _("журнал"))

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("queue/", wrap(self.queue_view), name="routes_routerun_queue"),
            path("<int:run_id>/decide/", wrap(self.decide_view), name="routes_routerun_decide"),
            path("<int:run_id>/timeline/", wrap(self.timeline_view), name="routes_routerun_timeline"),
            *super().get_urls(),
        ]

    def _scope(self, request: HttpRequest) -> QuerySet[RouteRun]:
        if not self.has_view_permission(request):
            raise Http404
        return self.get_queryset(request)

    def _bot_ids(self, request: HttpRequest) -> list[int]:
        return list(self._scope(request).values_list("bot_id", flat=True).distinct())

    def queue_view(self, request: HttpRequest) -> HttpResponse:
        """One waiting reply at a time, oldest first; ?at=<run id> shows that one (J/K)."""
        waiting = self._scope(request).filter(status=RouteRun.Status.WAITING).select_related("review", "bot")
        ids = list(waiting.order_by("started_at", "id").values_list("pk", flat=True))
        at = request.GET.get("at", "")
        current_id = int(at) if at.isdigit() and int(at) in ids else (ids[0] if ids else None)
        run = waiting.filter(pk=current_id).first() if current_id else None
        position = ids.index(current_id) if current_id in ids else -1
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": _("Ответы на отзывы: решение"),
            "run": run, "total": len(ids), "position": position + 1,
            "previous_id": ids[position - 1] if position > 0 else None,
            "next_id": ids[position + 1] if 0 <= position < len(ids) - 1 else None,
        }
        return TemplateResponse(request, "admin/routes/queue.html", context)

    def decide_view(self, request: HttpRequest, run_id: int) -> HttpResponse:
        return require_POST(self._decide)(request, run_id)

    def _decide(self, request: HttpRequest, run_id: int) -> HttpResponse:
        decision, text = request.POST.get("decision", ""), request.POST.get("text", "")
        queue = reverse("admin:routes_routerun_queue")
        try:
            run = approval.approval_decide(
                run_id=run_id, bot_ids=self._bot_ids(request), decision=decision, text=text, user=request.user
            )
        except approval.ApprovalError as exc:
            if exc.status == 404:
                raise Http404 from exc
            messages.error(request, exc.message)
            return HttpResponseRedirect(f"{queue}?at={run_id}")
        done = {
            approval.APPROVE: _("Ответ одобрен и отправлен на публикацию."),
            approval.EDIT: _("Исправленный ответ одобрен и отправлен на публикацию."),
            approval.REJECT: _("Ответ отклонён: он не будет опубликован."),
        }
        messages.success(request, f"{done[decision]} ({run.review.author if run.review else run.pk})")
        return HttpResponseRedirect(queue)

    def timeline_view(self, request: HttpRequest, run_id: int) -> HttpResponse:
        run = self._scope(request).select_related("review", "bot", "decided_by").filter(pk=run_id).first()
        if run is None:
            raise Http404
        events = list(run_events(bot_id=run.bot_id, run_ids=[run.pk]))
        started = events[0].created_at if events else run.started_at
        rows = [
            {**journal_row(event), "label": event.get_kind_display(), "reason_text": reason_text(event),
             "offset_ms": int((event.created_at - started).total_seconds() * 1000), "detail": event.detail}
            for event in events
        ]
        usage = list(run_usage(bot_id=run.bot_id, run_id=run.pk))
        context = {
            **self.admin_site.each_context(request), "opts": self.model._meta,
            "title": _("Прогон %(n)s: ход") % {"n": run.pk}, "run": run, "rows": rows, "usage": usage,
            "route_words": route_words(run.route),
            "total_cost": sum((line.cost_usd for line in usage), start=0),
            "total_ms": sum(line.latency_ms for line in usage),
        }
        return TemplateResponse(request, "admin/routes/timeline.html", context)
