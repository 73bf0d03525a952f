"""The answer form, its validator and the one form repair (real SDK, fake Messages API)."""

from __future__ import annotations

import pytest

from llm.models import RunEvent, Usage
from llm.providers import get_provider
from llm.structured import answer_schema, complete_with_repair, schema_validator, validate
from tests.fakes.messages_api import broken_json, server_error, text, tool_use
from tests.llm.support import VALID, answer_request, valid

SCHEMA = answer_schema(2)


def check(data):
    return validate(data, SCHEMA)


# --- the validator ----------------------------------------------------------------------------------


def test_a_complete_answer_has_no_violations():
    assert check(VALID) == []


@pytest.mark.parametrize(
    ("data", "violations"),
    [
        ({k: v for k, v in VALID.items() if k != "answer"}, [{"path": "answer", "code": "required"}]),
        (valid(source="0"), [{"path": "source", "code": "type"}]),
        (valid(source=True), [{"path": "source", "code": "type"}]),
        (valid(source=1.0), [{"path": "source", "code": "type"}]),
        (valid(source=2), [{"path": "source", "code": "maximum"}]),
        (valid(source=-2), [{"path": "source", "code": "minimum"}]),
        (valid(intent="chitchat"), [{"path": "intent", "code": "enum"}]),
        (valid(answer=None, fixed=3), [{"path": "answer", "code": "type"}, {"path": "fixed", "code": "type"}]),
        (["not", "an", "object"], [{"path": "$", "code": "type"}]),
    ],
    ids=["missing", "string-source", "bool-source", "float-source", "out-of-range", "below-range", "enum",
         "two-types", "not-object"],
)
def test_violations_name_the_field_and_the_code(data, violations):
    assert check(data) == violations


def test_no_sources_means_only_minus_one_is_a_valid_source():
    assert validate(valid(source=-1), answer_schema(0)) == []
    assert validate(valid(source=0), answer_schema(0)) == [{"path": "source", "code": "maximum"}]


def test_unknown_keys_are_ignored_not_repaired():
    assert check(valid(confidence=0.9)) == []


# --- the repair -------------------------------------------------------------------------------------

needs_db = pytest.mark.django_db


def repair(bot, request=None):
    request = request or answer_request()
    return complete_with_repair(get_provider(bot), request, schema_validator(request.schema))


@needs_db
def test_a_valid_answer_needs_no_repair(fake_llm, bot):
    fake_llm.script(tool_use(valid()))

    result = repair(bot)

    assert result.data == valid() and len(fake_llm.requests) == 1
    assert not RunEvent.objects.filter(kind="form_repair").exists()


@needs_db
def test_plain_text_is_repaired_once_into_a_valid_answer(fake_llm, bot):
    fake_llm.script(text("Доставка стоит 300 ₽."), tool_use(valid()))

    result = repair(bot)

    assert result.ok and result.data == valid()
    assert len(fake_llm.requests) == 2
    event = RunEvent.objects.get(kind="form_repair")
    assert event.ok and event.detail["verdict_before"] == "invalid" and event.detail["verdict_after"] == "valid"
    assert event.detail["violations_before"] == [{"path": "$", "code": "no_tool_call"}]


@needs_db
def test_the_repair_message_lists_paths_and_codes_but_never_the_values(fake_llm, bot):
    bad = valid(source="второй", answer="Доставка стоит 999 ₽ в Казань")
    del bad["fixed"]
    fake_llm.script(tool_use(bad), tool_use(valid()))

    repair(bot)

    repair_call = fake_llm.requests[1]
    note = repair_call.body["messages"][-1]["content"]
    assert "- source: type" in note and "- fixed: required" in note
    for value in ("второй", "999", "Казань"):
        assert value not in repair_call.raw
    assert repair_call.body["messages"][:-1] == fake_llm.requests[0].body["messages"]
    assert repair_call.body["tool_choice"] == {"type": "tool", "name": "answer"}


@needs_db
def test_a_source_out_of_range_is_repaired(fake_llm, bot):
    fake_llm.script(tool_use(valid(source=7)), tool_use(valid(source=1)))

    result = repair(bot)

    assert result.data is not None and result.data["source"] == 1
    assert "- source: maximum" in fake_llm.requests[1].body["messages"][-1]["content"]


@needs_db
def test_still_invalid_after_one_repair_counts_as_no_model(fake_llm, bot):
    fake_llm.script(text("Не знаю"), tool_use(valid(intent="chitchat")), tool_use(valid()))

    result = repair(bot)

    assert (result.data, result.error) == (None, "invalid_form")
    assert len(fake_llm.requests) == 2 and fake_llm.pending == 1
    event = RunEvent.objects.get(kind="form_repair")
    assert not event.ok and event.detail["verdict_after"] == "invalid"
    assert event.detail["violations_after"] == [{"path": "intent", "code": "enum"}]


@needs_db
def test_tool_input_that_is_not_an_object_is_repaired(fake_llm, bot):
    fake_llm.script(broken_json('{"intent": "question", "source": 0, "answer": "Доставка'), tool_use(valid()))

    result = repair(bot)

    assert result.data == valid()
    assert "- $: not_object" in fake_llm.requests[1].body["messages"][-1]["content"]


@needs_db
def test_repair_calls_are_billed_as_their_own_lines(fake_llm, bot):
    fake_llm.script(text("?"), tool_use(valid()))

    repair(bot)

    assert sorted(Usage.objects.values_list("purpose", flat=True)) == ["answer", "answer.form_repair"]
    assert RunEvent.objects.filter(kind="llm_call").count() == 2


@needs_db
def test_a_sourceless_answer_with_a_price_is_valid_form_left_for_the_answer_chain(fake_llm, bot):
    """Form repair checks form only; "numbers without a source" is the chain's last-word check."""
    reply = valid(source=-1, intent="smalltalk", answer="У нас обычно доставка 300 ₽.")
    fake_llm.script(tool_use(reply))

    result = repair(bot)

    assert result.data == reply and len(fake_llm.requests) == 1


@needs_db
def test_the_typo_retry_is_a_second_ordinary_call(fake_llm, bot):
    """The chain's typo retry asks again with `fixed`; each pass plays its own reply and is billed."""
    fake_llm.script(tool_use(valid(source=-1, answer="", fixed="как подключить оплату")),
                    tool_use(valid(source=1, answer="Оплату подключают в кабинете.")))

    first = repair(bot)
    assert first.data is not None and first.data["answer"] == "" and first.data["fixed"] == "как подключить оплату"
    second = repair(bot)

    assert second.data is not None and second.data["source"] == 1
    assert Usage.objects.filter(bot=bot).count() == 2


@needs_db
def test_a_failed_call_is_not_repaired(fake_llm, bot):
    fake_llm.script(server_error(), server_error(), server_error(), tool_use(valid()))

    result = repair(bot)

    assert result.error == "server_error" and fake_llm.pending == 1
    assert not RunEvent.objects.filter(kind="form_repair").exists()


@needs_db
def test_a_repair_call_that_fails_is_journaled_with_its_error(fake_llm, bot, settings):
    settings.LLM_MAX_RETRIES = 0
    fake_llm.script(text("?"), server_error())

    result = repair(bot)

    assert result.error == "server_error" and result.data is None
    assert RunEvent.objects.get(kind="form_repair").detail["verdict_after"] == "server_error"
