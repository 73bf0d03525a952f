"""The Entry admin writes through knowledge.services: its actions and its form leave the same state
as the dashboard and the API (a version with the admin's reason, the vector, the review flag) and
keep the bot's lexicon equal to what a rebuild over its active entries would give."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from knowledge.admin import ADMIN_REASON
from knowledge.drafts import question_key
from knowledge.lexicon import lexicon_fresh, lexicon_refresh, lexicon_stored
from knowledge.models import Entry, Source
from knowledge.services import entries_review_clear

pytestmark = pytest.mark.django_db
CHANGELIST = "admin:knowledge_entry_changelist"


@pytest.fixture
def shelf(bot: Any, other_bot: Any) -> dict[str, Entry]:
    """Three entries of the owner's bot and one of another bot, the lexicons rebuilt."""
    new = Entry.objects.create
    rows = {
        "delivery": new(bot=bot, kind="chunk", title="Доставка", text="Курьер привозит заказ по Москве."),
        "returns": new(bot=bot, kind="qa", title="Можно ли вернуть товар?", text="Возврат в течение 14 дней."),
        "payment": new(bot=bot, kind="chunk", title="Оплата", text="Принимаем карты и наличные."),
        "theirs": new(bot=other_bot, kind="chunk", title="Склад", text="Курьер соседа возит мебель."),
    }
    lexicon_refresh(bot_id=bot.pk)
    lexicon_refresh(bot_id=other_bot.pk)
    return rows


def _act(client: Any, action: str, entries: list[Entry]) -> list[str]:
    response = client.post(reverse(CHANGELIST), {"action": action, "index": 0,
                                                 "_selected_action": [e.pk for e in entries]}, follow=True)
    assert response.status_code == 200
    return [str(message) for message in response.context["messages"]]


def _reasons(entry: Entry) -> list[str | None]:
    return list(entry.history.order_by("history_id").values_list("history_change_reason", flat=True))


def _form(entry: Entry, **values: Any) -> dict[str, Any]:
    data = {"bot": entry.bot_id, "kind": entry.kind, "title": entry.title, "heading_path": entry.heading_path,
            "text": entry.text, "url": entry.url, "weight": str(entry.weight), "source": entry.source_id or "",
            "active": "on" if entry.active else "", "review_needed": "on" if entry.review_needed else ""}
    data.update(values)
    return {name: value for name, value in data.items() if value != ""}


def test_switching_entries_off_and_on_keeps_the_lexicon_and_writes_versions(client, owner, bot, shelf):
    client.force_login(owner)
    delivery, payment, returns = shelf["delivery"], shelf["payment"], shelf["returns"]
    assert "курьер" in lexicon_stored(bot_id=bot.pk)

    messages = _act(client, "deactivate", [delivery, payment])

    assert "Изменено записей: 2" in messages
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)
    stored = lexicon_stored(bot_id=bot.pk)
    assert "курьер" not in stored and "карт" not in stored and stored[""] == 1
    for entry in (delivery, payment):
        entry.refresh_from_db()
        assert not entry.active
        assert _reasons(entry) == [None, ADMIN_REASON]

    messages = _act(client, "activate", [delivery, payment, returns])

    assert "Изменено записей: 2" in messages
    assert "Уже были такими, не изменены: 1" in messages  # returns was on already: no version for it
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)
    assert lexicon_stored(bot_id=bot.pk)["курьер"] == 1
    delivery.refresh_from_db()
    assert delivery.active and delivery.embedding_model  # searchable by meaning at once, as entry_edit does
    assert _reasons(delivery) == [None, ADMIN_REASON, ADMIN_REASON]
    assert _reasons(returns) == [None]


def test_another_bots_entries_in_the_same_post_are_untouched(client, owner, bot, other_bot, shelf):
    client.force_login(owner)
    theirs = shelf["theirs"]
    theirs_lexicon = lexicon_stored(bot_id=other_bot.pk)
    Entry.objects.filter(pk__in=[theirs.pk, shelf["delivery"].pk]).update(review_needed=True)

    for action in ("deactivate", "mark_reviewed"):
        messages = _act(client, action, [shelf["delivery"], theirs])
        assert "Изменено записей: 1" in messages

    theirs.refresh_from_db()
    assert theirs.active and theirs.review_needed
    assert _reasons(theirs) == [None]
    assert lexicon_stored(bot_id=other_bot.pk) == theirs_lexicon
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)


def test_an_invalid_legacy_row_is_named_and_the_others_are_changed(client, owner, bot, shelf):
    legacy = Entry.objects.create(bot=bot, kind="qa", title="", text="Ответ без вопроса.")  # a Q/A needs a question
    lexicon_refresh(bot_id=bot.pk)
    client.force_login(owner)

    messages = _act(client, "deactivate", [legacy, shelf["payment"]])

    assert "Изменено записей: 1" in messages
    warning = next(m for m in messages if m.startswith("Не изменены записи с ошибками"))
    assert "«Ответ без вопроса.»" in warning and "нужен вопрос" in warning
    legacy.refresh_from_db()
    shelf["payment"].refresh_from_db()
    assert legacy.active and _reasons(legacy) == [None]
    assert not shelf["payment"].active
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)


def test_marking_entries_reviewed_clears_their_flags_as_versions(client, owner, bot, shelf):
    delivery, payment, returns = shelf["delivery"], shelf["payment"], shelf["returns"]
    for entry in (delivery, payment):
        entry.review_needed = True
        entry.save(update_fields=["review_needed"])
    client.force_login(owner)

    messages = _act(client, "mark_reviewed", [delivery, payment, returns])

    assert "Изменено записей: 2" in messages and "Уже были такими, не изменены: 1" in messages
    for entry in (delivery, payment):
        entry.refresh_from_db()
        assert not entry.review_needed
        assert _reasons(entry)[-1] == ADMIN_REASON
    assert _reasons(returns) == [None]


def test_clearing_review_flags_is_scoped_to_the_bot(bot, other_bot, shelf):
    theirs = shelf["theirs"]
    Entry.objects.filter(pk__in=[theirs.pk, shelf["delivery"].pk]).update(review_needed=True)

    assert entries_review_clear(bot=bot, entry_ids=[theirs.pk, shelf["delivery"].pk], reason="admin") == 1

    assert Entry.objects.get(pk=theirs.pk).review_needed
    assert not Entry.objects.get(pk=shelf["delivery"].pk).review_needed


def test_the_change_form_rewording_and_switching_off_keep_the_lexicon(client, owner, bot, shelf):
    delivery = shelf["delivery"]
    Entry.objects.filter(pk=delivery.pk).update(review_needed=True)
    delivery.refresh_from_db()
    client.force_login(owner)
    url = reverse("admin:knowledge_entry_change", args=[delivery.pk])

    response = client.post(url, _form(delivery, text="Самовывоз из магазина бесплатно.", review_needed=""))

    assert response.status_code == 302, response.content.decode()[:2000]
    stored = lexicon_stored(bot_id=bot.pk)
    assert stored == lexicon_fresh(bot_id=bot.pk)
    assert "самовывоз" in stored and "курьер" not in stored
    delivery.refresh_from_db()
    assert delivery.embedding_model and not delivery.review_needed
    assert _reasons(delivery)[-1] == ADMIN_REASON

    response = client.post(url, _form(delivery, active=""))

    assert response.status_code == 302
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)
    assert "самовывоз" not in lexicon_stored(bot_id=bot.pk)
    delivery.refresh_from_db()
    assert not delivery.active

    response = client.post(url, _form(delivery, active="on"))

    assert response.status_code == 302
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)
    assert lexicon_stored(bot_id=bot.pk)["самовывоз"] == 1


def test_an_entry_added_in_the_admin_is_embedded_and_counted_in(client, owner, bot, shelf):
    client.force_login(owner)
    data = {"bot": bot.pk, "kind": "chunk", "title": "Гарантия", "heading_path": "",
            "text": "Гарантия на технику два года.", "url": "", "weight": "0.5", "active": "on"}

    response = client.post(reverse("admin:knowledge_entry_add"), data)

    assert response.status_code == 302, response.content.decode()[:2000]
    entry = Entry.objects.get(bot=bot, title="Гарантия")
    assert entry.embedding_model
    assert _reasons(entry) == [ADMIN_REASON]
    assert lexicon_stored(bot_id=bot.pk) == lexicon_fresh(bot_id=bot.pk)
    assert lexicon_stored(bot_id=bot.pk)["гарант"] == 1


def test_the_change_form_refuses_what_the_services_refuse(client, owner, bot, shelf):
    returns = shelf["returns"]
    before = lexicon_stored(bot_id=bot.pk)
    client.force_login(owner)

    response = client.post(reverse("admin:knowledge_entry_change", args=[returns.pk]), _form(returns, title=""))

    assert response.status_code == 200
    assert "нужен вопрос" in response.content.decode()
    returns.refresh_from_db()
    assert returns.title == "Можно ли вернуть товар?" and _reasons(returns) == [None]
    assert lexicon_stored(bot_id=bot.pk) == before


def test_a_question_another_pair_asks_is_refused_at_its_field(client, owner, bot):
    source = Source.objects.create(bot=bot, kind="manual", title="Пары")
    first, second = (
        Entry.objects.create(bot=bot, source=source, kind="qa", key=question_key(q), title=q, text="Ответ.")
        for q in ("Сколько стоит доставка?", "Как оплатить?")
    )
    client.force_login(owner)

    response = client.post(reverse("admin:knowledge_entry_change", args=[second.pk]),
                           _form(second, title="Сколько стоит доставка"))

    assert response.status_code == 200
    assert f"запись №{first.pk}" in response.content.decode()
    second.refresh_from_db()
    assert second.title == "Как оплатить?"

    response = client.post(reverse("admin:knowledge_entry_change", args=[second.pk]),
                           _form(second, title="Как оплатить заказ?"))

    assert response.status_code == 302
    second.refresh_from_db()
    assert second.key == question_key("Как оплатить заказ?")  # the key follows the question, as entry_edit does


def test_a_culprit_shows_the_correction_beside_it_and_can_be_marked_checked(client, owner, bot, shelf):
    from review.services import correction_apply

    correction_apply(bot=bot, question="Куда привозит курьер?", answer="<b>По Москве</b> до двери.",
                     culprit_ids=[shelf["delivery"].pk])
    client.force_login(owner)
    page = client.get(reverse(CHANGELIST), {"review_needed__exact": "1"}).content.decode()
    assert "«Куда привозит курьер?»" in page and "Доставка" in page
    assert "Оплата</a>" not in page  # not flagged
    assert _act(client, "mark_reviewed", [shelf["delivery"]])
    shelf["delivery"].refresh_from_db()
    assert not shelf["delivery"].review_needed


def test_an_owner_adds_and_deletes_a_corrections_wordings_in_the_admin(client, owner, bot, shelf):
    from knowledge.models import Wording
    from review.services import correction_apply

    correction = correction_apply(bot=bot, question="Куда привозит курьер?", answer="До двери.", culprit_ids=[],
                                  wordings=["Курьер довозит до квартиры?"])
    entry = correction.entry
    extra = Wording.objects.get(entry=entry, origin="owner")
    client.force_login(owner)
    url = reverse("admin:knowledge_entry_change", args=[entry.pk])
    assert "Курьер довозит до квартиры?" in client.get(url).content.decode()
    data = {**_form(entry), "wordings-TOTAL_FORMS": "2", "wordings-INITIAL_FORMS": "1",
            "wordings-MIN_NUM_FORMS": "0", "wordings-MAX_NUM_FORMS": "1000",
            "wordings-0-id": str(extra.pk), "wordings-0-entry": str(entry.pk), "wordings-0-DELETE": "on",
            "wordings-1-entry": str(entry.pk), "wordings-1-text": "Курьер поднимает заказ на этаж?"}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    rows = list(Wording.objects.filter(entry=entry).order_by("pk").values_list("origin", "text", "embedding_model"))
    assert rows == [("question", "Куда привозит курьер?", "e5-small"),
                    ("owner", "Курьер поднимает заказ на этаж?", "e5-small")]
    chunk_page = client.get(reverse("admin:knowledge_entry_change", args=[shelf["delivery"].pk])).content.decode()
    assert "wordings-TOTAL_FORMS" not in chunk_page  # a page chunk has no wordings
