"""Search reads review flags (an entry's own, or its page's), and the owner's edit clears an entry's."""

from __future__ import annotations

import pytest

from knowledge.drafts import EntryDraft
from knowledge.indexing import embed_pending
from knowledge.models import Page
from knowledge.search import REVIEW_PENALTY, search_entries
from knowledge.services import entry_save_from_admin, entry_upsert, source_get_or_create

pytestmark = pytest.mark.django_db
QUESTION = "Сколько стоит доставка по Москве?"


@pytest.fixture
def delivery(bot):
    source = source_get_or_create(bot=bot, kind="site", url="https://shop.example/")
    page = Page.objects.create(bot=bot, source=source, url="https://shop.example/delivery/", title="Доставка")
    entry, _ = entry_upsert(bot=bot, source=source, page=page, draft=EntryDraft(
        key="delivery", title="Доставка", text="Доставка по Москве стоит 300 ₽.", url=page.url))
    embed_pending(bot_id=bot.pk)
    return entry


def test_a_flagged_page_lowers_its_entries_like_a_flagged_entry(bot, delivery):
    clean = search_entries(bot, QUESTION)[0]
    Page.objects.filter(pk=delivery.page_id).update(review_needed=True)
    by_page = search_entries(bot, QUESTION)[0]
    assert by_page.review_needed and by_page.components["review_penalty"] == REVIEW_PENALTY
    assert by_page.score < clean.score
    Page.objects.filter(pk=delivery.page_id).update(review_needed=False)
    delivery.review_needed = True
    delivery.save(update_fields=["review_needed"])
    assert search_entries(bot, QUESTION)[0].score == by_page.score


def test_editing_the_text_clears_the_flag_unless_set_in_the_same_edit(bot, delivery):
    delivery.review_needed = True
    delivery.save(update_fields=["review_needed"])
    delivery.text = "Доставка по Москве стоит 350 ₽."
    entry_save_from_admin(entry=delivery, changed_fields=["text"])
    delivery.refresh_from_db()
    assert not delivery.review_needed
    delivery.text, delivery.review_needed = "Доставка по Москве стоит 400 ₽.", True
    entry_save_from_admin(entry=delivery, changed_fields=["text", "review_needed"])
    delivery.refresh_from_db()
    assert delivery.review_needed


def test_a_recrawled_changed_text_clears_the_flag(bot, delivery):
    delivery.review_needed = True
    delivery.save(update_fields=["review_needed"])
    entry, outcome = entry_upsert(bot=bot, source=delivery.source, page=delivery.page, draft=EntryDraft(
        key="delivery", title="Доставка", text="Доставка по Москве теперь 350 ₽.", url=delivery.url))
    assert outcome == "updated" and not entry.review_needed
