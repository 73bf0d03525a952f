"""Celery tasks of the operators' inbox: thin, calling one service."""

from __future__ import annotations

from celery import shared_task

from inbox import services


@shared_task
def alert_waiting() -> int:
    return services.alert_waiting()
