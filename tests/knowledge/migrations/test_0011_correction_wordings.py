"""Migration knowledge/0011: the owner answers stored before wordings existed get their question as
their first wording (no vector yet), page chunks get none; migrating back and forth keeps the rows."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("knowledge", "0010_stored_texts")]
AFTER = [("knowledge", "0011_correction_wordings")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_stored_owner_answers_get_their_question_as_a_wording():
    try:
        from bots.models import Bot

        old = _migrate(BEFORE)  # only knowledge goes back: the bots table is today's
        bot = Bot.objects.create(name="Старый", slug="old-bot", site_url="http://127.0.0.1/")
        entry = old.get_model("knowledge", "Entry")
        fix = entry.objects.create(bot_id=bot.pk, kind="correction", title="Сколько стоит доставка?", text="350 ₽.")
        entry.objects.create(bot_id=bot.pk, kind="qa", title="Как вернуть товар?", text="В течение 14 дней.")
        entry.objects.create(bot_id=bot.pk, kind="chunk", title="Доставка", text="Курьер привозит заказ.")
        new = _migrate(AFTER)
        wording = new.get_model("knowledge", "Wording")
        rows = sorted(wording.objects.filter(bot_id=bot.pk).values_list("text", "origin", "embedding_model"))
        assert rows == [("Как вернуть товар?", "question", ""), ("Сколько стоит доставка?", "question", "")]
        assert new.get_model("knowledge", "Entry").objects.get(pk=fix.pk).supersedes == []
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
