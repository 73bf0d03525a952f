"""Celery tasks of the insights app: thin, by id, idempotent (insights/batch.py holds the rules)."""

from __future__ import annotations

from celery import shared_task

from insights import batch


@shared_task
def batch_run_execute_task(run_id: int) -> None:
    batch.batch_run_execute(run_id=run_id)


@shared_task
def sets_rerun_task(bot_id: int) -> None:
    batch.sets_rerun(bot_id=bot_id)
