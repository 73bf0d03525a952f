"""Entry versions: every edit is kept, any version can be restored, and a restore is itself a
version that can be undone. A restored text is re-embedded, never searched with a stale vector."""

from __future__ import annotations

import pytest
from django.utils import timezone

from knowledge.exceptions import EntryVersionNotFound, KnowledgeError
from knowledge.importing import document_import, qa_add
from knowledge.models import Entry
from knowledge.services import entry_revert

pytestmark = pytest.mark.django_db


def _embed(entry: Entry) -> None:
    Entry.objects.filter(pk=entry.pk).update(embedding=[0.1] * 384, embedding_model="e5-small")


@pytest.fixture
def edited(bot) -> tuple[Entry, int]:
    """A Q/A pair whose answer the owner changed once; returns it and its first version's id."""
    entry = qa_add(bot=bot, question="Сколько дней на возврат?", answer="14 дней.")
    first = entry.history.latest().history_id
    qa_add(bot=bot, question="Сколько дней на возврат?", answer="30 дней без вопросов.")
    entry.refresh_from_db()
    return entry, first


def test_every_edit_of_an_entry_is_kept_as_a_version(edited):
    entry, _first = edited

    assert entry.text == "30 дней без вопросов."
    assert [version.text for version in entry.history.order_by("history_id")] == [
        "14 дней.", "30 дней без вопросов."
    ]
    assert [version.history_type for version in entry.history.order_by("history_id")] == ["+", "~"]


def test_as_of_shows_the_text_an_entry_had_at_a_moment(bot):
    entry = qa_add(bot=bot, question="Есть самовывоз?", answer="Нет.")
    moment = timezone.now()
    qa_add(bot=bot, question="Есть самовывоз?", answer="Да, на Ленина, 5.")

    assert entry.history.as_of(moment).text == "Нет."


def test_reverting_restores_the_text_as_a_new_version(edited):
    entry, first = edited

    reverted = entry_revert(entry=entry, history_id=first)

    assert reverted.text == "14 дней."
    entry.refresh_from_db()
    assert entry.text == "14 дней."
    latest = entry.history.latest()
    assert (latest.text, latest.history_type) == ("14 дней.", "~")
    assert latest.history_change_reason == f"откат к версии №{first}"
    assert entry.history.count() == 3


def test_a_revert_can_itself_be_reverted(edited):
    entry, first = edited
    second = entry.history.latest().history_id

    entry_revert(entry=entry, history_id=first)
    entry_revert(entry=entry, history_id=second)

    entry.refresh_from_db()
    assert entry.text == "30 дней без вопросов." and entry.history.count() == 4


def test_a_revert_that_changes_the_text_drops_the_stale_vector(edited):
    entry, first = edited
    _embed(entry)

    entry_revert(entry=entry, history_id=first)

    entry.refresh_from_db()
    assert entry.embedding is None and entry.embedding_model == ""


def test_a_revert_that_keeps_the_text_keeps_the_vector(bot):
    entry = qa_add(bot=bot, question="Есть гарантия?", answer="Год.", weight=0.8)
    first = entry.history.latest().history_id
    qa_add(bot=bot, question="Есть гарантия?", answer="Год.", weight=1.0)
    _embed(entry)

    entry_revert(entry=entry, history_id=first)

    entry.refresh_from_db()
    assert entry.weight == 0.8 and entry.embedding_model == "e5-small"


def test_a_switched_off_document_chunk_comes_back_with_its_version(bot):
    document_import(bot=bot, filename="faq.md", data=b"# A\n\nFirst.\n\n# B\n\nSecond.")
    document_import(bot=bot, filename="faq.md", data=b"# A\n\nFirst.")
    gone = Entry.objects.get(bot=bot, heading_path="B")
    assert not gone.active

    entry_revert(entry=gone, history_id=gone.history.earliest().history_id)

    gone.refresh_from_db()
    assert gone.active and gone.text == "Second."


def test_a_version_of_another_entry_cannot_be_restored(edited, other_bot):
    entry, _first = edited
    foreign = qa_add(bot=other_bot, question="Секрет?", answer="Чужой ответ.")

    with pytest.raises(EntryVersionNotFound) as refused:
        entry_revert(entry=entry, history_id=foreign.history.latest().history_id)

    assert isinstance(refused.value, KnowledgeError)
    assert refused.value.message == (
        f"У записи №{entry.pk} нет версии №{foreign.history.latest().history_id}. "
        "Обновите страницу и выберите версию из списка."
    )
    entry.refresh_from_db()
    assert entry.text == "30 дней без вопросов." and entry.history.count() == 2
