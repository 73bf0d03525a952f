"""Migrations messengers/0002–0003: Telegram's updates stored before event ids existed get their
update id as their event id, so a resend of one of them is still recognised; migrating back forgets
the updates that have no number (VK's) and keeps Telegram's."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("messengers", "0001_initial")]
AFTER = [("messengers", "0003_event_once")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_telegram_updates_keep_being_recognised_across_the_migration():
    try:
        from bots.models import Bot

        old = _migrate(BEFORE)  # only messengers goes back: the bots table is today's
        bot = Bot.objects.create(name="Старый", slug="old-bot", site_url="http://127.0.0.1/")
        old_connection = old.get_model("messengers", "Connection").objects.create(bot_id=bot.pk, kind="telegram")
        old.get_model("messengers", "InboundUpdate").objects.create(
            connection_id=old_connection.pk, update_id=912345678901, payload={"update_id": 912345678901})

        new = _migrate(AFTER)
        updates = new.get_model("messengers", "InboundUpdate")
        assert list(updates.objects.values_list("event_id", "update_id")) == [("912345678901", 912345678901)]
        with pytest.raises(IntegrityError), transaction.atomic():  # a resend is still refused
            updates.objects.create(connection_id=old_connection.pk, event_id="912345678901", payload={})
        updates.objects.create(connection_id=old_connection.pk, event_id="a" * 40, payload={})  # a VK event

        back = _migrate([("messengers", "0001_initial")])
        assert list(back.get_model("messengers", "InboundUpdate").objects.values_list("update_id", flat=True)) == [
            912345678901]
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
