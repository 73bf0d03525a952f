"""Celery tasks of the routes: thin, by ID, idempotent."""

from __future__ import annotations

from celery import shared_task

from routes.models import CustomerReview
from routes.publishing import reply_publish  # noqa: F401  (registered with the worker from here)


@shared_task
def review_reply_start(review_id: int) -> None:
    """A review that arrived by webhook gets its run; a review that already has one is left alone."""
    from routes.review_reply import review_reply_run

    review = CustomerReview.objects.select_related("bot").filter(pk=review_id).first()
    if review is None or review.runs.exists():
        return
    review_reply_run(review=review)
