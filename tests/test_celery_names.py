"""Every task the beat schedule starts and every task route names a task the worker registers: a task
that moves to another module changes its name, and a schedule left behind would queue a task no worker
knows (found only when the beat fires)."""

from __future__ import annotations

from django.conf import settings


def registered() -> set[str]:
    from assistant.celery import app

    app.loader.import_default_modules()  # what a worker imports at start: every app's tasks.py
    return set(app.tasks)


def test_every_scheduled_task_is_registered():
    missing = {key: entry["task"] for key, entry in settings.CELERY_BEAT_SCHEDULE.items()
               if entry["task"] not in registered()}
    assert not missing, f"the beat would queue tasks no worker knows: {missing}"


def test_every_routed_task_is_registered():
    missing = sorted(set(settings.CELERY_TASK_ROUTES) - registered())
    assert not missing, f"routes for tasks no worker knows: {missing}"
