"""Celery tasks of the routes: thin, by ID, idempotent."""

from __future__ import annotations

from celery import shared_task
from celery.app.task import Task
from django.conf import settings

from routes import publishing
from routes.models import CustomerReview


def retry_delay(attempt: int) -> float:
    return float(min(settings.WEBHOOK_RETRY_BASE * (2**attempt), 3600))


@shared_task(bind=True, max_retries=None)
def reply_publish(self: Task, run_id: int) -> None:
    final = self.request.retries + 1 >= settings.WEBHOOK_MAX_ATTEMPTS
    try:
        publishing.reply_publish_attempt(run_id=run_id, final=final)
    except publishing.PublishRetry as exc:
        raise self.retry(countdown=retry_delay(self.request.retries), exc=exc) from exc


@shared_task
def review_reply_start(review_id: int) -> None:
    """A review that arrived by webhook gets its run; a review that already has one is left alone."""
    from routes.review_reply import review_reply_run

    review = CustomerReview.objects.select_related("bot").filter(pk=review_id).first()
    if review is None or review.runs.exists():
        return
    review_reply_run(review=review)
