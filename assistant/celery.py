"""The Celery application: Redis broker, tasks discovered in every installed app."""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")

app = Celery("spravka")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _warm_worker_child(**_kwargs: object) -> None:
    """A worker child answers messenger turns with the whole chain (messengers/turns.py), whose model
    deadline runs from the turn's start: load the model SDK, the embedding model and the
    dictionaries before its first turn, as a serving process does (assistant/startup.py)."""
    from assistant.startup import warm_up

    warm_up()
