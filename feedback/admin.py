"""Gaps and the per-bot charts page on the Django admin, scoped like the review queue (owners, and
operators where the owner allows it). Forms post back and redirect; every error is a message."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from bots.pages import owner_frame
from chat.selectors import activity_counts
from feedback import gaps as gap_services
from feedback import operator_answers
from feedback.gaps import week_starts
from feedback.models import Gap, GapQuestion, OperatorAnswer, Outcome
from feedback.outcomes import outcomes_refresh, weekly_stats
from review.admin import ReviewScopedAdmin, review_bot_ids
from review.exceptions import ReviewError
from review.selectors import parse_int, reviewable_bots


def _chosen_bot(request: HttpRequest) -> int | None:
    bot_id = parse_int(request.GET.get("bot"))
    return bot_id if bot_id in review_bot_ids(request) else None


@admin.register(Gap)
class GapAdmin(ReviewScopedAdmin):
    list_display = ["title", "bot", "count", "status", "last_seen"]

    def get_urls(self) -> list[URLPattern]:
        wrap = self.admin_site.admin_view
        return [
            path("<int:gap_id>/answer/", wrap(require_POST(self.answer_view)), name="feedback_gap_answer"),
            path("<int:gap_id>/hide/", wrap(require_POST(self.hide_view)), name="feedback_gap_hide"),
            path("merge/", wrap(require_POST(self.merge_view)), name="feedback_gap_merge"),
            path("keep-apart/", wrap(require_POST(self.keep_apart_view)), name="feedback_gap_keep_apart"),
            path("questions/<int:question_id>/split/", wrap(require_POST(self.split_view)),
                 name="feedback_gap_split"),
            path("operator-answers/<int:proposal_id>/accept/", wrap(require_POST(self.proposal_accept_view)),
                 name="feedback_operator_answer_accept"),
            path("operator-answers/<int:proposal_id>/dismiss/", wrap(require_POST(self.proposal_dismiss_view)),
                 name="feedback_operator_answer_dismiss"),
            *super().get_urls(),
        ]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if not self.has_view_permission(request):
            return super().changelist_view(request, extra_context)
        bot_ids = review_bot_ids(request)
        bots = list(reviewable_bots(request.user).order_by("name"))
        for bot in bots:
            gap_services.gaps_refresh(bot=bot)
            operator_answers.operator_answers_refresh(bot=bot)
        status = request.GET.get("status", Gap.Status.OPEN)
        status = status if status in Gap.Status.values else Gap.Status.OPEN
        rows = gap_services.gap_list(bot_ids=bot_ids, status=status, bot_id=_chosen_bot(request))
        for row in rows:
            row["trend_word"] = gap_services.trend_word(row["trend"])
            peak = max(row["trend"]) or 1
            row["bars"] = [{"n": n, "h": max(2, round(24 * n / peak)) if n else 1} for n in row["trend"]]
        suggestions = [pair for bot in bots if _chosen_bot(request) in (None, bot.pk)
                       for pair in gap_services.gap_merge_suggestions(bot=bot)] if status == Gap.Status.OPEN else []
        context = {
            **self.admin_site.each_context(request), **owner_frame(request, _chosen_bot(request), section="gaps"),
            "title": _("Пробелы в знаниях"), "opts": self.model._meta,
            "rows": rows, "bots": bots, "bot_id": _chosen_bot(request), "status": status,
            "statuses": Gap.Status.choices, "query": request.GET.urlencode(),
            "proposals": operator_answers.operator_answer_list(bot_ids=bot_ids, bot_id=_chosen_bot(request)),
            "suggestions": suggestions,
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/feedback/gaps.html", context)

    def _gap(self, request: HttpRequest, gap_id: int) -> Gap:
        return get_object_or_404(Gap.objects.select_related("bot"), pk=gap_id, bot_id__in=review_bot_ids(request))

    def _back(self, request: HttpRequest) -> HttpResponseRedirect:
        query = request.POST.get("query", "")
        return HttpResponseRedirect(reverse("admin:feedback_gap_changelist") + (f"?{query}" if query else ""))

    def answer_view(self, request: HttpRequest, gap_id: int) -> HttpResponse:
        gap = self._gap(request, gap_id)
        try:
            gap_services.gap_answer(gap=gap, answer=request.POST.get("answer", ""), user=request.user)
        except ReviewError as exc:
            self.message_user(request, f"«{gap.title}»: {exc.message}", messages.ERROR)
            return self._back(request)
        self.message_user(request, _("Ответ сохранён в знаниях: «%(t)s». Бот отвечает им со следующего вопроса.")
                          % {"t": gap.title}, messages.SUCCESS)
        return self._back(request)

    def hide_view(self, request: HttpRequest, gap_id: int) -> HttpResponse:
        gap = self._gap(request, gap_id)
        hidden = request.POST.get("hidden", "1") == "1"
        gap_services.gap_set_hidden(gap=gap, hidden=hidden)
        text = _("Скрыто: «%(t)s».") if hidden else _("Снова в списке: «%(t)s».")
        self.message_user(request, text % {"t": gap.title}, messages.SUCCESS)
        return self._back(request)

    def merge_view(self, request: HttpRequest) -> HttpResponse:
        """«Объединить выбранные»: the row with the most questions absorbs the others."""
        ids = [i for i in (parse_int(v) for v in request.POST.getlist("gap")) if i is not None]
        chosen = list(Gap.objects.select_related("bot").filter(pk__in=ids, bot_id__in=review_bot_ids(request))
                      .order_by("-count", "first_seen", "pk"))
        try:
            if len(chosen) < 2 or len(chosen) != len(set(ids)):
                raise ReviewError(_("Выберите хотя бы две темы одного бота, чтобы объединить их."))
            merged = gap_services.gap_merge(target=chosen[0], others=chosen[1:])
        except ReviewError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return self._back(request)
        text = _("Объединено в «%(t)s», вопросов в теме: %(n)s. Похожие вопросы бот теперь добавляет сюда.")
        self.message_user(request, text % {"t": merged.title, "n": merged.count}, messages.SUCCESS)
        return self._back(request)

    def keep_apart_view(self, request: HttpRequest) -> HttpResponse:
        """«Это разные темы»: the pair is not suggested again."""
        ids = [i for i in (parse_int(v) for v in request.POST.getlist("gap")) if i is not None]
        pair = list(Gap.objects.filter(pk__in=ids, bot_id__in=review_bot_ids(request)))
        try:
            if len(pair) != 2 or len(set(ids)) != 2:
                raise ReviewError(_("Выберите две разные темы одного бота."))
            gap_services.gap_keep_apart(a=pair[0], b=pair[1])
        except ReviewError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return self._back(request)
        self.message_user(request, _("Хорошо, «%(a)s» и «%(b)s» — разные темы.")
                          % {"a": pair[0].title[:80], "b": pair[1].title[:80]}, messages.SUCCESS)
        return self._back(request)

    def split_view(self, request: HttpRequest, question_id: int) -> HttpResponse:
        question = get_object_or_404(GapQuestion.objects.select_related("gap__bot"), pk=question_id,
                                     bot_id__in=review_bot_ids(request))
        try:
            gap_services.gap_question_split(question=question)
        except ReviewError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return self._back(request)
        self.message_user(request, _("Вопрос «%(t)s» теперь отдельная тема.") % {"t": question.text[:80]},
                          messages.SUCCESS)
        return self._back(request)

    def _proposal(self, request: HttpRequest, proposal_id: int) -> OperatorAnswer:
        return get_object_or_404(OperatorAnswer.objects.select_related("bot"), pk=proposal_id,
                                 bot_id__in=review_bot_ids(request))

    def proposal_accept_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        proposal = self._proposal(request, proposal_id)
        try:
            operator_answers.operator_answer_accept(
                proposal=proposal, question=request.POST.get("question", ""), answer=request.POST.get("answer", ""),
                user=request.user,
            )
        except ReviewError as exc:
            self.message_user(request, f"«{proposal.question[:80]}»: {exc.message}", messages.ERROR)
            return self._back(request)
        self.message_user(request, _("Добавлено в справку: «%(t)s». Бот отвечает этим со следующего вопроса.")
                          % {"t": proposal.question[:80]}, messages.SUCCESS)
        return self._back(request)

    def proposal_dismiss_view(self, request: HttpRequest, proposal_id: int) -> HttpResponse:
        proposal = self._proposal(request, proposal_id)
        try:
            operator_answers.operator_answer_dismiss(proposal=proposal)
        except ReviewError as exc:
            self.message_user(request, exc.message, messages.ERROR)
            return self._back(request)
        self.message_user(request, _("Не добавлено: «%(t)s».") % {"t": proposal.question[:80]}, messages.SUCCESS)
        return self._back(request)


@admin.register(Outcome)
class OutcomeAdmin(ReviewScopedAdmin):
    """«Итоги и точность»: charts of one bot (accuracy by week, gaps by week, outcomes)."""

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        if not self.has_view_permission(request):
            return super().changelist_view(request, extra_context)
        bots = list(reviewable_bots(request.user).order_by("name"))
        if not bots:
            raise Http404("No bots")
        chosen = _chosen_bot(request)
        bot = next((b for b in bots if b.pk == chosen), bots[0])
        gap_services.gaps_refresh(bot=bot)
        outcomes_refresh(bot=bot)
        stats = weekly_stats(bot=bot)
        stats["legend"] = {"accuracy": _("Точность, %"), "gaps": _("Вопросов без ответа")}  # the charts' own texts
        total_outcomes = sum(sum(o["counts"]) for o in stats["outcomes"])
        started = activity_counts(bot=bot, since=week_starts(len(stats["weeks"]))[0])["conversations"]
        context = {
            **self.admin_site.each_context(request), "title": _("Итоги и точность: %(name)s") % {"name": bot.name},
            "opts": self.model._meta, "bot": bot, "bots": bots, "stats": stats,
            "has_labels": any(stats["decided"]), "has_gaps": any(stats["gaps"]), "has_outcomes": bool(total_outcomes),
            "unsettled": max(0, started - total_outcomes),
            "rows": list(zip(stats["weeks"], stats["accuracy"], stats["decided"], stats["gaps"], strict=True)),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/feedback/stats.html", context)
