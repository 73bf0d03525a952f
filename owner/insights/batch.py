"""Runs of question sets: started by the owner («Запустить») or by a change of the bot's knowledge,
executed by a Celery task question by question (the page shows the progress), and compared with
the set's previous finished run.

What must stay true:
- at most one run per set waits or runs at a time: starting again returns the live one;
- a run's task is idempotent: a redelivered task skips the questions already answered, and a run
  that finished is never run again;
- a knowledge change queues at most one re-run of the bot's sets per RERUN_DELAY (a crawl storing
  hundreds of entries is one change), sent after commit with that delay, so the run sees the
  knowledge once the change (and its embedding pass) has settled; the reason is kept on the run;
- a change never fails the write that caused it: scheduling errors are logged, not raised.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from typing import Final

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from answers import pipeline
from core.texts import Text, shown, stored, stored_pair
from owner.insights.expectations import Check, expectation_check
from owner.insights.models import BatchResult, BatchRun, QuestionSet, SetQuestion
from owner.insights.testing import comparable, reply_route

log = logging.getLogger("spravka.insights")

LIVE: Final = (BatchRun.Status.QUEUED, BatchRun.Status.RUNNING)
# A run still queued or running after this long lost its worker: it no longer blocks a new one.
STALE_AFTER: Final = timedelta(minutes=30)
NO_SETS_SECONDS: Final = 600


def _pending_key(bot_id: int) -> str:
    return f"insights:rerun:{bot_id}"


def _no_sets_key(bot_id: int) -> str:
    return f"insights:nosets:{bot_id}"


def batch_run_start(*, question_set: QuestionSet, trigger: str = BatchRun.Trigger.MANUAL,
                    reason: Text = "") -> tuple[BatchRun, bool]:
    """Queue a run of the set (the task goes after commit). Returns (run, created): a run already
    waiting or going is returned as it is."""
    with transaction.atomic():
        QuestionSet.objects.select_for_update().filter(pk=question_set.pk).first()
        live = question_set.runs.filter(status__in=LIVE).order_by("-created_at").first()
        if live is not None and live.created_at > timezone.now() - STALE_AFTER:
            return live, False
        if live is not None:
            _fail(live, stored(gettext_noop("Прогон не закончился за %(minutes)d мин."),
                               minutes=STALE_AFTER.seconds // 60))
        reason_text, reason_stored = stored_pair(reason, 300)
        run = BatchRun.objects.create(
            bot_id=question_set.bot_id, question_set=question_set, trigger=trigger, reason=reason_text,
            reason_stored=reason_stored, total=question_set.cases.count(),
        )
        transaction.on_commit(lambda: batch_run_execute_task.delay(run.pk))
    return run, True


def _fail(run: BatchRun, message: Text) -> None:
    run.error, run.error_stored = stored_pair(message, 500)
    run.status, run.finished_at = BatchRun.Status.FAILED, timezone.now()
    run.save(update_fields=["status", "error", "error_stored", "finished_at"])


def batch_run_execute(*, run_id: int) -> BatchRun | None:
    """Ask the chain every question of the run's set and store each answer as it comes."""
    with transaction.atomic():
        run = BatchRun.objects.select_for_update().select_related("bot").filter(pk=run_id).first()
        if run is None or run.status in (BatchRun.Status.DONE, BatchRun.Status.FAILED):
            return run
        cases = list(SetQuestion.objects.filter(question_set_id=run.question_set_id).order_by("position"))
        run.status, run.total = BatchRun.Status.RUNNING, len(cases)
        run.started_at = run.started_at or timezone.now()
        run.done = run.results.count()
        run.save(update_fields=["status", "total", "started_at", "done"])
    answered = set(run.results.values_list("position", flat=True))
    try:
        for case in cases:
            if case.position not in answered:
                _ask(run, case)
    except Exception as exc:
        log.exception("batch run %s failed", run.pk)
        _fail(run, stored(gettext_noop("Прогон прерван ошибкой: %(error)s"), error=type(exc).__name__))
        return run
    run.status, run.finished_at = BatchRun.Status.DONE, timezone.now()
    run.save(update_fields=["status", "finished_at"])
    return run


def _ask(run: BatchRun, case: SetQuestion) -> None:
    reply = pipeline.answer(bot=run.bot, text=case.question, history=[])
    link = reply.links[0] if reply.links else {}
    BatchResult.objects.get_or_create(run=run, position=case.position, defaults={
        "question": case.question, "answer": reply.text, "cited_url": link.get("url", "")[:2000],
        "cited_title": link.get("title", "")[:1000], "route": reply_route(reply), "score": reply.confidence,
        "expected_url": case.expected_url, "expected_phrase": case.expected_phrase,
        "passed": expectation_check(answer=reply.text, route=reply_route(reply), cited_url=link.get("url", ""),
                                    expected_url=case.expected_url, expected_phrase=case.expected_phrase).passed,
    })
    # Counted, not incremented: a redelivered task answering beside the first one counts each question once.
    BatchRun.objects.filter(pk=run.pk).update(done=BatchResult.objects.filter(run_id=run.pk).count())



# --- the diff against the previous run ----------------------------------------------------------------

NEW, SAME, UNANSWERED, ANSWERED, SOURCE, TEXT = "new", "same", "unanswered", "answered", "source", "text"


@dataclass(frozen=True)
class Row:
    result: BatchResult
    previous: BatchResult | None
    change: str  # NEW | SAME | UNANSWERED (newly) | ANSWERED (newly) | SOURCE (changed) | TEXT (changed)

    @cached_property
    def expectation(self) -> Check:
        """As expected or not, and why not: judged again from the row (a row judged by an older
        rule reads the same as a new one)."""
        return self.result.expectation


def previous_run(run: BatchRun) -> BatchRun | None:
    """The set's finished run before this one."""
    return (BatchRun.objects.filter(question_set_id=run.question_set_id, status=BatchRun.Status.DONE,
                                    created_at__lt=run.created_at).order_by("-created_at", "-pk").first())


def change_of(result: BatchResult, previous: BatchResult | None) -> str:
    if previous is None:
        return NEW
    now_none, then_none = result.route == BatchResult.Route.NO_ANSWER, previous.route == BatchResult.Route.NO_ANSWER
    if now_none and not then_none:
        return UNANSWERED
    if then_none and not now_none:
        return ANSWERED
    if result.cited_url != previous.cited_url:
        return SOURCE
    if result.answer.strip() != previous.answer.strip():
        return TEXT
    return SAME


def batch_run_diff(run: BatchRun) -> tuple[BatchRun | None, list[Row]]:
    """Every answer of `run` beside the same question's answer in the previous run."""
    before = previous_run(run)
    earlier = {comparable(r.question): r for r in before.results.all()} if before else {}
    rows = [Row(result=r, previous=earlier.get(comparable(r.question)), change=NEW) for r in run.results.all()]
    if before is None:
        return None, rows
    return before, [Row(result=row.result, previous=row.previous, change=change_of(row.result, row.previous))
                    for row in rows]


# --- re-runs after a change of the bot's knowledge ----------------------------------------------------


def rerun_pending(*, bot_id: int) -> str | None:
    """Why the bot's sets are about to re-run (the first change's reason), or None."""
    try:
        reason = cache.get(_pending_key(bot_id))
    except Exception:
        return None
    return shown(reason) if reason else None


def sets_known(*, bot_id: int) -> None:
    """The bot has sets now: knowledge changes must look again."""
    cache.delete(_no_sets_key(bot_id))


def knowledge_changed(*, bot_id: int, reason: Text) -> None:
    """Queue one re-run of the bot's sets in RERUN_DELAY seconds, unless one is queued already.
    Called after commit for every entry written: the common case costs one cache read."""
    try:
        if cache.get(_no_sets_key(bot_id)):
            return
        if not cache.add(_pending_key(bot_id), reason, settings.INSIGHTS_RERUN_DELAY + 300):
            return
        if not QuestionSet.objects.filter(bot_id=bot_id).exists():
            cache.set(_no_sets_key(bot_id), 1, NO_SETS_SECONDS)
            cache.delete(_pending_key(bot_id))
            return
        sets_rerun_task.apply_async((bot_id,), countdown=settings.INSIGHTS_RERUN_DELAY)
    except Exception:
        log.exception("could not queue the test re-run of bot %s", bot_id)


def sets_rerun(*, bot_id: int) -> list[BatchRun]:
    """Run every set of the bot because its knowledge changed; the first change's reason is kept."""
    reason = cache.get(_pending_key(bot_id)) or stored(gettext_noop("знания бота изменились"))
    cache.delete(_pending_key(bot_id))  # from here on, a new change queues a new re-run
    runs, busy = [], False
    for question_set in QuestionSet.objects.filter(bot_id=bot_id).order_by("pk"):
        run, created = batch_run_start(question_set=question_set, trigger=BatchRun.Trigger.KNOWLEDGE,
                                       reason=reason)
        runs.append(run)
        busy = busy or not created
    if busy:  # a run that began before the change may have missed it: once more, after it
        knowledge_changed(bot_id=bot_id, reason=reason)
    return runs


# Celery tasks: thin, by id, idempotent; defined here, next to what they run and where they are queued
# (owner/insights/tasks.py imports them for the worker).


@shared_task
def batch_run_execute_task(run_id: int) -> None:
    batch_run_execute(run_id=run_id)


@shared_task
def sets_rerun_task(bot_id: int) -> None:
    sets_rerun(bot_id=bot_id)
