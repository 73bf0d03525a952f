"""No input reaches `server_error`: property-based tests (hypothesis) over the frame parsers and the
chat services, and the probe's own frames through the real widget socket. Whatever a client
sends is either accepted or refused with a documented error code; nothing raises anything else.

Cross-cutting: chat/frames.py, chat/leads.py, chat/services.py, inbox/frames.py and the widget socket
together."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chat import frames, leads, services
from chat.exceptions import ChatError
from chat.models import Message
from inbox import frames as operator_frames
from tests.chat.conftest import in_db

WIDGET_CODES = {"bad_frame", "too_large", "invalid_field"}
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5),
    max_leaves=20,
)
TYPES = st.sampled_from(["hello", "message", "rate", "button", "ping", "lead", "open", "take", "typing", "", "x"])
FIELDS = st.sampled_from([
    "visitor_id", "last_seen_id", "page_url", "client_msg_id", "text", "message_id", "rating", "id", "name",
    "phone", "email", "question", "consent", "conversation_id", "on",
])
FRAME_LIKE = st.builds(
    lambda kind, extra: {"type": kind, **extra}, TYPES, st.dictionaries(FIELDS, JSON, max_size=6)
)
# Any code point, lone surrogates included, with the troublesome ones drawn often.
NASTY = st.text(
    alphabet=st.one_of(
        st.sampled_from(["\x00", "\ud800", "\udfff", "\u202e", "\n", " ", "\x1f", "\ufeff", "@", "+", "7", "9"]),
        st.characters(exclude_categories=()),
    ),
    max_size=60,
)
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _parse_or_refuse(parser, raw):
    try:
        parser(raw, None)
    except ChatError as error:
        assert error.code in WIDGET_CODES, error.code
        assert error.message


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=300), JSON.map(json.dumps), FRAME_LIKE.map(json.dumps)))
def test_any_text_is_a_widget_frame_or_a_documented_refusal(raw):
    _parse_or_refuse(frames.parse, raw)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=300), JSON.map(json.dumps), FRAME_LIKE.map(json.dumps)))
def test_any_text_is_an_operator_frame_or_a_documented_refusal(raw):
    _parse_or_refuse(operator_frames.parse, raw)


@pytest.mark.parametrize("raw", ["[" * 8000, '{"a":' * 5000, "{" + "}" * 10])
def test_deep_nesting_is_bad_frame_not_a_crash(raw):
    with pytest.raises(ChatError) as caught:
        frames.parse(raw, None)
    assert caught.value.code in {"bad_frame", "too_large"}


@pytest.mark.django_db
@SLOW
@given(visitor_id=NASTY, text=NASTY, client_msg_id=NASTY)
def test_any_visitor_input_is_stored_or_refused_cleanly(shop, visitor_id, text, client_msg_id):
    try:
        conversation = services.conversation_open(bot=shop, visitor_id=visitor_id, page_url=text)
        message, _created = services.message_accept(conversation=conversation, text=text, client_msg_id=client_msg_id)
    except ChatError as error:
        assert error.code in {"bad_frame", "empty", "too_long"}, error.code
        return
    stored = Message.objects.get(pk=message.pk)
    assert stored.text == message.text and "\x00" not in stored.text


@pytest.mark.django_db
@SLOW
@given(name=NASTY, phone=NASTY, email=NASTY, question=NASTY, consent=st.booleans())
def test_any_contact_form_is_saved_or_refused_by_field(shop, name, phone, email, question, consent):
    shop.privacy_policy_url = "https://shop.example/privacy/"
    shop.save(update_fields=["privacy_policy_url"])
    conversation = services.conversation_open(bot=shop, visitor_id="v_fuzz")
    form = frames.LeadForm(name=name, phone=phone, email=email, question=question, consent=consent)
    try:
        lead, _notes = leads.lead_submit(conversation=conversation, form=form)
    except ChatError as error:
        assert error.code == "invalid_field" and error.field in {"name", "phone", "email", "consent"}  # type: ignore[attr-defined]
        return
    assert lead.pk and (lead.phone or lead.email)


PROBE_FRAMES = [
    "[" * 8000,  # deep nesting
    json.dumps({"type": "message", "client_msg_id": "c1", "text": "\ud800x"}),  # a lone surrogate in the text
    json.dumps({"type": "message", "client_msg_id": "c\x00", "text": "привет"}),  # NUL in the id
    json.dumps({"type": "hello", "visitor_id": "v_ok", "last_seen_id": 10**30}),  # a huge number
    json.dumps({"type": "hello", "visitor_id": "v_ok", "page_url": "https://x/\x00\ud800"}),
    json.dumps({"type": "rate", "message_id": -(10**40), "rating": 1}),
    json.dumps({"type": "lead", "name": "\x00", "phone": "\ud800", "consent": True}),
    json.dumps({"type": "message", "client_msg_id": ["c"], "text": {"a": 1}}),  # wrong types
    json.dumps({"type": "hello", "visitor_id": "v_1\n"}),
]


@pytest.mark.django_db(transaction=True)
async def test_the_probes_frames_get_error_codes_not_server_errors(shop, connect, caplog):
    client = await connect(shop)
    await client.hello("v_probe")
    for raw in PROBE_FRAMES:
        await client.ws.send_to(text_data=raw)
        answer = await client.recv()
        assert answer.get("code") != "server_error", (raw[:40], answer)
        if answer["type"] == "welcome":  # the page address was cleaned, or the huge id: nothing to resume
            continue
        if answer["type"] == "ack":  # the surrogate was dropped from the text: the rest is a message
            assert answer["message"]["text"] == "x"
            while (await client.recv()) != {"type": "typing", "on": False}:
                pass
            continue
        assert answer["type"] == "error", answer
        assert answer["code"] in {"bad_frame", "invalid_field", "not_found", "lead_unavailable"}, answer
    assert "Traceback" not in caplog.text
    stored = await in_db(lambda: list(Message.objects.filter(role="visitor").values_list("client_msg_id", "text")))()
    assert stored == [("c1", "x")]  # only the message whose surrogate could be dropped
