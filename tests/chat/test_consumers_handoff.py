"""The visitor's side of operators on the widget socket: the page they are on, the contact form
(frames, consent, errors by field), the form instead of a person outside working hours, and the
owner's own «try» page."""

import datetime as dt

import pytest
from django.test import Client

from bots.services import opening_hours_set
from chat import services
from chat.models import Conversation, Lead
from tests.chat.conftest import in_db

pytestmark = pytest.mark.django_db(transaction=True)
POLICY = "https://shop.example/privacy/"
LEAD = {"type": "lead", "name": "Мария", "phone": "+7 916 123-45-67", "email": "", "question": "Доставка в Тверь?",
        "consent": True}


def _with_policy(bot):
    bot.privacy_policy_url = POLICY
    bot.save(update_fields=["privacy_policy_url"])
    return bot


def _closed_all_week(bot):
    opening_hours_set(bot=bot, rows=[(day, dt.time(0, 0), dt.time(0, 1)) for day in range(7)])


async def test_hello_keeps_the_page_the_visitor_is_on(shop, connect):
    await in_db(services.conversation_open)(bot=shop, visitor_id="v_page")  # the visitor has written before
    client = await connect(shop)
    await client.send(type="hello", visitor_id="v_page", last_seen_id=None, page_url="https://shop.example/delivery/")
    welcome = await client.recv()
    conversation = await in_db(Conversation.objects.get)(pk=welcome["conversation_id"])
    assert conversation.page_url == "https://shop.example/delivery/"
    await client.send(type="hello", visitor_id="v_page", last_seen_id=None, page_url="javascript:alert(1)")
    await client.recv()
    conversation = await in_db(Conversation.objects.get)(pk=welcome["conversation_id"])
    assert conversation.page_url == "https://shop.example/delivery/"  # not an address: ignored


async def test_a_lead_is_saved_with_consent_and_thanked(shop, connect):
    await in_db(_with_policy)(shop)
    client = await connect(shop)
    welcome = await client.hello("v_lead")
    assert welcome["lead_form"]["policy_url"] == POLICY and "согласие" in welcome["lead_form"]["consent"]
    await client.send(**LEAD)
    saved = await client.recv()
    assert saved["type"] == "lead_saved"
    thanks = await client.recv()
    assert thanks["message"]["text"] == "Спасибо, Мария! Мы свяжемся с вами: +79161234567."
    lead = await in_db(Lead.objects.get)(pk=saved["lead_id"])
    assert lead.phone == "+79161234567" and lead.consent_policy_url == POLICY


@pytest.mark.parametrize(
    ("change", "field"),
    [({"consent": False}, "consent"), ({"phone": "123"}, "phone"), ({"phone": "", "email": "a@"}, "email"),
     ({"name": ""}, "name"), ({"consent": "yes"}, "consent")],
)
async def test_a_bad_lead_names_the_field_and_nothing_is_saved(shop, connect, change, field):
    await in_db(_with_policy)(shop)
    client = await connect(shop)
    await client.hello("v_bad")
    await client.send(**(LEAD | change))
    error = await client.recv()
    assert error["type"] == "error" and error["code"] == "invalid_field" and error["field"] == field
    assert error["message"]
    assert await in_db(Lead.objects.count)() == 0


async def test_a_lead_without_a_policy_to_consent_to_is_refused(shop, connect):
    client = await connect(shop)
    welcome = await client.hello("v_nopolicy")
    assert welcome["lead_form"] is None
    await client.send(**LEAD)
    assert (await client.recv())["code"] == "lead_unavailable"


async def test_leads_are_rate_limited(shop, connect, settings):
    settings.CHAT_RATE_LEADS_VISITOR = 2
    await in_db(_with_policy)(shop)
    client = await connect(shop)
    await client.hello("v_flood")
    for _ in range(2):
        await client.send(**LEAD)
        assert (await client.recv())["type"] == "lead_saved"
        await client.recv()  # the thank-you note
    await client.send(**LEAD)
    error = await client.recv()
    assert error["code"] == "rate_limited" and error["retry_after"] >= 1
    assert await in_db(Lead.objects.count)() == 2


async def test_outside_working_hours_the_button_offers_the_contact_form(shop, connect):
    await in_db(_with_policy)(shop)
    await in_db(_closed_all_week)(shop)
    client = await connect(shop)
    await client.hello("v_night")
    await client.send(type="button", id="operator")
    note = (await client.recv())["message"]
    assert note["text"].startswith("Сейчас операторы не работают") and "Оставьте контакт" in note["text"]
    assert note["buttons"] == [{"id": "lead", "label": "Оставить контакт"}]
    assert await client.ws.receive_nothing(timeout=0.5)  # no state change: nobody would come
    conversation = await in_db(Conversation.objects.get)(visitor_id="v_night")
    assert conversation.state == "bot"


async def test_outside_working_hours_asking_for_a_person_in_words_gets_the_form(shop, connect):
    await in_db(_with_policy)(shop)
    await in_db(_closed_all_week)(shop)
    client = await connect(shop)
    await client.hello("v_words")
    frames = await client.ask("Соедините меня с оператором", "c1")
    [reply] = [f["message"] for f in frames if f["type"] == "message"]
    assert "не работают" in reply["text"] and reply["buttons"][0]["id"] == "lead"
    assert not any(f["type"] == "state" for f in frames)


async def test_the_owners_try_page_on_this_server_may_open_the_widget(shop, connect, owner, other_owner):
    def cookie(user):
        client = Client()
        client.force_login(user)
        return client.cookies["sessionid"].value

    from channels.testing import WebsocketCommunicator

    from assistant.asgi import application

    async def open_from_here(user):
        headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
        if user is not None:
            headers.append((b"cookie", f"sessionid={await in_db(cookie)(user)}".encode()))
        socket = WebsocketCommunicator(application, f"/ws/chat/{shop.public_key}/", headers=headers)
        await socket.connect(timeout=10)
        try:
            await socket.send_json_to({"type": "hello", "visitor_id": "v_try", "last_seen_id": None})
            return (await socket.receive_json_from(timeout=10))["type"]
        finally:
            await socket.disconnect()

    assert await open_from_here(owner) == "welcome"
    assert await open_from_here(other_owner) == "error"  # signed in, but not a member of this bot
    assert await open_from_here(None) == "error"
