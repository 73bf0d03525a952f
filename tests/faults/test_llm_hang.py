"""A model that hangs past its timeout: the visitor still gets the retrieval answer, and the call is
cut at its deadline instead of waiting for a server that keeps the connection busy. The real
`anthropic` SDK (and httpx for the OpenAI-compatible provider) against the fake Messages API.

Answer times against CHAT_LLM_TIMEOUT are measured by `bench/faults.py`; these tests check what
the visitor gets and that the hanging reply was abandoned. A server that drips bytes never trips a
per-read timeout: without the deadline a dripped body is read to its end and shown, and a dripped
stream is read until its next whole event (over 100 bytes, 10 s later). `dripped` counts what
was sent before the client hung up: a bound with several times the deadline as slack."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from answers import pipeline
from tests.chat.conftest import DELIVERY_QUESTION
from tests.fakes.messages_api import Reply, tool_use

pytestmark = pytest.mark.django_db

ANSWER = "Доставка по Москве — на следующий день, 300 ₽."
DELIVERY_LINK = [{"url": "https://shop.example/delivery", "title": "Доставка"}]
TIMEOUT = 1.0
DRIP = 0.1  # seconds between dripped bytes
# Fewer bytes than the smallest stream event, and 5 s of drip: the deadline (1 s) cut the reply.
DRIPPED_AT_MOST = 50


@pytest.fixture(autouse=True, scope="module")
def warmed_up() -> None:
    """The deadline runs from the turn's start: the first turn of a process (the model SDK's import and
    the embedding model, ~2.5 s here) would otherwise use up this file's 1 s before the model is
    asked, when the file runs first or alone. A serving process does it as it starts, as here."""
    from assistant.startup import warm_up

    warm_up().join()


def said(answer: str = ANSWER, *, source: int = 0) -> dict[str, Any]:
    return {"intent": "question", "source": source, "answer": answer, "product_query": "", "fixed": ""}


def events_before_the_answer_shows(chunk_chars: int = 4) -> int:
    """Stream events (message_start, content_block_start, deltas) sent whole before the drip
    starts: enough for the draft to show the answer's first words."""
    raw = json.dumps(said(), ensure_ascii=False)
    shown = raw.index(ANSWER) + 12
    return 2 + math.ceil(shown / chunk_chars)


def ask(bot: Any, *, stream: bool) -> tuple[pipeline.Reply, list[str]]:
    deltas: list[str] = []
    reply = pipeline.answer(bot=bot, text=DELIVERY_QUESTION, history=[], on_delta=deltas.append if stream else None)
    return reply, deltas


def assert_retrieval(reply: pipeline.Reply) -> None:
    assert reply.llm_meta["route"] == "retrieval" and reply.llm_meta["error"] == "timeout"
    assert reply.links == DELIVERY_LINK and "300" in reply.text


HANGS: dict[str, Reply] = {
    "drips the rest of the reply one byte at a time once the answer shows": tool_use(
        said(), chunk_chars=4, drip_after=events_before_the_answer_shows(), drip_interval=DRIP),
    "keeps the stream busy with ping events and never answers": tool_use(said(), pings=300, ping_interval=0.2),
    "trickles tokens just under the read timeout apart": tool_use(said(), chunk_chars=4, tokens_per_second=2.0),
}


@pytest.mark.parametrize("hang", list(HANGS), ids=["drip", "pings", "trickle"])
def test_a_stream_that_never_ends_gives_way_to_retrieval_at_the_deadline(fake_llm, knowledge, shop, settings, hang):
    settings.CHAT_LLM_TIMEOUT = TIMEOUT
    fake_llm.script(HANGS[hang])

    reply, _deltas = ask(shop, stream=True)

    assert_retrieval(reply)
    assert len(fake_llm.requests) == 1 and fake_llm.wait_aborted() == 1  # cut off mid-reply, not tried again
    assert fake_llm.dripped < DRIPPED_AT_MOST


def test_the_draft_shown_before_the_hang_is_replaced_by_the_retrieval_answer(fake_llm, knowledge, shop, settings):
    settings.CHAT_LLM_TIMEOUT = TIMEOUT
    fake_llm.script(HANGS["drips the rest of the reply one byte at a time once the answer shows"])

    reply, deltas = ask(shop, stream=True)

    assert deltas and all(ANSWER.startswith(delta) and delta != ANSWER for delta in deltas)
    assert_retrieval(reply)


def test_a_model_silent_after_its_first_event_gives_way_to_retrieval(fake_llm, knowledge, shop, settings):
    settings.CHAT_LLM_TIMEOUT = TIMEOUT
    fake_llm.script(tool_use(said(), first_token_latency=30))

    reply, _deltas = ask(shop, stream=True)

    assert_retrieval(reply)
    assert len(fake_llm.requests) == 1


def test_a_reply_body_dripping_without_streaming_gives_way_to_retrieval(fake_llm, knowledge, shop, settings):
    settings.CHAT_LLM_TIMEOUT = TIMEOUT
    fake_llm.script(tool_use(said(), drip_after=40, drip_interval=DRIP))

    reply, _deltas = ask(shop, stream=False)

    assert_retrieval(reply)
    assert fake_llm.wait_aborted() == 1


def test_a_form_repair_gets_only_what_is_left_of_the_turn(fake_llm, knowledge, shop, settings):
    """A broken form at once, then a repair that drips: the repair is cut at the turn's deadline,
    not given a whole timeout of its own."""
    settings.CHAT_LLM_TIMEOUT = TIMEOUT
    fake_llm.script(tool_use({"intent": "question"}), tool_use(said(), drip_after=40, drip_interval=DRIP))

    reply, _deltas = ask(shop, stream=True)

    assert_retrieval(reply)
    assert len(fake_llm.requests) == 2 and fake_llm.wait_aborted() == 1


def test_the_openai_compatible_provider_is_cut_at_the_deadline_too(fake_llm, knowledge, shop, settings):
    settings.LLM_PROVIDER = "openai"
    settings.CHAT_LLM_TIMEOUT = TIMEOUT
    fake_llm.script(tool_use(said(), chunk_chars=4, drip_after=events_before_the_answer_shows() - 1,
                             drip_interval=DRIP))

    reply, _deltas = ask(shop, stream=True)

    assert_retrieval(reply)
    assert fake_llm.wait_aborted() == 1 and fake_llm.dripped < DRIPPED_AT_MOST
