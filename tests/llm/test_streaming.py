"""Draft text while the reply streams: only the answer field, only when the chain could show it,
and the final validation still decides."""

from __future__ import annotations

import time

import pytest

from llm.providers import get_provider
from llm.streaming import DraftStream
from llm.structured import complete_with_repair, release_when_sourced, schema_validator
from tests.fakes.messages_api import broken_json, overloaded, text, tool_use
from tests.llm.support import answer_request, valid

pytestmark = pytest.mark.django_db


def stream(bot, request, deltas):
    return get_provider(bot).stream_structured(request, deltas.append)


def test_only_the_answer_text_streams_and_it_adds_up_to_the_final_answer(fake_llm, bot):
    reply = valid(fixed="исправленный вопрос посетителя", product_query="запрос товара")
    fake_llm.script(tool_use(reply, chunk_chars=3))
    deltas: list[str] = []

    result = stream(bot, answer_request(), deltas)

    assert result.data == reply
    assert len(deltas) > 3 and "".join(deltas) == reply["answer"]
    assert fake_llm.requests[0].body["stream"] is True


def test_draft_text_waits_for_an_in_range_source(fake_llm, bot):
    fake_llm.script(tool_use(valid(source=1), chunk_chars=2))
    deltas: list[str] = []

    stream(bot, answer_request(stream_release=release_when_sourced(2)), deltas)

    assert "".join(deltas) == valid()["answer"]


@pytest.mark.parametrize("source", [-1, 5], ids=["sourceless", "out-of-range"])
def test_no_draft_for_an_answer_the_chain_might_not_show(fake_llm, bot, source):
    fake_llm.script(tool_use(valid(source=source)))
    deltas: list[str] = []

    result = stream(bot, answer_request(source_count=10 if source == 5 else 2,
                                        stream_release=release_when_sourced(2)), deltas)

    assert deltas == [] and result.data is not None


def test_a_draft_held_back_until_the_source_arrives_is_released_at_once():
    deltas: list[str] = []
    draft = DraftStream(deltas.append, release=release_when_sourced(2))

    for fragment in ['{"intent": "question", "answer": "Три', ' дня", "sour', 'ce": 1', '2', ', "fixed": ""}']:
        draft.feed(fragment)
        if fragment == '2':
            assert deltas == []  # "source": 1 may still become 12

    assert deltas == []  # 12 is out of range: nothing is ever shown
    draft = DraftStream(deltas.append, release=release_when_sourced(2))
    for fragment in ['{"answer": "Три', ' дня", "source": 1', ', "fixed": ""}']:
        draft.feed(fragment)
    assert deltas == ["Три дня"]


def test_malformed_json_shows_nothing_and_is_reported(fake_llm, bot):
    fake_llm.script(broken_json('{"intent": "question", "source": 0, oops "answer": "Доставка 300 ₽"}'))
    deltas: list[str] = []

    result = stream(bot, answer_request(), deltas)

    assert result.data is None and result.parse_error == "invalid_json" and deltas == []


def test_a_text_reply_streams_nothing(fake_llm, bot):
    fake_llm.script(text("Здравствуйте!"))
    deltas: list[str] = []

    result = stream(bot, answer_request(), deltas)

    assert deltas == [] and result.parse_error == "no_tool_call" and result.raw_text == "Здравствуйте!"


def test_streaming_usage_is_taken_from_the_stream_events(fake_llm, bot):
    fake_llm.script(tool_use(valid(), input_tokens=900, output_tokens=77, cache_read_tokens=500))

    result = stream(bot, answer_request(), [])

    assert (result.input_tokens, result.output_tokens, result.cache_read_tokens) == (900, 77, 500)


def test_an_overload_before_the_first_token_is_retried(fake_llm, bot):
    fake_llm.script(overloaded(), tool_use(valid()))
    deltas: list[str] = []

    result = stream(bot, answer_request(), deltas)

    assert result.ok and result.attempts == 2 and "".join(deltas) == valid()["answer"]


def test_a_stream_cut_after_draft_text_is_not_retried(fake_llm, bot):
    fake_llm.script(tool_use(valid(), chunk_chars=8, cut_after=12), tool_use(valid()))
    deltas: list[str] = []

    result = stream(bot, answer_request(), deltas)

    assert deltas and result.error == "connection" and result.attempts == 1
    assert fake_llm.pending == 1


def test_a_stream_cut_before_any_draft_is_retried(fake_llm, bot):
    fake_llm.script(tool_use(valid(), chunk_chars=8, cut_after=1), tool_use(valid()))

    result = stream(bot, answer_request(), [])

    assert result.ok and result.attempts == 2


def test_a_slow_first_token_times_out_on_the_fast_route(fake_llm, bot, settings):
    settings.LLM_TIMEOUT = 0.3
    fake_llm.script(tool_use(valid(), first_token_latency=3), tool_use(valid()))

    started = time.monotonic()
    result = stream(bot, answer_request(), [])

    assert result.error == "timeout" and result.attempts == 1
    assert time.monotonic() - started < 1.5


def test_a_trickling_stream_is_cut_at_the_total_time_budget(fake_llm, bot, settings):
    settings.LLM_TIMEOUT = 0.5
    fake_llm.script(tool_use(valid(), chunk_chars=1, tokens_per_second=20))

    result = stream(bot, answer_request(), [])

    assert result.error == "timeout"


def test_with_repair_only_the_first_call_streams(fake_llm, bot):
    fake_llm.script(tool_use(valid(intent="chitchat")), tool_use(valid(answer="Исправленный ответ.")))
    deltas: list[str] = []
    request = answer_request()

    result = complete_with_repair(get_provider(bot), request, schema_validator(request.schema),
                                  on_text_delta=deltas.append)

    assert result.data is not None and result.data["answer"] == "Исправленный ответ."
    assert "".join(deltas) == valid()["answer"]  # the draft of the first reply; the chain replaces it
    assert fake_llm.requests[0].body.get("stream") is True and "stream" not in fake_llm.requests[1].body
