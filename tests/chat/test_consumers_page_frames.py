"""The widget's `page` frame over a real websocket: where the visitor is reaches the open
conversation (and the operators' feed), an owner's rule answers with `invite`, a shown invitation
is recorded; bad `page` frames get a readable bad_frame and change nothing."""

from __future__ import annotations

import pytest

from behavior.models import InvitationRule, InvitationShow
from chat.models import Conversation
from tests.chat.conftest import in_db

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = {"type": "page", "url": "https://shop.example/catalog/vacuums/", "title": "Пылесосы — ТехноДом",
        "referrer": "https://search.example/?q=pylesos"}


@in_db
def _rule(bot, **fields):
    return InvitationRule.objects.create(bot=bot, name="Пылесосы", text="Подобрать пылесос до 15 000 ₽?",
                                         url_pattern="/catalog/*", **fields)


async def test_a_page_before_hello_gets_the_invitation_and_its_show_is_recorded(shop, connect):
    rule = await _rule(shop, seconds_on_page=5)
    client = await connect(shop)
    await client.send(**PAGE, visitor_id="v_page1")
    invite = await client.recv()
    assert invite == {"type": "invite", "rule": rule.pk, "text": "Подобрать пылесос до 15 000 ₽?",
                      "after_seconds": 5, "on_leave": False}
    await client.send(type="invite_shown", rule=rule.pk)
    await client.send(type="ping")
    assert (await client.recv())["type"] == "pong"
    show = await in_db(lambda: InvitationShow.objects.get())()
    assert (show.visitor_id, show.rule_id, show.page_url) == ("v_page1", rule.pk, PAGE["url"])
    # shown once: the next page of the same visitor gets no invitation
    await client.send(**PAGE, visitor_id="v_page1")
    assert await client.ws.receive_nothing(timeout=0.5)
    assert await in_db(lambda: Conversation.objects.count())() == 0  # a page view opens no conversation


async def test_a_page_outside_the_pattern_gets_nothing(shop, connect):
    await _rule(shop)
    client = await connect(shop)
    await client.send(**{**PAGE, "url": "https://shop.example/delivery/"}, visitor_id="v_page2")
    assert await client.ws.receive_nothing(timeout=0.5)


async def test_the_open_conversation_gets_the_current_page_and_no_invitation(shop, connect):
    await _rule(shop)
    client = await connect(shop)
    await client.hello("v_page3")
    frames = await client.ask("Здравствуйте", "c1")
    assert frames[0]["type"] == "ack"
    await client.send(**PAGE)
    assert await client.ws.receive_nothing(timeout=0.5)  # never over an open conversation
    conversation = await in_db(lambda: Conversation.objects.get(visitor_id="v_page3"))()
    assert (conversation.page_url, conversation.page_title) == (PAGE["url"], "Пылесосы — ТехноДом")


async def test_after_a_hello_that_resumed_nothing_pages_count_and_the_first_message_keeps_the_page(shop, connect):
    client = await connect(shop)
    await client.hello("v_page5", started=False)
    await client.send(**PAGE)  # no visitor id: the hello named the visitor
    assert await client.ws.receive_nothing(timeout=0.5)  # no «hello_required», no invitation (no rule)
    assert await in_db(lambda: Conversation.objects.count())() == 0
    assert (await client.ask("Здравствуйте", "c1"))[0]["type"] == "ack"
    conversation = await in_db(lambda: Conversation.objects.get(visitor_id="v_page5"))()
    assert (conversation.page_url, conversation.page_title) == (PAGE["url"], "Пылесосы — ТехноДом")


async def test_invite_shown_of_another_bots_rule_records_nothing(shop, other_bot, connect):
    theirs = await _rule(other_bot)
    client = await connect(shop)
    await client.send(**PAGE, visitor_id="v_page4")
    await client.send(type="invite_shown", rule=theirs.pk)
    await client.send(type="ping")
    assert (await client.recv())["type"] == "pong"
    assert not await in_db(lambda: InvitationShow.objects.exists())()


@pytest.mark.parametrize(("frame", "field"), [
    ({"url": "https://shop.example/" + "a" * 2100}, "url"),
    ({"url": "javascript:alert(1)"}, "url"),
    ({"url": "ftp://shop.example/"}, "url"),
    ({"url": 42}, "url"),
    ({"url": None}, "url"),
    ({"url": "https://shop.example/a b"}, "url"),
    ({"title": ["x"]}, "title"),
    ({"title": "x" * 301}, "title"),
    ({"referrer": {"a": 1}}, "referrer"),
    ({"referrer": "data:text/html,hi"}, "referrer"),
    ({"visitor_id": 7}, "visitor_id"),
])
async def test_bad_page_frames_are_refused_readably(shop, connect, frame, field):
    client = await connect(shop)
    await client.send(**{**PAGE, "visitor_id": "v_bad", **frame})
    error = await client.recv()
    assert error["type"] == "error" and error["code"] == "bad_frame"
    assert f"«{field}»" in error["message"]


async def test_a_page_without_a_visitor_before_hello_asks_for_hello(shop, connect):
    client = await connect(shop)
    await client.send(**PAGE)
    error = await client.recv()
    assert error["code"] == "hello_required"


async def test_a_bad_visitor_id_in_a_page_is_refused(shop, connect):
    client = await connect(shop)
    await client.send(**PAGE, visitor_id="bad id with spaces")
    assert (await client.recv())["code"] == "bad_frame"
