"""Canned replies: the owner writes them in the admin (scoped to their bot; a 50 KB text is
refused in Russian and nothing else is lost), the inbox page offers the conversation's bot's
replies filled in, and a message sent from one counts its use once; another bot's reply id is
refused and nothing is sent."""

import json

import pytest
from django.core.exceptions import ValidationError

from chat import services
from chat.models import Message
from inbox import canned
from inbox.models import CannedReply
from tests.chat.conftest import in_db

ADD_URL = "/admin/inbox/cannedreply/add/"
GREETING = "Здравствуйте, {посетитель}! Меня зовут {оператор}, помогу с доставкой."


def _reply(bot, shortcut="доставка", text=GREETING):
    row = CannedReply(bot=bot, shortcut=shortcut, title="Про доставку", text=text)
    return canned.canned_reply_save(canned_reply=row)


@pytest.mark.django_db
def test_a_50_kb_text_is_refused_with_a_russian_message_and_nothing_is_stored(shop):
    with pytest.raises(ValidationError) as refused:
        _reply(shop, text="д" * 51_200)
    assert "не более 2000 символов" in str(refused.value.message_dict["text"])
    assert not CannedReply.objects.exists()


@pytest.mark.django_db
def test_the_owner_adding_a_50_kb_reply_in_the_admin_keeps_what_they_typed(client, shop, owner):
    client.force_login(owner)
    response = client.post(ADD_URL, {"bot": shop.pk, "shortcut": "длинный", "title": "Очень длинный",
                                      "text": "д" * 51_200})
    page = response.content.decode()
    assert response.status_code == 200 and "не более 2000 символов" in page
    assert 'value="длинный"' in page and 'value="Очень длинный"' in page
    assert not CannedReply.objects.exists()
    response = client.post(ADD_URL, {"bot": shop.pk, "shortcut": "привет", "title": "Привет", "text": GREETING})
    assert response.status_code == 302 and CannedReply.objects.get().bot == shop


@pytest.mark.django_db
def test_an_owner_cannot_write_or_see_a_reply_of_another_bot(client, shop, other_bot, owner):
    theirs = _reply(other_bot, "чужой")
    client.force_login(owner)
    assert client.get(f"/admin/inbox/cannedreply/{theirs.pk}/change/").status_code == 404
    response = client.post(ADD_URL, {"bot": other_bot.pk, "shortcut": "x", "title": "x", "text": "x"})
    assert response.status_code == 200 and CannedReply.objects.filter(bot=shop).count() == 0
    assert "чужой" not in client.get("/admin/inbox/cannedreply/").content.decode()


@pytest.mark.django_db
def test_the_conversation_page_offers_its_bots_replies_filled_in(client, shop, other_bot, operator):
    _reply(shop)
    _reply(other_bot, "чужой", "Чужой шаблон")
    conversation = services.conversation_open(bot=shop, visitor_id="v_c1")
    conversation.visitor_name = "Пётр"
    conversation.save(update_fields=["visitor_name"])
    client.force_login(operator)
    response = client.get(f"/inbox/c/{conversation.pk}/")
    offered = response.context["canned"]
    assert [r["shortcut"] for r in offered] == ["доставка"]
    assert offered[0]["text"] == "Здравствуйте, Пётр! Меня зовут Анна, помогу с доставкой."
    assert 'id="inbox-canned"' in response.content.decode()


@pytest.mark.django_db
def test_another_bots_reply_id_is_not_found(shop, other_bot):
    theirs = _reply(other_bot, "чужой")
    with pytest.raises(canned.NotFound):
        canned.canned_reply_of_bot(bot_id=shop.pk, reply_id=theirs.pk)


@pytest.mark.django_db(transaction=True)
async def test_a_message_sent_from_a_reply_counts_once_and_reaches_the_visitor(
    shop, connect, connect_operator, operator
):
    reply = await in_db(_reply)(shop)
    visitor = await connect(shop)
    welcome = await visitor.hello("v_canned")
    op = await connect_operator(operator)
    await op.hello()
    text = "Здравствуйте, Посетитель! Меня зовут Анна, помогу с доставкой. Срок — 2 дня."
    for _attempt in range(2):  # a resend after a lost ack is the same message, not a second use
        await op.send(type="message", conversation_id=welcome["conversation_id"], client_msg_id="c1",
                      text=text, canned_id=reply.pk)
        assert (await op.until("ack"))["message"]["text"] == text
    heard = [await visitor.recv() for _ in range(3)]  # «на связи», the state, the message
    assert any(f.get("message", {}).get("text") == text for f in heard)
    assert await in_db(lambda: CannedReply.objects.get(pk=reply.pk).uses)() == 1


@pytest.mark.django_db(transaction=True)
async def test_a_forged_reply_id_of_another_bot_is_refused_and_nothing_is_sent(
    shop, other_bot, connect, connect_operator, operator
):
    theirs = await in_db(_reply)(other_bot, "чужой")
    visitor = await connect(shop)
    welcome = await visitor.hello("v_forged")
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="message", conversation_id=welcome["conversation_id"], client_msg_id="f1",
                  text="Привет", canned_id=theirs.pk)
    error = await op.until("error")
    assert error["code"] == "not_found" and error["message"].startswith("Шаблон ответа не найден")
    assert error["client_msg_id"] == "f1"
    assert not await in_db(lambda: Message.objects.filter(role="operator").exists())()
    assert await in_db(lambda: CannedReply.objects.get(pk=theirs.pk).uses)() == 0
    await op.ws.send_to(text_data=json.dumps({"type": "message", "conversation_id": welcome["conversation_id"],
                                              "client_msg_id": "f2", "text": "x", "canned_id": "1"}))
    assert (await op.until("error"))["code"] == "bad_frame"
