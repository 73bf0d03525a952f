"""Approved replies go out by a signed webhook to the owner's URL (the chat's webhook contract:
`X-Spravka-Signature: sha256=<hex HMAC-SHA256 of the exact body>` with the bot's webhook secret,
through the SSRF-safe client). The event is `review.reply`.

What must stay true: `publish_allowed` (below) is checked on every attempt, right before the
request, so no path (a stale task, a retried one, a hand-run shell) writes an unapproved reply out.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

from celery import shared_task
from celery.app.task import Task
from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from chat.webhooks import DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, sign
from core.http import AddressRefused, FetchError, SafeClient
from core.texts import Text, stored, stored_pair
from llm import journal
from llm.models import RunEvent
from routes.models import ReviewReplySettings, RouteRun

logger = logging.getLogger("spravka.routes")

EVENT: Final = "review.reply"


class PublishRetry(Exception):
    """An attempt that may succeed later (network error, timeout, 5xx, 429)."""


def publish_url(run: RouteRun) -> str:
    owner = ReviewReplySettings.objects.filter(bot_id=run.bot_id).first()
    return (owner.publish_url if owner else "") or run.bot.webhook_url


def payload(run: RouteRun) -> dict[str, Any]:
    review = run.review
    data: dict[str, Any] = {
        "event": EVENT, "bot": run.bot.slug, "run": run.pk, "reply": run.text,
        "approved": "auto" if run.decided_by_id is None else "person", "approved_at": run.decided_at,
        "edited": bool(run.final_text),
    }
    if review is not None:
        data["review"] = {
            "id": review.pk, "author": review.author, "rating": review.rating, "product": review.product,
            "date": review.written_on, "source": review.source,
        }
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


def reply_publish_attempt(*, run_id: int, final: bool) -> bool:
    """One attempt; True when published or nothing is left to do. Raises PublishRetry when a later
    attempt may succeed and this is not the `final` one."""
    with transaction.atomic():
        run = RouteRun.objects.select_for_update(of=("self",)).select_related("bot", "review").filter(pk=run_id).first()
        if run is None or run.status == RouteRun.Status.PUBLISHED:
            return True
        if not publish_allowed(run):
            journal.run_event_record(
                bot_id=run.bot_id, kind=RunEvent.Kind.PUBLISH, ok=False, route=run.route, purpose="publish",
                run_id=run.pk, detail={"step": "publish", "reason": "not_approved"},
            )
            return True
        url = publish_url(run)
        body = json.dumps(payload(run), ensure_ascii=False, sort_keys=True).encode()
        retryable = _send(run, url, body)
        if run.status != RouteRun.Status.PUBLISHED:
            run.status = RouteRun.Status.APPROVED if retryable and not final else RouteRun.Status.PUBLISH_FAILED
        run.save(update_fields=["publish_attempts", "publish_status", "publish_error", "publish_error_stored",
                                "status", "published_at", "finished_at"])
        journal.run_event_record(
            bot_id=run.bot_id, kind=RunEvent.Kind.PUBLISH, ok=run.status == RouteRun.Status.PUBLISHED,
            route=run.route, purpose="publish", run_id=run.pk,
            detail={"step": "publish", "status": run.publish_status, "attempt": run.publish_attempts,
                    "reason": run.publish_error[:100], "reason_stored": run.publish_error_stored},
        )
    if run.status == RouteRun.Status.APPROVED:
        raise PublishRetry(run.publish_error)
    return run.status == RouteRun.Status.PUBLISHED


def _send(run: RouteRun, url: str, body: bytes) -> bool:
    """Posts `body`; records the answer on `run`; returns whether a later attempt may help."""
    run.publish_attempts += 1
    if not url:
        _failed(run, stored(gettext_noop("адрес публикации не задан")))
        return False
    headers = {
        "Content-Type": "application/json", SIGNATURE_HEADER: sign(run.bot.webhook_secret, body),
        EVENT_HEADER: EVENT, DELIVERY_HEADER: f"run-{run.pk}",
    }
    try:
        with SafeClient(timeout=settings.WEBHOOK_TIMEOUT) as client:
            response = client.post(url, content=body, headers=headers)
    except AddressRefused as exc:
        _failed(run, exc.text)
        return False
    except FetchError as exc:
        _failed(run, exc.text)
        return True
    run.publish_status, run.publish_error, run.publish_error_stored = response.status, "", None
    if 200 <= response.status < 300:
        run.status, run.published_at, run.finished_at = RouteRun.Status.PUBLISHED, timezone.now(), timezone.now()
        return False
    _failed(run, stored(gettext_noop("ответ %(status)s"), status=response.status))
    return response.status >= 500 or response.status in (408, 429)


def _failed(run: RouteRun, error: Text) -> None:
    """Why the attempt failed: the Russian in `publish_error`, the stored text beside it."""
    run.publish_error, run.publish_error_stored = stored_pair(error, 500)


def publish_allowed(run: RouteRun) -> bool:
    """The deterministic approval-bypass check: approved by a person, or auto-passed while checked
    and not manual. Nothing else reaches the customer's system."""
    if run.status not in (RouteRun.Status.APPROVED, RouteRun.Status.PUBLISH_FAILED):
        return False
    if run.decided_by_id is not None:
        return True
    return run.auto_passed and run.checked and not run.manual


def retry_delay(attempt: int) -> float:
    return float(min(settings.WEBHOOK_RETRY_BASE * (2**attempt), 3600))


@shared_task(bind=True, max_retries=None)
def reply_publish(self: Task, run_id: int) -> None:
    """One publishing attempt (Celery; routes/tasks.py imports it for the worker), retried with backoff."""
    final = self.request.retries + 1 >= settings.WEBHOOK_MAX_ATTEMPTS
    try:
        reply_publish_attempt(run_id=run_id, final=final)
    except PublishRetry as exc:
        raise self.retry(countdown=retry_delay(self.request.retries), exc=exc) from exc
