"""The inbox pages as an operator opens them: the queue, one conversation, the leads and their
CSV; another tenant's conversation is a 404 like a missing one; visitor text is escaped."""

import csv
import io

import pytest

from chat import handoff, leads, services
from chat.frames import LeadForm

pytestmark = pytest.mark.django_db


def _waiting(bot, visitor_id, text="Здравствуйте"):
    conversation = services.conversation_open(bot=bot, visitor_id=visitor_id, page_url="https://shop.example/pay/")
    services.conversation_handoff(conversation=conversation, reason="button")
    services.message_receive(conversation=conversation, text=text, client_msg_id=f"{visitor_id}-1")
    return conversation


def test_the_inbox_needs_a_login(client):
    response = client.get("/inbox/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=/inbox/")


def test_waiting_conversations_come_first_with_the_visitors_words_escaped(client, shop, operator):
    _waiting(shop, "v_1", '<img src=x onerror="alert(1)"> где заказ?')
    client.force_login(operator)
    response = client.get("/inbox/")
    page = response.content.decode()
    assert response.status_code == 200
    assert "Ждут оператора" in page and 'id="waiting-count"' in page
    assert "&lt;img src=x" in page and "<img src=x" not in page
    assert "ждёт" in page


def test_an_operator_sees_no_other_tenants_conversation(client, shop, other_bot, operator, other_operator):
    mine = _waiting(shop, "v_mine")
    theirs = _waiting(other_bot, "v_theirs")
    client.force_login(operator)
    assert client.get(f"/inbox/c/{mine.pk}/").status_code == 200
    assert client.get(f"/inbox/c/{theirs.pk}/").status_code == 404
    assert client.get("/inbox/c/987654321/").status_code == 404
    assert f'data-id="{theirs.pk}"' not in client.get("/inbox/").content.decode()


def test_a_conversation_page_shows_the_page_the_holder_and_the_unanswered_question(client, shop, knowledge, operator):
    conversation = services.conversation_open(bot=shop, visitor_id="v_q", page_url="https://shop.example/pay/")
    question = "Есть ли у вас парковка для вертолёта?"
    services.message_receive(conversation=conversation, text=question, client_msg_id="q1")
    handoff.conversation_take(conversation_id=conversation.pk, operator=operator)
    client.force_login(operator)
    page = client.get(f"/inbox/c/{conversation.pk}/").content.decode()
    assert 'href="https://shop.example/pay/"' in page and "Ведёт: Анна" in page
    assert "msg visitor unanswered" in page and "Бот не смог ответить" in page
    assert 'data-action="take" accesskey="t" hidden' in page  # already held: no «Взять»


def test_the_queue_page_costs_the_same_queries_for_many_conversations(client, shop, operator,
                                                                    django_assert_max_num_queries):
    for n in range(30):
        _waiting(shop, f"v_{n}")
    client.force_login(operator)
    with django_assert_max_num_queries(12):
        assert client.get("/inbox/").status_code == 200


def test_the_page_paints_a_screenful_of_the_waiting_and_says_the_rest_are_coming(client, shop, operator, settings):
    """The socket's `queue` frame brings every row (inbox.js); the HTML holds the first 40, so a phone
    paints at once (bench/inbox_phone_paint.py)."""
    from inbox.views import FIRST_PAINT_ROWS

    settings.CHAT_RATE_CONVERSATIONS_IP = 1000
    for n in range(FIRST_PAINT_ROWS + 3):
        _waiting(shop, f"v_many_{n}")
    client.force_login(operator)
    page = client.get("/inbox/").content.decode()
    assert page.count('data-state="waiting_operator"') == FIRST_PAINT_ROWS
    assert "Ещё 3 разговора ждут — список дополнится через секунду." in page
    assert f'id="waiting-count" aria-label="ждут оператора">{FIRST_PAINT_ROWS + 3}<' in page


def test_each_row_links_its_conversation_and_names_the_visitor_and_the_wait(client, shop, operator):
    from django.urls import reverse

    waiting = _waiting(shop, "v_row", "Где мой заказ? " * 10)
    held = _waiting(shop, "v_held")
    handoff.conversation_take(conversation_id=held.pk, operator=operator)
    client.force_login(operator)
    page = client.get("/inbox/").content.decode()
    for conversation in (waiting, held):
        assert f'href="{reverse("inbox:conversation", args=[conversation.pk])}" data-id="{conversation.pk}"' in page
        conversation.refresh_from_db()
        assert conversation.visitor_label in page  # «Посетитель, 2 декабря, 12:04» (core/labels.py)
    assert "Посетитель #" not in page and "v_row" not in page and "v_held" not in page
    assert "ждёт меньше минуты" in page  # under a minute, not «0 минут»: the same words as inbox.js
    assert "Где мой заказ? Где мой заказ? " in page and "Где мой заказ? " * 7 not in page  # the preview is cut
    assert "Демо-магазин · Анна" in page  # the holder beside the bot


def test_leads_are_listed_and_exported_safely(client, shop, operator):
    shop.privacy_policy_url = "https://shop.example/privacy/"
    shop.save(update_fields=["privacy_policy_url"])
    conversation = services.conversation_open(bot=shop, visitor_id="v_lead")
    form = LeadForm(name='=HYPERLINK("http://evil")', phone="+7 916 123-45-67", email="",
                    question="Есть ли доставка?", consent=True)
    leads.lead_submit(conversation=conversation, form=form)
    client.force_login(operator)
    assert "+79161234567" in client.get("/inbox/leads/").content.decode()
    response = client.get("/inbox/leads.csv")
    assert response["Content-Type"].startswith("text/csv")
    text = b"".join(response.streaming_content).decode("utf-8-sig")
    header, row = list(csv.reader(io.StringIO(text)))
    assert header[:4] == ["Дата", "Бот", "Имя", "Телефон"]
    assert row[2].startswith("'=HYPERLINK") and row[3] == "+79161234567"


def test_an_operator_without_bots_gets_a_helpful_empty_page(client, django_user_model):
    lonely = django_user_model.objects.create_user(username="new@shop.example", password="pw-new-12345")
    client.force_login(lonely)
    page = client.get("/inbox/").content.decode()
    assert "Попросите владельца бота добавить вас" in page


def test_a_conversation_page_shows_the_current_page_title_and_the_product_cards(client, shop, operator):
    from chat import visits
    from chat.frames import Page
    from knowledge.catalog import catalog
    from tests.knowledge.catalog.test_product_chain import FEED

    catalog.catalog_import_bytes(bot=shop, data=FEED, name="feed.xml")
    conversation = services.conversation_open(bot=shop, visitor_id="v_cards")
    services.message_receive(conversation=conversation, text="есть пылесос до 15 000?", client_msg_id="c1")
    visits.page_report(bot=shop, visitor_id="v_cards", conversation=conversation,
                       page=Page(None, "https://shop.example/catalog/vacuums/", "Пылесосы <b>скидки</b>", ""))
    client.force_login(operator)
    page = client.get(f"/inbox/c/{conversation.pk}/").content.decode()
    assert 'href="https://shop.example/catalog/vacuums/"' in page and "Пылесосы &lt;b&gt;скидки&lt;/b&gt;" in page
    assert 'href="https://shop.example/catalog/vacuums/v1/"' in page and "Пылесос Вихрь 100</a> — 12990.00 RUB" in page
    assert "Пылесос Смерч компакт" in page and "(нет в наличии)" in page


def test_an_owner_in_the_inbox_has_a_way_back_to_the_dashboard_and_an_operator_has_none(
    client, shop, operator, django_user_model
):
    from bots.services import membership_add

    owner = membership_add(bot=shop, email="boss@shop.example", role="owner", password="pw-boss-1234").membership.user
    client.force_login(owner)
    for path in ("/inbox/", "/inbox/leads/"):
        assert '<a href="/" class="back">Кабинет владельца</a>' in client.get(path).content.decode(), path
    client.force_login(operator)
    page = client.get("/inbox/").content.decode()
    assert "Кабинет владельца" not in page and 'href="/"' not in page  # / would bring an operator back here

def _pin_start(conversation, when):
    """Start the conversation at a known moment (the label names it)."""
    from chat.models import Conversation

    Conversation.objects.filter(pk=conversation.pk).update(created_at=when)
    conversation.refresh_from_db()
    return conversation


@pytest.mark.parametrize(("lang", "label", "telegram"), [
    ("ru", "Посетитель, 2 декабря, 12:04", "Посетитель из Telegram, 2 декабря, 12:05"),
    ("en", "Visitor, Dec 2, 12:04 PM", "Visitor from Telegram, Dec 2, 12:05 PM"),
])
def test_a_visitor_is_named_by_when_they_started_in_the_list_and_the_transcript(client, shop, operator, lang, label,
                                                                              telegram):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from django.utils import timezone

    year = timezone.localtime().year
    widget = _pin_start(_waiting(shop, "v_5c1f42df9a"), datetime(year, 12, 2, 12, 4, tzinfo=ZoneInfo("Europe/Moscow")))
    messenger = services.conversation_open(bot=shop, visitor_id="tg:777001", channel="telegram")
    _pin_start(messenger, datetime(year, 12, 2, 12, 5, tzinfo=ZoneInfo("Europe/Moscow")))
    named = _waiting(shop, "v_named")
    named.visitor_name = "Мария"
    named.save(update_fields=["visitor_name"])
    client.force_login(operator)
    listing = client.get("/inbox/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    assert label in listing and "Мария" in listing
    page = client.get(f"/inbox/c/{widget.pk}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    assert f'<h1 id="chat-visitor">{label}</h1>' in page
    assert f'<h1 id="chat-visitor">{telegram}</h1>' in client.get(
        f"/inbox/c/{messenger.pk}/", HTTP_ACCEPT_LANGUAGE=lang).content.decode()
    for shown in (listing, page):
        assert "v_5c1f42df9a" not in shown and "tg:777001" not in shown
        assert "Посетитель #" not in shown and "Visitor #" not in shown
