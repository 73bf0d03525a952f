"""Why each version of an entry was made, in the reader's language: the reasons are stored as they
always were (Russian forms and codes, read as they are by the REST API), and shown translated on
the admin's history page, rows written before the translation existed included."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils import timezone, translation

from chat.models import Conversation, Message
from knowledge.models import Entry
from knowledge.versions import (
    CORRECTION_ORIGINS,
    NO_REASON,
    REASON_API_KEY,
    REASON_CORRECTION,
    REASON_CORRECTION_UNDO,
    REASON_FORMS,
    REASON_REVERT,
    REASON_REVIEW_ITEM,
    reason_shown,
    reason_text,
    reason_written,
)
from review import services as review_services
from review.models import Correction, ReviewItem
from tests.api.conftest import api_key, client_for  # noqa: F401  (the fixture: a key of the demo bot)

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)

# What the code wrote before the reasons were translated, copied as it was: these rows stay in the
# history tables and must read right. (stored, Russian shown, the numbers and words the English keeps)
OLD_ROWS = [
    ("откат к версии №12", "откат к версии №12", ["12"]),
    ("поправка из очереди проверки №7", "поправка из очереди проверки №7", ["7"]),
    ("поправка (review)", "поправка (очередь проверки)", []),
    ("поправка (gap)", "поправка (пробелы в знаниях)", []),
    ("поправка (command)", "поправка (из командной строки)", []),
    ("поправка (operator)", "поправка (ответ оператора)", []),
    ("отмена поправки №31", "отмена поправки №31", ["31"]),
    ("API, ключ sk_4f2a9c", "API, ключ sk_4f2a9c", ["API", "sk_4f2a9c"]),
    ("API", "API", ["API"]),
    ("dashboard", "в кабинете владельца", []),
]


@pytest.mark.parametrize(("raw", "russian", "kept"), OLD_ROWS, ids=[row[0] for row in OLD_ROWS])
def test_every_stored_form_reads_in_the_readers_language(raw, russian, kept):
    with translation.override("ru"):
        assert reason_shown(raw) == russian
    with translation.override("en"):
        english = reason_shown(raw)
    assert not CYRILLIC.search(english), english
    assert english and all(part in english for part in kept), english


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("raw", [None, ""])
def test_a_version_without_a_reason_shows_a_dash(raw, lang):
    with translation.override(lang):
        assert reason_shown(raw) == NO_REASON == "—"


@pytest.mark.parametrize("raw", [
    "импорт из 1С",  # written by hand or by code that does not know the forms
    "откат к версии №пять",  # a form whose number is not a number
    "откат к версии №12, вручную",  # more than the form
    "Dashboard",  # a code is matched exactly
])
def test_a_reason_in_no_known_form_is_shown_as_it_is(raw):
    for lang in ("ru", "en"):
        with translation.override(lang):
            assert reason_shown(raw) == raw


def test_a_correction_of_an_origin_not_known_here_keeps_its_code():
    with translation.override("ru"):
        assert reason_shown("поправка (import)") == "поправка (import)"
    with translation.override("en"):
        english = reason_shown("поправка (import)")
    assert english.endswith("(import)") and not CYRILLIC.search(english)


@pytest.mark.parametrize(("msgid", "params"), [
    (REASON_REVERT, {"n": 5}),
    (REASON_REVIEW_ITEM, {"n": 801}),
    (REASON_CORRECTION, {"origin": "gap"}),
    (REASON_CORRECTION_UNDO, {"n": 3}),
    (REASON_API_KEY, {"prefix": "sk_77e1"}),
])
def test_what_is_written_is_the_russian_form_and_reads_back_as_it(msgid, params):
    written = reason_written(msgid, **params)
    assert written == msgid % params  # the stored text has not changed: integrations read it as before
    text = reason_text(written)
    assert isinstance(text, dict) and text["msgid"] == msgid
    with translation.override("en"):
        assert reason_shown(written) == reason_shown(msgid % params)


def test_only_a_known_form_is_written():
    with pytest.raises(ValueError):
        reason_written("просто так")
    assert len(reason_written(REASON_API_KEY, prefix="x" * 200)) == 100  # the column's width
    assert set(REASON_FORMS) >= {REASON_REVERT, REASON_CORRECTION}


def test_the_origins_a_reason_names_are_the_corrections_origins():
    """knowledge may not import review: its copy of the origins' values and labels is kept in step here."""
    with translation.override("ru"):
        assert {value: str(label) for value, label in Correction.Origin.choices} == CORRECTION_ORIGINS


# --- the admin's history page of an entry ----------------------------------------------------------


class _Rows(HTMLParser):
    """The cells of the rows of simple_history's `#change-history` table, as text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in_table = self._in_body = self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "change-history") in attrs:
            self._in_table = True
        elif self._in_table and tag == "tbody":
            self._in_body = True
        elif self._in_body and tag == "tr":
            self.rows.append([])
        elif self._in_body and tag == "td":
            self._in_cell = True
            self.rows[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in_cell = False
        elif tag in ("tbody", "table"):
            self._in_body = self._in_table = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.rows[-1][-1] += data


def reasons_on_the_page(html: str) -> list[str]:
    """The «Change reason» column (the one before the last, «Changes»), newest version first."""
    parser = _Rows()
    parser.feed(html)
    return [" ".join(row[-2].split()) for row in parser.rows]


def _queue_item(bot, entry: Entry) -> ReviewItem:
    """A flagged answer that cited `entry`, as the chat's review receiver records it."""
    conversation = Conversation.objects.create(bot=bot, visitor_id="v-reasons")
    question = Message.objects.create(conversation=conversation, bot=bot, role="visitor", text="Самовывоз есть?")
    answer = Message.objects.create(conversation=conversation, bot=bot, role="bot", text=entry.text,
                                    reply_to=question, source_entry_id=entry.pk)
    return ReviewItem.objects.create(bot=bot, message=answer, conversation=conversation, reasons=["friction"],
                                     question=question.text, answer=answer.text, cited_entry_id=entry.pk,
                                     answered_at=timezone.now())


@pytest.fixture
def versioned(bot, owner, client, api_key):  # noqa: F811
    """A Q/A pair with a version of every kind of writer: created through the API, edited in the
    dashboard, flagged by a correction from the review queue, that correction undone, flagged by
    a correction from the `correct` command, reverted through the API; plus one row written by
    code before (a gap's correction, stored as the old f-string wrote it) and one with no reason."""
    from bots.models import ApiKey

    api = client_for(api_key)
    created = api.post("/api/v1/entries/", {"kind": "qa", "title": "Есть ли самовывоз?", "text": "Да, с Тверской, 1."},
                       format="json")
    assert created.status_code == 201, created.json()
    entry = Entry.objects.get(pk=created.json()["id"])
    client.force_login(owner)
    prefix = f"qa{entry.pk}"
    edited = client.post(f"/b/demo/knowledge/qa/{entry.pk}/", {
        "action": "save", f"{prefix}-question": "Есть ли самовывоз?", f"{prefix}-answer": "Да, с Тверской, 7."})
    assert edited.status_code == 302
    item = _queue_item(bot, entry)
    review_services.review_item_decide(item_id=item.pk, bot_ids=[bot.pk], decision="fixed",
                                       text="Да, самовывоз с Тверской, 7, с 10 до 20.", user=owner)
    correction = Correction.objects.get(item=item)
    review_services.review_item_undo(item_id=item.pk, bot_ids=[bot.pk], user=owner)
    review_services.correction_apply(bot=bot, question="Можно забрать заказ самому?", answer="Да, с Тверской, 7.",
                                     culprit_ids=[entry.pk], origin=Correction.Origin.COMMAND)
    dashboard_version = entry.history.get(history_change_reason="dashboard").history_id
    reverted = api.post(f"/api/v1/entries/{entry.pk}/revert/", {"history_id": dashboard_version}, format="json")
    assert reverted.status_code == 200, reverted.json()
    # Two rows as older code left them: a correction from a gap (the f-string of before), an admin action.
    old = Entry.objects.get(pk=entry.pk)
    old._change_reason = "поправка (gap)"  # type: ignore[attr-defined]
    old.save(update_fields=["review_needed", "updated_at"])
    Entry.objects.get(pk=entry.pk).save(update_fields=["updated_at"])  # the admin's actions give no reason
    prefix_of_key = ApiKey.objects.get(bot=bot).prefix
    return entry, {"item": item.pk, "correction": correction.pk, "revert": dashboard_version, "key": prefix_of_key,
                   "api_key": api_key}


def test_the_history_page_shows_every_reason_in_russian(client, versioned):
    entry, ids = versioned
    page = client.get(reverse("admin:knowledge_entry_history", args=[entry.pk]), HTTP_ACCEPT_LANGUAGE="ru")
    assert page.status_code == 200 and page.headers["Content-Language"] == "ru"
    assert reasons_on_the_page(page.content.decode()) == [
        "—",
        "поправка (пробелы в знаниях)",
        f"откат к версии №{ids['revert']}",
        "поправка (из командной строки)",
        f"отмена поправки №{ids['correction']}",
        f"поправка из очереди проверки №{ids['item']}",
        "в кабинете владельца",
        f"API, ключ {ids['key']}",
    ]


def test_the_history_page_shows_no_russian_reason_in_english(client, versioned):
    entry, ids = versioned
    page = client.get(reverse("admin:knowledge_entry_history", args=[entry.pk]), HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200 and page.headers["Content-Language"] == "en"
    reasons = reasons_on_the_page(page.content.decode())
    assert len(reasons) == 8 and reasons[0] == "—"
    assert [reason for reason in reasons if CYRILLIC.search(reason)] == []
    numbers = [str(ids["revert"]), str(ids["correction"]), str(ids["item"])]
    assert [n for n in numbers if not any(n in reason for reason in reasons)] == []
    assert reasons[-1].startswith("API") and ids["key"] in reasons[-1]


def test_the_api_hands_out_the_reasons_as_they_are_stored(versioned):
    entry, ids = versioned
    response = client_for(ids["api_key"]).get(f"/api/v1/entries/{entry.pk}/history/", HTTP_ACCEPT_LANGUAGE="en")
    history = response.json()["results"]
    assert [version["reason"] for version in history] == [
        None,
        "поправка (gap)",
        f"откат к версии №{ids['revert']}",
        "поправка (command)",
        f"отмена поправки №{ids['correction']}",
        f"поправка из очереди проверки №{ids['item']}",
        "dashboard",
        f"API, ключ {ids['key']}",
    ]


# --- the rest of the page: labels and values as a person reads them (knowledge/admin_history.py) ---

HEADER = re.compile(r'<th scope="col">([^<]*)</th>')


def headers(html: str) -> list[str]:
    table = html[html.index('<table id="change-history">'):]
    return HEADER.findall(table[:table.index("</thead>")])


def test_the_history_page_labels_its_columns_and_shows_values_and_changes_as_the_changelist_does(client, versioned):
    entry, _ids = versioned
    url = reverse("admin:knowledge_entry_history", args=[entry.pk])
    html = client.get(url, HTTP_ACCEPT_LANGUAGE="ru").content.decode()
    assert headers(html) == ["Версия", "Вид", "Вес", "Активна", "Когда", "Действие", "Кто", "Причина",
                             "Что изменилось"]
    parser = _Rows()
    parser.feed(html)
    rows = [[" ".join(cell.split()) for cell in row] for row in parser.rows]
    weight = f"{entry.weight:.1f}".replace(".", ",")  # in the reader's locale: a decimal comma
    assert {row[1] for row in rows} == {"вопрос-ответ"} and {row[2] for row in rows} == {weight}
    assert 'alt="True"' in html and "True" not in " ".join(" ".join(row) for row in rows)  # booleans are icons
    assert rows[-1][6] == "система" and any(row[6] == "owner@shop.example" for row in rows)
    changes = [row[-1] for row in rows]
    assert changes[-1] == "—"  # the first version changed nothing
    assert any("Текст или ответ: Да, с Тверской, 1. → Да, с Тверской, 7." in change for change in changes)
    assert any("Нужна проверка: нет → да" in change for change in changes)
    assert not any("Хэш" in change or "Ключ" in change for change in changes)  # bookkeeping is left out


def test_the_history_page_in_english_has_no_russian_in_its_chrome(client, versioned):
    entry, _ids = versioned
    url = reverse("admin:knowledge_entry_history", args=[entry.pk])
    html = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    shown = headers(html)
    assert shown[:4] == ["Version", "Kind", "Weight", "Active"] and not [h for h in shown if CYRILLIC.search(h)]
    parser = _Rows()
    parser.feed(html)
    assert {" ".join(row[1].split()) for row in parser.rows} == {"question and answer"}
    assert "Needs review: no → yes" in " ".join(" ".join(row[-1].split()) for row in parser.rows)
