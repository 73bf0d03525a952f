"""The Celery application: Redis broker, tasks discovered in every installed app."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "assistant.settings")

app = Celery("spravka")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
