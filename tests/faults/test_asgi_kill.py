"""kill -9 of the ASGI process while an answer streams: the visitor reconnects to a new process and
gets that answer exactly once (one bot row for the question, one `message` frame for it across
both connections). The real app under uvicorn, the real `anthropic` SDK against the fake Messages
API (in this process, so it outlives the killed server), a websocket client that behaves like the
widget (tests/faults/harness.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chat.models import Message
from tests.chat.conftest import DELIVERY_QUESTION, ORIGIN, in_db
from tests.fakes.messages_api import tool_use
from tests.faults.conftest import model_env
from tests.faults.harness import Fleet, Frame, Visitor

pytestmark = pytest.mark.django_db(transaction=True)

ANSWER = "Доставка по Москве — на следующий день, 300 ₽."
DELIVERY_LINK = [{"url": "https://shop.example/delivery", "title": "Доставка"}]


def said(answer: str = ANSWER) -> dict[str, Any]:
    return {"intent": "question", "source": 0, "answer": answer, "product_query": "", "fixed": ""}


def is_bot_message(frame: Frame) -> bool:
    return frame.data["type"] == "message" and frame.data["message"]["role"] == "bot"


async def stored(client_msg_id: str) -> tuple[list[Message], list[Message]]:
    def read() -> tuple[list[Message], list[Message]]:
        questions = list(Message.objects.filter(client_msg_id=client_msg_id, role=Message.Role.VISITOR))
        return questions, list(Message.objects.filter(reply_to__in=questions, role=Message.Role.BOT))

    return await in_db(read)()


@pytest.mark.parametrize("resends", [False, True], ids=["widget", "resending-client"])
async def test_a_visitor_whose_server_was_killed_mid_answer_gets_it_once_from_the_next(
    fleet: Fleet, fake_llm, knowledge, shop, resends: bool
):
    """`widget`: the question was acked, so the widget does not send it again; `resending-client`:
    a client that sends it again after the reconnect all the same (the same client_msg_id)."""
    fake_llm.script(
        tool_use(said(), chunk_chars=2, tokens_per_second=4),  # ~15 s of stream: killed in the middle
        tool_use(said(), chunk_chars=8),  # the new process's run
    )
    env = model_env(fake_llm.url)
    first, second = fleet.uvicorn("asgi-1", env), fleet.uvicorn("asgi-2", env)
    await asyncio.to_thread(first.start)
    visitor = Visitor(f"{first.url}/ws/chat/{shop.public_key}/", "v_killed", ORIGIN)
    await visitor.connect()
    await visitor.send("c1", DELIVERY_QUESTION)
    ack = await visitor.wait_frame(lambda f: f.data["type"] == "ack")
    await visitor.wait_frame(lambda f: f.data["type"] == "delta", timeout=90)

    first.kill()
    await visitor.wait_closed()
    await asyncio.to_thread(second.start)
    mark = len(visitor.frames)
    welcome = await visitor.connect(f"{second.url}/ws/chat/{shop.public_key}/")
    if resends:
        await visitor.send("c1", DELIVERY_QUESTION)
    reply = await visitor.wait_frame(is_bot_message, timeout=120, since=mark)
    await visitor.wait_frame(lambda f: f.data == {"type": "typing", "on": False}, since=visitor.frames.index(reply))
    if resends:
        again = await visitor.wait_frame(lambda f: f.data["type"] == "ack", since=mark)
        assert again.data["message"]["id"] == ack.data["message"]["id"]
    await asyncio.sleep(1.0)  # anything doubled would have come by now
    await visitor.close()

    assert welcome["messages"] == []  # the answer was never stored by the killed process
    assert [f.data["message"]["text"] for f in visitor.bot_messages()] == [ANSWER]
    assert reply.socket == 1 and reply.data["message"]["links"] == DELIVERY_LINK
    questions, answers = await stored("c1")
    assert len(questions) == 1 and [a.text for a in answers] == [ANSWER]
    assert len(fake_llm.requests) == 2  # the killed process's stream and the new process's
    assert second.tracebacks() == 0
