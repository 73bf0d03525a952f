"""`/b/<slug>/testing/`: hit testing and question sets. Thin: find the bot (404 unless the person
owns it), find the set or run among that bot's own (another bot's id is a 404 like a missing one),
call one service, render."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from bots.models import Bot
from bots.pages import owner_bot, owner_context
from owner.insights import batch, sets
from owner.insights.models import BatchRun, QuestionSet
from owner.insights.testing import InsightsError, hit_test

LOGIN = "login"


def _set_of(bot: Bot, set_id: int) -> QuestionSet:
    return get_object_or_404(QuestionSet.objects.filter(bot=bot), pk=set_id)


def _run_of(bot: Bot, run_id: int) -> BatchRun:
    return get_object_or_404(BatchRun.objects.filter(bot=bot).select_related("question_set"), pk=run_id)


@login_required(login_url=LOGIN)
def testing_page(request: HttpRequest, slug: str) -> HttpResponse:
    bot = owner_bot(request, slug)
    context: dict[str, Any] = owner_context(request, bot, section="testing", title=_("Проверка бота"))
    question, status = "", 200
    if request.method == "POST":
        question = request.POST.get("question", "")
        try:
            context["hit"] = hit_test(bot=bot, question=question)
        except InsightsError as exc:
            context["question_error"], status = exc.message, 400
    context |= {"question": question[:5000], "sets": _sets_overview(bot),
                "rerun_pending": batch.rerun_pending(bot_id=bot.pk)}
    return render(request, "insights/testing.html", context, status=status)


def _sets_overview(bot: Bot) -> list[dict[str, Any]]:
    """Each set with its newest run and how that run differs from the one before."""
    overview = []
    for question_set in QuestionSet.objects.filter(bot=bot).order_by("name", "pk"):
        run = question_set.runs.order_by("-created_at", "-pk").first()
        changed = None
        if run is not None and run.status == BatchRun.Status.DONE:
            before, rows = batch.batch_run_diff(run)
            changed = sum(row.change not in (batch.SAME, batch.NEW) for row in rows) if before else None
        overview.append({"set": question_set, "count": question_set.cases.count(), "run": run, "changed": changed})
    return overview


@login_required(login_url=LOGIN)
def set_edit_page(request: HttpRequest, slug: str, set_id: int | None = None) -> HttpResponse:
    bot = owner_bot(request, slug)
    question_set = _set_of(bot, set_id) if set_id is not None else None
    title = _("Набор вопросов: %(name)s") % {"name": question_set.name} if question_set else _("Новый набор вопросов")
    context = owner_context(request, bot, section="testing", title=title)
    name = question_set.name if question_set else ""
    text = sets.set_text(question_set) if question_set else ""
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        if question_set is not None and request.POST.get("action") == "delete":
            sets.question_set_delete(question_set=question_set)
            messages.success(request, _("Набор «%(name)s» удалён.") % {"name": name})
            return HttpResponseRedirect(reverse("insights:testing", args=[bot.slug]))
        name, text = request.POST.get("name", ""), request.POST.get("questions", "")
        try:
            question_set = sets.question_set_save(bot=bot, name=name, text=text, question_set=question_set)
        except sets.SetInvalid as exc:
            errors = exc.errors
        else:
            messages.success(request, _("Набор сохранён: %(count)d вопр.") % {"count": question_set.cases.count()})
            return HttpResponseRedirect(reverse("insights:set", args=[bot.slug, question_set.pk]))
    context |= {"question_set": question_set, "name": name[:200], "text": text[: sets.PASTE_MAX],
                "errors": errors, "limit": sets.MAX_QUESTIONS}
    return render(request, "insights/set_edit.html", context, status=400 if errors else 200)


@login_required(login_url=LOGIN)
def set_page(request: HttpRequest, slug: str, set_id: int) -> HttpResponse:
    bot = owner_bot(request, slug)
    question_set = _set_of(bot, set_id)
    if request.method == "POST":
        _run, created = batch.batch_run_start(question_set=question_set)
        if created:
            messages.success(request, _("Прогон запущен."))
        else:
            messages.info(request, _("Этот набор уже проверяется: дождитесь конца прогона."))
        return HttpResponseRedirect(reverse("insights:set", args=[bot.slug, question_set.pk]))
    run = question_set.runs.order_by("-created_at", "-pk").first()
    return _render_run(request, bot, question_set, run)


@login_required(login_url=LOGIN)
def run_page(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    bot = owner_bot(request, slug)
    run = _run_of(bot, run_id)
    return _render_run(request, bot, run.question_set, run)


def _render_run(request: HttpRequest, bot: Bot, question_set: QuestionSet, run: BatchRun | None) -> HttpResponse:
    context = owner_context(request, bot, section="testing",
                            title=_("Набор вопросов: %(name)s") % {"name": question_set.name})
    previous: BatchRun | None = None
    rows: list[batch.Row] = []
    if run is not None and run.status in (BatchRun.Status.DONE, BatchRun.Status.RUNNING, BatchRun.Status.FAILED):
        previous, rows = batch.batch_run_diff(run)
    counts = {change: sum(row.change == change for row in rows) for change in
              (batch.UNANSWERED, batch.ANSWERED, batch.SOURCE, batch.TEXT, batch.SAME, batch.NEW)}
    checked = [row for row in rows if row.expectation.passed is not None]
    context |= {
        "question_set": question_set, "run": run, "previous": previous, "rows": rows, "counts": counts,
        "passed": sum(bool(row.expectation.passed) for row in checked), "checked": len(checked),
        "live": run is not None and run.status in batch.LIVE,
        "runs": question_set.runs.order_by("-created_at", "-pk")[:20],
        "questions": question_set.cases.count(), "rerun_pending": batch.rerun_pending(bot_id=bot.pk),
    }
    return render(request, "insights/set.html", context)


@require_GET
@login_required(login_url=LOGIN)
def run_progress(request: HttpRequest, slug: str, run_id: int) -> JsonResponse:
    """The progress bar's poll: {status, done, total, percent}."""
    bot = owner_bot(request, slug)
    run = _run_of(bot, run_id)
    return JsonResponse({"status": run.status, "done": run.done, "total": run.total, "percent": run.percent,
                         "label": run.get_status_display()})
