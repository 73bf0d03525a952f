"""The copilot on the operator socket: `suggest` answers with the passages the bot's own search finds
for the visitor's last question, scoped to the conversation's bot. Real database, Redis channel
layer, embedded knowledge and sessions, on the project's ASGI application."""

import pytest

from answers import pipeline
from chat.models import Message
from tests import fakes
from tests.chat.conftest import DELIVERY_QUESTION, in_db
from tests.fakes.messages_api import tool_use

pytestmark = pytest.mark.django_db(transaction=True)

RETURN_QUESTION = "Можно ли вернуть товар?"


async def _waiting_after(connect, shop, question: str, visitor_id: str = "v_copilot"):
    """A visitor who asked `question`, then pressed «Позвать оператора»."""
    visitor = await connect(shop)
    welcome = await visitor.hello(visitor_id)
    await visitor.ask(question, "q-1")
    await visitor.send(type="button", id="operator")
    while (await visitor.recv()) != {"type": "state", "state": "waiting_operator"}:
        pass
    return visitor, welcome["conversation_id"]


async def test_the_operator_sees_the_passages_the_bot_found_for_the_last_question(
    shop, knowledge, connect, connect_operator, operator
):
    visitor, conversation_id = await _waiting_after(connect, shop, DELIVERY_QUESTION)
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="suggest", conversation_id=conversation_id)
    frame = await op.until("suggestions", timeout=30)
    assert frame["conversation_id"] == conversation_id
    assert frame["question"] == DELIVERY_QUESTION
    passages = frame["passages"]
    assert 1 <= len(passages) <= 5
    assert passages[0]["title"] == "Доставка"
    assert passages[0]["url"] == "https://shop.example/delivery"
    assert "300 ₽" in passages[0]["text"]
    # Exactly what the chain's retrieval would put in the bot's prompt, in its order.
    found = await in_db(lambda: pipeline.knowledge_for(bot=shop, text=DELIVERY_QUESTION))()
    assert [p["entry_id"] for p in passages] == [r.entry_id for r in found]

    # A new question from the visitor: the passages follow it.
    await op.send(type="open", conversation_id=conversation_id)
    await op.until("transcript")
    await visitor.ask(RETURN_QUESTION, "q-2")
    message = await op.until("message", conversation_id=conversation_id)
    assert message["message"]["text"] == RETURN_QUESTION
    await op.send(type="suggest", conversation_id=conversation_id)
    frame = await op.until("suggestions")
    assert frame["question"] == RETURN_QUESTION
    assert frame["passages"][0]["url"] == "https://shop.example/return"
    assert "14 дней" in frame["passages"][0]["text"]
    # Thanks after the question are not a question: the passages stay with the last one.
    await visitor.ask("Спасибо!", "q-3")
    await op.until("message", conversation_id=conversation_id)
    await op.send(type="suggest", conversation_id=conversation_id)
    frame = await op.until("suggestions")
    assert frame["question"] == RETURN_QUESTION
    assert frame["passages"][0]["url"] == "https://shop.example/return"


async def test_another_bots_conversation_is_refused(
    shop, knowledge, other_bot, connect, connect_operator, other_operator
):
    _visitor, conversation_id = await _waiting_after(connect, shop, DELIVERY_QUESTION)
    stranger = await connect_operator(other_operator)
    await stranger.hello()
    await stranger.send(type="suggest", conversation_id=conversation_id)
    error = await stranger.until("error")
    assert error["code"] == "not_found"
    assert error["conversation_id"] == conversation_id
    assert error["message"].startswith("Разговор не найден.")
    assert await stranger.nothing()  # no passage of another bot's knowledge, ever


async def test_a_bot_without_knowledge_has_no_passages(shop, connect, connect_operator, operator):
    _visitor, conversation_id = await _waiting_after(connect, shop, DELIVERY_QUESTION)
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="suggest", conversation_id=conversation_id)
    frame = await op.until("suggestions", timeout=30)
    assert frame["question"] == DELIVERY_QUESTION
    assert frame["passages"] == []


async def test_a_suggest_without_a_conversation_is_a_bad_frame(connect_operator, operator):
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="suggest")
    assert (await op.recv())["code"] == "bad_frame"
    await op.send(type="suggest", conversation_id=999_999_999)
    assert (await op.recv())["code"] == "not_found"


# --- the draft reply, with the real SDK against the fake Messages API --------------------------------

fake_llm = fakes.fake_llm  # the fake Messages API fixture


def said(answer: str = "", *, source: int = -1, intent: str = "question") -> dict:
    return {"intent": intent, "source": source, "answer": answer, "product_query": "", "fixed": ""}


GOOD = "Доставка по Москве — на следующий день, стоимость 300 ₽."


async def test_a_draft_passes_the_bots_checks_and_shows_its_source(
    fake_llm, shop, knowledge, connect, connect_operator, operator
):
    fake_llm.script(tool_use(said(GOOD, source=0)), tool_use(said(GOOD, source=0)))
    _visitor, conversation_id = await _waiting_after(connect, shop, DELIVERY_QUESTION)
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="draft", conversation_id=conversation_id)
    frame = await op.until("draft", timeout=30)
    assert frame["ok"] is True, frame
    assert frame["text"] == GOOD
    assert frame["source"] == {"url": "https://shop.example/delivery", "title": "Доставка"}
    assert frame["question"] == DELIVERY_QUESTION
    assert frame["reason"] == ""
    # Nothing reached the visitor: the conversation has no operator message.
    roles = await in_db(lambda: list(Message.objects.filter(conversation_id=conversation_id).values_list(
        "role", flat=True)))()
    assert "operator" not in roles


async def test_a_draft_with_a_fact_its_source_does_not_give_is_refused_in_words(
    fake_llm, shop, knowledge, connect, connect_operator, operator
):
    fake_llm.script(tool_use(said(GOOD, source=0)), tool_use(said("Доставка по Москве стоит 450 ₽.", source=0)))
    _visitor, conversation_id = await _waiting_after(connect, shop, DELIVERY_QUESTION)
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="draft", conversation_id=conversation_id)
    frame = await op.until("draft", timeout=30)
    assert frame["ok"] is False
    assert frame["text"] == "" and frame["source"] is None
    assert frame["reason"].startswith("Черновик не прошёл проверку фактов")
    assert "450" not in str(frame)


async def test_without_a_model_a_draft_is_refused_and_another_bots_is_not_found(
    shop, knowledge, other_bot, connect, connect_operator, operator, other_operator
):
    _visitor, conversation_id = await _waiting_after(connect, shop, DELIVERY_QUESTION)
    op = await connect_operator(operator)
    await op.hello()
    await op.send(type="draft", conversation_id=conversation_id)
    frame = await op.until("draft", timeout=30)
    assert frame == {
        "type": "draft", "conversation_id": conversation_id, "message_id": frame["message_id"],
        "question": DELIVERY_QUESTION, "ok": False, "text": "", "source": None,
        "reason": "Модель не подключена, черновик составить нельзя.",
    }
    stranger = await connect_operator(other_operator)
    await stranger.hello()
    await stranger.send(type="draft", conversation_id=conversation_id)
    error = await stranger.until("error")
    assert error["code"] == "not_found" and error["conversation_id"] == conversation_id
