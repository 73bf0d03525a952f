"""The review queue on the Django admin: one dialog at a time, three buttons (docs/architecture.md), keyboard
1/2/3, Ctrl+Enter, J/K. The page loads the current item and the next one; a decision is one POST
that answers with the item after that, so the next dialog is always already there.

Scope: the bots the person may review (`review.selectors.reviewable_bots`): owners, and operators
where the owner allows it. Another bot's item id answers 404, like a missing one."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_POST

from bots.admin_scoping import BotScopedAdmin
from bots.pages import owner_frame
from core.plurals import plural_forms
from review import selectors, services
from review.exceptions import ItemNotFound, ReviewError
from review.models import Correction, ReviewItem
from review.reach import correction_reach


def review_bot_ids(request: HttpRequest) -> list[int]:
    cached: list[int] | None = getattr(request, "_spravka_review_bot_ids", None)
    if cached is None:
        cached = list(selectors.reviewable_bots(request.user).values_list("pk", flat=True))
        request._spravka_review_bot_ids = cached  # type: ignore[attr-defined]
    return cached


class ReviewScopedAdmin(BotScopedAdmin):
    """BotScopedAdmin with the review scope instead of plain membership."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return admin.ModelAdmin.get_queryset(self, request).filter(bot_id__in=review_bot_ids(request))

    def _member(self, request: HttpRequest, obj: models.Model | None) -> bool:
        if not request.user.is_active or not getattr(request.user, "is_staff", False):
            return False
        ids = review_bot_ids(request)
        return bool(ids) if obj is None else self._obj_bot_id(obj) in ids

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _lines(text: str) -> list[str]:
    return [line for line in (text or "").splitlines() if line.strip()]


@admin.register(ReviewItem)
class ReviewItemAdmin(ReviewScopedAdmin):
    list_display = ["question", "bot", "status", "decision", "answered_at"]

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:item_id>/card/", wrap(self.card_view), name="review_reviewitem_card"),
            path("<int:item_id>/decide/", wrap(self.decide_view), name="review_reviewitem_decide"),
            path("<int:item_id>/undo/", wrap(self.undo_view), name="review_reviewitem_undo"),
            path("<int:item_id>/reach/", wrap(self.reach_view), name="review_reviewitem_reach"),
            *super().get_urls(),
        ]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """The queue page itself, in place of the usual list."""
        if not self.has_view_permission(request):
            return super().changelist_view(request, extra_context)
        bot_ids = review_bot_ids(request)
        flt = selectors.QueueFilter.from_query(request.GET)
        items = selectors.queue(bot_ids, flt)
        first = selectors.next_item(items, None)
        second = selectors.next_item(items, first) if first else None
        unfiltered = selectors.queue(bot_ids, selectors.QueueFilter(bot_id=flt.bot_id, status=flt.status))
        reason_counts = selectors.reason_counts(unfiltered)
        state = {
            "current": self._card(items, first), "next": self._card(items, second),
            "total": items.count(), "filter": flt.as_query(), "urls": self._urls(),
            "counts": {"chars": plural_forms(lambda n: ngettext("%(n)s знак", "%(n)s знаков", n))},
        }
        context = {
            **self.admin_site.each_context(request),
            **owner_frame(request, flt.bot_id, section="review"),
            "title": _("Очередь проверки"),
            "opts": self.model._meta,
            "state": state,
            "bots": list(selectors.reviewable_bots(request.user).order_by("name").only("pk", "name")),
            "flt": flt,
            "reason_choices": [(code, label, reason_counts[code]) for code, label in ReviewItem.Reason.choices],
            "pending_status": ReviewItem.Status.PENDING,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/review/queue.html", context)

    def _urls(self) -> dict[str, str]:
        return {
            "card": reverse("admin:review_reviewitem_card", args=[0]),
            "decide": reverse("admin:review_reviewitem_decide", args=[0]),
            "undo": reverse("admin:review_reviewitem_undo", args=[0]),
            "reach": reverse("admin:review_reviewitem_reach", args=[0]),
        }

    def _card(self, items: QuerySet[ReviewItem], item: ReviewItem | None) -> dict[str, Any] | None:
        if item is None:
            return None
        data = selectors.card(item)
        data["position"] = selectors.position(items, item)
        return data

    def _item(self, request: HttpRequest, item_id: int) -> ReviewItem:
        item = ReviewItem.objects.select_related("bot").filter(pk=item_id, bot_id__in=review_bot_ids(request)).first()
        if item is None:
            raise ItemNotFound()
        return item

    def _neighbour_payload(self, request: HttpRequest, show: ReviewItem | None) -> dict[str, Any]:
        """What the page shows now (`show` if it is still in the filtered queue, else the queue's
        first item) and the item after it, to preload: the queue as it is after the change."""
        items = selectors.queue(review_bot_ids(request), selectors.QueueFilter.from_query(request.GET))
        if show is None or not items.filter(pk=show.pk).exists():
            show = selectors.next_item(items, None)
        following = selectors.next_item(items, show) if show is not None else None
        return {"item": self._card(items, show), "next": self._card(items, following), "total": items.count()}

    @staticmethod
    def _error(exc: ReviewError) -> JsonResponse:
        return JsonResponse({"ok": False, "code": exc.code, "error": exc.message}, status=exc.status)

    def card_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        """GET one item (J/K): its card, its place in the filtered queue, and its neighbours' ids."""
        return require_GET(self._card_view)(request, item_id)

    def _card_view(self, request: HttpRequest, item_id: int) -> JsonResponse:
        try:
            item = self._item(request, item_id)
        except ReviewError as exc:
            return self._error(exc)
        items = selectors.queue(review_bot_ids(request), selectors.QueueFilter.from_query(request.GET))
        following = selectors.next_item(items, item)
        previous = selectors.previous_item(items, item)
        return JsonResponse({
            "ok": True, "item": self._card(items, item), "total": items.count(),
            "next": self._card(items, following), "previous_id": previous.pk if previous else None,
        })

    def decide_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        return require_POST(self._decide_view)(request, item_id)

    def _decide_view(self, request: HttpRequest, item_id: int) -> JsonResponse:
        """POST decision (+ text): decide, then send the item after `after` (the preloaded one)."""
        try:
            item = services.review_item_decide(
                item_id=item_id, bot_ids=review_bot_ids(request), decision=request.POST.get("decision", ""),
                text=request.POST.get("text", ""), user=request.user, question=request.POST.get("question", ""),
                wordings=_lines(request.POST.get("wordings", "")),
            )
        except ReviewError as exc:
            return self._error(exc)
        after = ReviewItem.objects.filter(
            pk=selectors.parse_int(request.POST.get("after")) or 0, bot_id__in=review_bot_ids(request)
        ).first()
        return JsonResponse({"ok": True, "decided": selectors.card(item), **self._neighbour_payload(request, after)})

    def reach_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        return require_POST(self._reach_view)(request, item_id)

    def _reach_view(self, request: HttpRequest, item_id: int) -> JsonResponse:
        """POST question (+ wordings): what the correction would answer, before it is saved."""
        try:
            item = self._item(request, item_id)
            question = services.clean_question(request.POST.get("question", "") or item.question or item.answer[:200])
            wordings = services.clean_wordings(_lines(request.POST.get("wordings", "")))
        except ReviewError as exc:
            return self._error(exc)
        reach = correction_reach(bot=item.bot, question=question, wordings=wordings,
                                 answer=request.POST.get("text", "")[: services.ANSWER_MAX])
        return JsonResponse({"ok": True, **reach.as_dict()})

    def undo_view(self, request: HttpRequest, item_id: int) -> HttpResponse:
        return require_POST(self._undo_view)(request, item_id)

    def _undo_view(self, request: HttpRequest, item_id: int) -> JsonResponse:
        try:
            item = services.review_item_undo(item_id=item_id, bot_ids=review_bot_ids(request), user=request.user)
        except ReviewError as exc:
            return self._error(exc)
        return JsonResponse({"ok": True, **self._neighbour_payload(request, item)})


@admin.register(Correction)
class CorrectionAdmin(ReviewScopedAdmin):
    list_display = ["question", "kind", "origin", "status", "entry", "created_by", "created_at"]
    list_filter = ["status", "kind", "origin"]
    list_select_related = ["entry", "created_by"]
    search_fields = ["question", "answer"]
