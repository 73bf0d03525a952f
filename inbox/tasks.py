"""Celery tasks of the operators' inbox: thin, calling one service."""

from __future__ import annotations

from celery import Task, shared_task

from inbox import push, services


@shared_task
def alert_waiting() -> int:
    return services.alert_waiting()


@shared_task
def push_waiting(conversation_id: int) -> int:
    """A conversation started waiting: one `push_deliver` per subscription to tell, so a slow or
    failing browser never holds the others. The number queued."""
    ids = push.waiting_recipients(conversation_id=conversation_id)
    for subscription_id in ids:
        push_deliver.delay(subscription_id, conversation_id)
    return len(ids)


@shared_task
def push_given(conversation_id: int, operator_id: int) -> int:
    """A conversation was given to `operator_id` in turn: a notice to each of their browsers (their
    inbox tab may be closed for a few minutes while they still count as on hand). The number queued."""
    ids = push.given_recipients(conversation_id=conversation_id, operator_id=operator_id)
    for subscription_id in ids:
        push_deliver.delay(subscription_id, conversation_id, given=True)
    return len(ids)


@shared_task(bind=True, max_retries=None)
def push_deliver(self: Task, subscription_id: int, conversation_id: int, given: bool = False) -> str:
    """One notice to one browser; retried with backoff while the push service fails for a while
    (push.push_send decides and counts the attempts)."""
    outcome = push.push_send(subscription_id=subscription_id, conversation_id=conversation_id,
                             attempt=self.request.retries + 1, given=given)
    if outcome.kind == "retry":
        raise self.retry(countdown=outcome.wait)
    return outcome.kind
