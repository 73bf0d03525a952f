"""Insights listens to the knowledge layer: a saved entry or a finished crawl or import re-runs the
bot's question sets (debounced in insights.batch.knowledge_changed). Django's own post_save of
knowledge's models is the event: knowledge imports nothing of this app."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_save
from django.utils.translation import gettext_noop

from core.texts import stored
from knowledge.models import CrawlRun, Entry


def on_entry_saved(sender: Any, *, instance: Entry, created: bool, **kwargs: Any) -> None:
    from owner.insights.batch import knowledge_changed

    title = (instance.title or instance.url or str(instance.pk))[:120]
    msgid = gettext_noop("добавлена запись «%(title)s»") if created else gettext_noop("изменена запись «%(title)s»")
    reason = stored(msgid, title=title)
    bot_id = instance.bot_id
    transaction.on_commit(lambda: knowledge_changed(bot_id=bot_id, reason=reason), robust=True)


def on_crawl_saved(sender: Any, *, instance: CrawlRun, **kwargs: Any) -> None:
    from owner.insights.batch import knowledge_changed

    if instance.status != CrawlRun.Status.DONE:
        return
    bot_id, source = instance.bot_id, instance.source  # one query per finished run, if not loaded
    crawled = source.kind in (source.Kind.SITE, source.Kind.SITEMAP)
    msgid = gettext_noop("закончен обход «%(source)s»") if crawled else gettext_noop("загружен источник «%(source)s»")
    reason = stored(msgid, source=(source.title or source.url)[:120])
    transaction.on_commit(lambda: knowledge_changed(bot_id=bot_id, reason=reason), robust=True)


def connect() -> None:
    post_save.connect(on_entry_saved, sender=Entry, dispatch_uid="owner.insights.on_entry_saved")
    post_save.connect(on_crawl_saved, sender=CrawlRun, dispatch_uid="owner.insights.on_crawl_saved")
