import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from chat import services
from chat.exceptions import ConversationClosed, HandoffUnavailable, NotFound, ValidationFailed
from chat.models import Conversation, Message
from tests import fakes
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION
from tests.fakes.messages_api import tool_use

fake_llm = fakes.fake_llm  # the fake Messages API fixture

pytestmark = pytest.mark.django_db


def _open(bot, visitor_id="v_1"):
    return services.conversation_open(bot=bot, visitor_id=visitor_id, ip="198.51.100.7")


def test_a_visitor_keeps_one_open_conversation_per_bot(shop, other_bot):
    first = _open(shop)
    assert _open(shop) == first
    assert first.last_ip == "198.51.100.7"
    assert _open(other_bot) != first
    services.conversation_close(conversation=first)
    assert _open(shop) != first


def test_a_visitor_id_with_strange_characters_is_refused(shop):
    with pytest.raises(ValidationFailed) as caught:
        services.conversation_open(bot=shop, visitor_id="v 1<script>")
    assert caught.value.code == "bad_frame"


def test_a_greeting_is_answered_without_search(shop):
    conversation = _open(shop)
    visitor, reply, created = services.message_receive(conversation=conversation, text="Привет!", client_msg_id="c1")
    assert created and reply is not None
    assert reply.role == Message.Role.BOT and reply.reply_to == visitor
    assert reply.intent == "greeting" and visitor.intent == "greeting"
    assert reply.text == "Здравствуйте! Чем могу помочь?"
    assert set(reply.llm_meta["timings"]) == {"rules", "search", "llm", "total"}


def test_a_resent_message_returns_the_stored_pair_without_answering_again(shop, monkeypatch):
    conversation = _open(shop)
    first = services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")

    def must_not_run(**kwargs):
        raise AssertionError("the chain ran twice for one message")

    monkeypatch.setattr(services.pipeline, "answer", must_not_run)
    again = services.message_receive(conversation=conversation, text="Привет (ещё раз)", client_msg_id="c1")
    assert again == (first[0], first[1], False)
    assert Message.objects.filter(conversation=conversation).count() == 2


def test_the_database_refuses_a_twin_client_msg_id_and_a_second_bot_reply(shop):
    conversation = _open(shop)
    visitor, _reply, _ = services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=conversation, bot=shop, role="visitor", text="x", client_msg_id="c1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=conversation, bot=shop, role="bot", text="другой ответ", reply_to=visitor)


@pytest.mark.django_db(transaction=True)
def test_two_racing_sends_of_one_message_store_one_pair(shop):
    conversation = _open(shop)
    barrier = threading.Barrier(2)
    results = []

    def send():
        barrier.wait()
        try:
            results.append(services.message_receive(conversation=conversation, text="Привет", client_msg_id="race"))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(results) == 2
    assert sorted(created for _v, _r, created in results) == [False, True]
    assert results[0][0].pk == results[1][0].pk
    assert results[0][1] is not None and results[1][1] is not None
    assert results[0][1].pk == results[1][1].pk
    assert Message.objects.filter(conversation=conversation).count() == 2


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("   \n\t ", "empty", "пустое"),
        ("\x00\x07\u200b", "empty", "пустое"),
        ("а" * 2001, "too_long", "Сообщение слишком длинное"),
    ],
)
def test_unacceptable_text_is_refused_with_a_readable_message(shop, text, code, message):
    with pytest.raises(ValidationFailed, match=message) as caught:
        services.message_receive(conversation=_open(shop), text=text, client_msg_id="c1")
    assert caught.value.code == code
    assert not Message.objects.exists()


def test_control_characters_are_stripped_and_newlines_kept(shop):
    visitor, _reply, _ = services.message_receive(
        conversation=_open(shop), text="  Привет\r\nмир\x1b[31m\u202e  ", client_msg_id="c1"
    )
    assert visitor.text == "Привет\nмир[31m"


def test_a_closed_conversation_takes_no_new_messages_but_answers_a_resend(shop):
    conversation = _open(shop)
    visitor, reply, _ = services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")
    services.conversation_close(conversation=conversation, outcome="resolved")
    with pytest.raises(ConversationClosed, match="завершён"):
        services.message_receive(conversation=conversation, text="Ещё вопрос", client_msg_id="c2")
    assert services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1") == (
        visitor, reply, False,
    )


def test_asking_for_an_operator_hands_off_with_a_system_note(shop, owner_on_hand):
    conversation = _open(shop)
    _visitor, reply, _ = services.message_receive(
        conversation=conversation, text="Соедините меня с оператором", client_msg_id="c1"
    )
    assert reply is not None and reply.intent == "operator" and reply.flag("escalation")
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.WAITING_OPERATOR
    note = Message.objects.get(conversation=conversation, role=Message.Role.SYSTEM)
    assert note.text.startswith("Оператор подключится")
    assert note.llm_meta["handoff_reason"] == "visitor_asked"


def test_while_an_operator_is_asked_for_the_bot_stays_silent(shop):
    conversation = _open(shop)
    services.conversation_handoff(conversation=conversation, reason="button")
    visitor, reply, created = services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")
    assert created and reply is None
    assert visitor.flag("to_operator")
    assert not Message.objects.filter(role=Message.Role.BOT).exists()


def test_handoff_is_idempotent_and_refused_when_switched_off(shop):
    conversation = _open(shop)
    assert len(services.conversation_handoff(conversation=conversation, reason="button")) == 1
    assert services.conversation_handoff(conversation=conversation, reason="button") == []
    shop.handoff_enabled = False
    shop.save(update_fields=["handoff_enabled"])
    with pytest.raises(HandoffUnavailable):
        services.conversation_handoff(conversation=_open(shop, "v_2"), reason="button")


def test_rating_reaches_only_bot_messages_of_the_same_conversation(shop, other_bot):
    mine = _open(shop)
    theirs = _open(other_bot, "v_other")
    visitor, reply, _ = services.message_receive(conversation=mine, text="Привет", client_msg_id="c1")
    _v, foreign_reply, _ = services.message_receive(conversation=theirs, text="Привет", client_msg_id="c1")
    assert reply is not None and foreign_reply is not None
    with pytest.raises(NotFound):
        services.message_rate(conversation=mine, message_id=foreign_reply.pk, rating=-1)
    with pytest.raises(NotFound):
        services.message_rate(conversation=mine, message_id=visitor.pk, rating=-1)
    foreign_reply.refresh_from_db()
    assert foreign_reply.rating == 0 and not foreign_reply.flag("friction")

    rated = services.message_rate(conversation=mine, message_id=reply.pk, rating=-1)
    assert rated.rating == -1 and rated.flag("friction")


def test_a_complaint_flags_the_answer_it_complains_about(shop):
    conversation = _open(shop)
    _v, answer, _ = services.message_receive(conversation=conversation, text="Кто вы?", client_msg_id="c1")
    complaint, _r, _ = services.message_receive(conversation=conversation, text="нет, не то", client_msg_id="c2")
    assert complaint.flag("friction")
    assert answer is not None
    answer.refresh_from_db()
    assert answer.flag("friction")


@pytest.mark.parametrize("second", ["Скажите, вы кто такие?", "Вы кто такие, скажите"])
def test_the_same_question_asked_again_is_friction(shop, second):
    conversation = _open(shop)
    services.message_receive(conversation=conversation, text="Вы кто такие?", client_msg_id="c1")
    again, _r, _ = services.message_receive(conversation=conversation, text=second, client_msg_id="c2")
    assert again.flag("friction")


def test_history_passed_to_the_chain_is_the_previous_turns(shop, fake_llm):
    conversation = _open(shop)
    services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")
    question = "А какие у вас есть скидки?"
    fake_llm.script(tool_use({"intent": "question", "source": -1, "answer": "", "product_query": "", "fixed": ""}))

    services.message_receive(conversation=conversation, text=question, client_msg_id="c2")

    [request] = fake_llm.requests  # the greeting was the rules'; the question went to the model
    assert request.body["messages"][:2] == [
        {"role": "user", "content": "Привет"},
        {"role": "assistant", "content": "Здравствуйте! Чем могу помочь?"},
    ]
    last = request.body["messages"][2]
    assert last["role"] == "user" and last["content"].endswith("Сообщение посетителя:\n" + question)


def test_a_failing_chain_still_answers_honestly(shop, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("search is down")

    monkeypatch.setattr(services.pipeline, "answer", broken)
    _v, reply, _ = services.message_receive(conversation=_open(shop), text=DELIVERY_QUESTION, client_msg_id="c1")
    assert reply is not None and reply.flag("unanswered")
    assert reply.buttons == [{"id": "operator", "label": "Позвать оператора"}]
    assert reply.llm_meta["error"] == "RuntimeError"


def test_a_question_is_answered_from_knowledge_with_the_entry_link(knowledge, shop):
    _v, reply, _ = services.message_receive(conversation=_open(shop), text=DELIVERY_QUESTION, client_msg_id="c1")
    assert reply is not None
    assert reply.source_entry_id == knowledge["delivery"].pk
    assert reply.links == [{"url": "https://shop.example/delivery", "title": "Доставка"}]
    assert "300 ₽" in reply.text
    assert reply.confidence is not None and reply.sources[0] == knowledge["delivery"].pk


def test_an_unknown_question_gets_no_answer_and_the_operator_button(knowledge, shop):
    _v, reply, _ = services.message_receive(conversation=_open(shop), text=UNKNOWN_QUESTION, client_msg_id="c1")
    assert reply is not None
    assert reply.text == "К сожалению, точного ответа у меня нет. Пригласить оператора? Он во всём разберётся."
    assert reply.buttons == [{"id": "operator", "label": "Позвать оператора"}]
    assert reply.links == [] and reply.source_entry_id is None
    assert reply.flag("unanswered") and reply.flag("low_confidence")


def test_a_rules_turn_is_one_transaction_of_four_statements(shop, django_assert_num_queries):
    conversation = _open(shop)
    services.message_receive(conversation=conversation, text="Привет", client_msg_id="c0")
    # touch (lock + updated_at, RETURNING), latest messages and a resend in one read, the question,
    # the answer; the other two are the savepoint this test's own transaction puts around atomic().
    with django_assert_num_queries(6) as captured:
        services.message_receive(conversation=conversation, text="Спасибо", client_msg_id="c1")
    statements = [q["sql"].split()[0] for q in captured.captured_queries]
    assert statements == ["SAVEPOINT", "UPDATE", "SELECT", "INSERT", "INSERT", "RELEASE"]


def test_messages_after_gives_what_a_reconnecting_widget_missed(shop):
    conversation = _open(shop)
    visitor, reply, _ = services.message_receive(conversation=conversation, text="Привет", client_msg_id="c1")
    assert services.messages_after(conversation=conversation, last_seen_id=visitor.pk) == [reply]
    assert services.messages_after(conversation=conversation, last_seen_id=None) == [visitor, reply]


def _held_by_another_process(message_id: int, *, alive: bool) -> list[str]:
    """Claim `message_id` as another ASGI process would, with (alive) or without its heartbeat;
    returns the keys to delete afterwards."""
    from chat import claims
    from core import ratelimit
    client = ratelimit.sync_client()
    claim, heartbeat = claims._key(message_id), claims._alive_prefix() + "other-process"
    client.set(claim, "other-process", ex=60)
    if alive:
        client.set(heartbeat, "1", ex=60)
    return [claim, heartbeat]


def test_a_resend_while_the_answer_is_being_made_waits_instead_of_answering_twice(shop, settings, monkeypatch):
    from core import ratelimit

    settings.CHAT_REPLY_WAIT = 1.5
    conversation = _open(shop)
    visitor, created = services.message_accept(conversation=conversation, text="Привет", client_msg_id="c1")
    assert created
    keys = _held_by_another_process(visitor.pk, alive=True)  # a live worker is answering it right now

    def must_not_run(**kwargs):
        raise AssertionError("the chain ran while another worker held the claim")

    monkeypatch.setattr(services.pipeline, "answer", must_not_run)
    try:
        assert services.message_answer(visitor_message=visitor) == []
    finally:
        ratelimit.sync_client().delete(*keys)


def test_the_claim_of_a_worker_that_died_mid_answer_is_taken_over(shop):
    from core import ratelimit

    conversation = _open(shop)
    visitor, _created = services.message_accept(conversation=conversation, text="Привет", client_msg_id="c1")
    keys = _held_by_another_process(visitor.pk, alive=False)  # its process was killed: no heartbeat
    try:
        [reply] = services.message_answer(visitor_message=visitor)
    finally:
        ratelimit.sync_client().delete(*keys)
    assert reply.role == Message.Role.BOT and reply.reply_to == visitor and reply.intent == "greeting"


def test_an_unanswered_question_is_owed_to_a_reconnecting_visitor_until_it_is_answered(shop, settings):
    conversation = _open(shop)
    visitor, _created = services.message_accept(conversation=conversation, text="Привет", client_msg_id="c1")

    assert services.message_unanswered(conversation=conversation, shown=[]) == visitor
    assert services.message_unanswered(conversation=conversation, shown=[visitor]) == visitor
    settings.CHAT_RESUME_SECONDS = 0
    assert services.message_unanswered(conversation=conversation, shown=[visitor]) is None  # too long ago
    settings.CHAT_RESUME_SECONDS = 600
    [reply] = services.message_answer(visitor_message=visitor)
    assert services.message_unanswered(conversation=conversation, shown=[]) is None
    assert services.message_unanswered(conversation=conversation, shown=[visitor, reply]) is None


def test_nothing_is_owed_while_an_operator_is_awaited(shop):
    conversation = _open(shop)
    services.conversation_handoff(conversation=conversation, reason="test")
    services.message_accept(conversation=conversation, text="Алло?", client_msg_id="c1")

    assert services.message_unanswered(conversation=conversation, shown=[]) is None


def test_a_search_and_model_turn_costs_a_fixed_number_of_queries(shop, knowledge, fake_llm,
                                                                   django_assert_num_queries):
    conversation = _open(shop)
    services.message_receive(conversation=conversation, text="Привет", client_msg_id="c0")
    fake_llm.script(tool_use({"intent": "question", "source": 0, "answer": "По Москве — 300 ₽.", "product_query": "",
                              "fixed": ""}))
    # take: touch, latest messages, the question (+ this test's savepoint pair); chain: history,
    # the search, the bot's model settings, the bill, the journal; store: touch, the answer
    # check, the answer (+ savepoint pair); the conversation's first real answer marks it, once.
    with django_assert_num_queries(16) as captured:
        _v, reply, _ = services.message_receive(conversation=conversation, text=DELIVERY_QUESTION, client_msg_id="c1")
    assert reply is not None and reply.llm_meta["route"] == "sourced"
    assert sum(q["sql"].startswith("SAVEPOINT") for q in captured.captured_queries) == 2
    fake_llm.script(tool_use({"intent": "question", "source": 0, "answer": "По Москве — 300 ₽.", "product_query": "",
                              "fixed": ""}))
    assert sum('SET "answered_at"' in q["sql"] for q in captured.captured_queries) == 1
    with CaptureQueriesContext(connection) as later:  # a later answer leaves the mark as it is
        services.message_receive(conversation=conversation, text="А доставка по Москве?", client_msg_id="c2")
    assert not any('SET "answered_at"' in q["sql"] for q in later.captured_queries)
